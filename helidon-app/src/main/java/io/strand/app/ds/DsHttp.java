package io.strand.app.ds;

import io.helidon.http.Method;
import io.helidon.webserver.http.Handler;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.auth.Scope;
import io.strand.app.http.HttpIo;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.app.stores.Placement;

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
 * head. Offsets map to seqs only in {@link DsOffset}; expired streams are swept by {@link DsStates}.
 *
 * <p>A write is a {@link DsCall} applied to the workspace's {@link DsState}: at once on a single
 * node; on a cluster node proposed to the workspace's shard, applied by every replica in log order,
 * and answered with the leader replica's {@link DsAnswer}. A cluster node reads its own replica after
 * the read barrier, so a read sees every write acknowledged before it, on whichever node.
 */
public final class DsHttp implements Handler {
    /** Bodies above the limit but below this are read and discarded before the 413, so clients see the answer. */
    public static final long DRAIN_LIMIT = DsRequests.DRAIN_LIMIT;

    private final DsStates states;
    private final Placement placement;
    private final DsRequests requests;
    private final DsControlHttp control;

    public DsHttp(DsStates states, Placement placement, long maxBodyBytes) {
        this.states = states;
        this.placement = placement;
        this.requests = new DsRequests(maxBodyBytes);
        this.control = new DsControlHttp(states.subscriptions(), states::underRoot, requests, placement::awaitCaughtUp);
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
                boolean caughtUp = placement.awaitCaughtUp(t.ws());
                DsState state = states.of(t.ws());
                if (caughtUp && placement.clustered() && state.streams.slides(t)) {
                    // the read extends the stream's sliding TTL on every replica before it is served (a
                    // majority lost: the read is served, unextended); an expired stream is then gone
                    write(DsCall.touch(t.ws(), t.path()));
                }
                state.reader.get(req, res, t);
            } else if (m == Method.HEAD) {
                HttpIo.require(req, t.ws(), Scope.READ);
                placement.awaitCaughtUp(t.ws());
                states.of(t.ws()).lifecycle.head(t).writeTo(res);
            } else if (t.path().startsWith(DsStreams.NATIVE_PREFIX)) {
                throw new StrandException(ErrorCode.METHOD_NOT_ALLOWED, "native logs are read-only through Durable Streams; "
                        + "append over /v1 or the socket");
            } else if (m == Method.PUT || m == Method.POST || m == Method.DELETE) {
                HttpIo.require(req, t.ws(), Scope.RW);
                write(DsCall.of(req, t, requests.body(req))).writeTo(res);
            } else {
                throw new StrandException(ErrorCode.METHOD_NOT_ALLOWED, "Durable Streams has no " + m.text());
            }
        } catch (RuntimeException e) {
            if (!res.isSent()) {
                HttpIo.error(res, e);
            }
        }
    }

    /** Applies a write here (a single node), or through the workspace's shard (a cluster node; this thread waits). */
    private DsAnswer write(DsCall call) {
        if (!placement.clustered()) {
            return states.of(call.ws()).apply(call, System.currentTimeMillis());
        }
        return DsAnswer.read(placement.writes().dsWrite(call.ws(), call.bytes()).join());
    }
}
