package io.strand.app.ds;

import io.helidon.http.Method;
import io.helidon.webserver.http.Handler;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.auth.Scope;
import io.strand.app.http.HttpIo;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.logtier.LogStore;
import java.time.Duration;

/**
 * Runs on Helidon's request threads (virtual; long-polls and SSE block their own thread only) and
 * holds no state apart from the parts it wires: the Durable Streams protocol (SPEC §14) at
 * {@code /ds/{ws}/{path…}} over Strand logs. It checks the token's scope and routes each method to
 * the class that serves it:
 * <ul>
 * <li>PUT, HEAD, DELETE: {@link DsLifecycle} (forks: {@link DsForks});</li>
 * <li>POST: {@link DsAppender} (idempotent producers: {@link DsProducers}; log batches: {@link DsLogWriter});</li>
 * <li>GET: {@link DsReader} (catch-up, long-poll, SSE);</li>
 * <li>{@code …/__ds/…}: {@link DsControlHttp} over {@link DsSubscriptions}.</li>
 * </ul>
 * Each stream's changes run one at a time under its lock; reads take no lock and see the committed
 * head. Offsets map to seqs only in {@link DsOffset}; expired streams are swept by {@link DsExpiry}.
 */
public final class DsHttp implements Handler {
    /** Bodies above the limit but below this are read and discarded before the 413, so clients see the answer. */
    public static final long DRAIN_LIMIT = DsRequests.DRAIN_LIMIT;

    private final DsSubscriptions subscriptions;
    private final DsStreams streams;
    private final DsAppender appender;
    private final DsLifecycle lifecycle;
    private final DsReader reader;
    private final DsControlHttp control;
    private final DsExpiry expiry;

    public DsHttp(LogStore logs, DsRegistry registry, long maxBodyBytes, Duration longPollTimeout) {
        DsRequests requests = new DsRequests(maxBodyBytes);
        DsLogWriter writer = new DsLogWriter(logs);
        // subscriptions read tails and append wake events through the parts built just below
        this.subscriptions = new DsSubscriptions(this::tailOffset, this::appendWake);
        this.streams = new DsStreams(logs, registry, subscriptions);
        this.appender = new DsAppender(registry, streams, writer, requests, subscriptions);
        this.lifecycle = new DsLifecycle(logs, registry, streams, new DsForks(logs, registry, streams, writer), writer,
                requests, subscriptions);
        this.reader = new DsReader(logs, streams, longPollTimeout.toMillis());
        this.control = new DsControlHttp(subscriptions, streams, requests);
        this.expiry = new DsExpiry(registry, streams);
    }

    /** Stops the expiry sweeper and the subscriptions' timers and webhook client. */
    public void close() {
        expiry.close();
        subscriptions.close();
    }

    private String tailOffset(String ws, String path) {
        return streams.tailOffset(ws, path);
    }

    private boolean appendWake(String ws, String path, byte[] json) {
        return appender.appendWake(ws, path, json);
    }

    @Override
    public void handle(ServerRequest req, ServerResponse res) {
        try {
            if (control.handle(req, res)) {
                return;
            }
            DsTarget t = DsTarget.of(req.path().rawPath());
            Method m = req.prologue().method();
            if (m == Method.GET) {
                HttpIo.require(req, t.ws(), Scope.READ);
                reader.get(req, res, t);
            } else if (m == Method.HEAD) {
                HttpIo.require(req, t.ws(), Scope.READ);
                lifecycle.head(res, t);
            } else if (t.path().startsWith(DsStreams.NATIVE_PREFIX)) {
                throw new StrandException(ErrorCode.METHOD_NOT_ALLOWED, "native logs are read-only through Durable Streams; "
                        + "append over /v1 or the socket");
            } else if (m == Method.PUT) {
                HttpIo.require(req, t.ws(), Scope.RW);
                lifecycle.put(req, res, t);
            } else if (m == Method.POST) {
                HttpIo.require(req, t.ws(), Scope.RW);
                appender.post(req, res, t);
            } else if (m == Method.DELETE) {
                HttpIo.require(req, t.ws(), Scope.RW);
                lifecycle.delete(res, t);
            } else {
                throw new StrandException(ErrorCode.METHOD_NOT_ALLOWED, "Durable Streams has no " + m.text());
            }
        } catch (RuntimeException e) {
            if (!res.isSent()) {
                HttpIo.error(res, e);
            }
        }
    }
}
