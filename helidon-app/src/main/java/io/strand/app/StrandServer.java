package io.strand.app;

import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.observe.ObserveFeature;
import io.helidon.webserver.observe.health.HealthObserver;
import io.helidon.webserver.observe.metrics.MetricsObserver;
import io.helidon.webserver.websocket.WsConfig;
import io.helidon.webserver.websocket.WsRouting;
import io.strand.app.auth.AuthFilter;
import io.strand.app.auth.Authenticator;
import io.strand.app.http.HttpIo;
import io.strand.app.http.LogsHttp;
import io.strand.app.ws.SocketEndpoint;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import io.strand.logtier.LogStore;
import java.io.IOException;
import java.nio.file.Files;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Wires the stores to Helidon: one {@link Writers} that owns every write, the log store, the
 * HTTP services, the WebSocket endpoint and the observe endpoints. {@link #routing} is separate
 * so tests and the CLI build the same routes.
 */
public final class StrandServer implements AutoCloseable {
    private final ServerConfig config;
    private final StrandMetrics metrics = new StrandMetrics();
    private final Writers writers;
    private final LogStore logs;
    private final Authenticator authenticator;
    private final WebServer server;

    public StrandServer(ServerConfig config, Authenticator authenticator) {
        this.config = config;
        this.authenticator = authenticator;
        try {
            Files.createDirectories(config.dataDir());
        } catch (IOException e) {
            throw new IllegalStateException("cannot create data dir " + config.dataDir() + ": " + e.getMessage(), e);
        }
        this.writers = new Writers("strand", config.writerThreads(), config.durability(), 4096, metrics::syncNanos);
        this.logs = new LogStore(config.logConfig(), writers);
        metrics.gauge("strand.logs.open", "Log queues open now", logs::openLogs);
        SocketEndpoint.SocketContext socketContext = new SocketEndpoint.SocketContext(logs, null, authenticator, metrics,
                config.maxConnectionsPerWorkspace(), config.maxSubscriptionsPerSocket(), config.heartbeat().toMillis(),
                new ConcurrentHashMap<>());
        this.server = WebServer.builder()
                .host(config.host())
                .port(config.port())
                .maxPayloadSize(config.maxBodyBytes() * 2) // the services refuse past maxBodyBytes with a JSON 413
                .shutdownHook(false)
                .connectionOptions(o -> o.tcpNoDelay(true)) // small frames and replies must not wait for delayed ACKs
                .addFeature(ObserveFeature.just(HealthObserver.create(), MetricsObserver.create()))
                .addProtocol(WsConfig.builder().maxFrameLength(config.maxFrameBytes()).build())
                .routing(r -> routing(r, this))
                .addRouting(WsRouting.builder().endpoint("/v1/ws/{ws}/socket", () -> new SocketEndpoint(socketContext)))
                .build();
    }

    static void routing(HttpRouting.Builder routing, StrandServer s) {
        HttpIo io = new HttpIo(s.config.maxBodyBytes());
        routing.addFilter(new AuthFilter(s.authenticator))
                .register("/v1", new LogsHttp(s.logs, io, s.metrics, (ws, log) -> s.logs.delete(ws, log).join()))
                .any("/v1/*", (req, res) -> HttpIo.error(res, StrandException.notFound(
                        "no route for " + req.prologue().method().text() + " " + req.path().path())))
                .error(Throwable.class, (req, res, t) -> HttpIo.error(res, t));
    }

    public StrandServer start() {
        server.start();
        return this;
    }

    public int port() {
        return server.port();
    }

    public String url() {
        return "http://" + config.host() + ":" + port();
    }

    public LogStore logs() {
        return logs;
    }

    public ServerConfig config() {
        return config;
    }

    /** Stops accepting, then flushes and closes every queue and map. */
    @Override
    public void close() {
        server.stop();
        writers.close();
        logs.close();
    }
}
