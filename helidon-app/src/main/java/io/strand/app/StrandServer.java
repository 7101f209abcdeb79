package io.strand.app;

import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.observe.ObserveFeature;
import io.helidon.webserver.observe.health.HealthObserver;
import io.helidon.webserver.observe.metrics.MetricsObserver;
import io.helidon.webserver.websocket.WsConfig;
import io.helidon.webserver.websocket.WsRouting;
import io.strand.app.audit.AuditLog;
import io.strand.app.auth.AuthFilter;
import io.strand.app.auth.Authenticator;
import io.strand.app.auth.JwtAuthenticator;
import io.strand.app.http.AdminHttp;
import io.strand.app.http.AllowedMethods;
import io.strand.app.http.HttpIo;
import io.strand.app.http.ColdHttp;
import io.strand.app.http.DocsHttp;
import io.strand.docstore.DocStore;
import io.strand.docstore.DocStoreConfig;
import io.strand.app.http.LogsHttp;
import io.strand.app.http.RetentionHttp;
import io.strand.coldtier.BlockCache;
import io.strand.coldtier.ColdLogConfig;
import io.strand.coldtier.ColdStoreConfig;
import io.strand.logtier.ColdTier;
import io.strand.app.ws.OpenSockets;
import io.strand.app.ws.SocketEndpoint;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import io.strand.core.WriteAheadLog;
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
    /** How often open sockets re-check their token (revocation and expiry reach them within this). */
    static final long TOKEN_SWEEP_MILLIS = 1000;
    private final ServerConfig config;
    private final StrandMetrics metrics = new StrandMetrics();
    private final Writers writers;
    private final LogStore logs;
    private final DocStore docs;
    private final DocApi docApi;
    private final ColdTier coldTier;
    private final Authenticator authenticator;
    private final AuditLog audit;
    private final io.strand.logtier.Retention retention;
    private final OpenSockets sockets;
    private final WebServer server;

    public StrandServer(ServerConfig config, Authenticator authenticator) {
        this.config = config;
        this.authenticator = authenticator;
        try {
            Files.createDirectories(config.dataDir());
        } catch (IOException e) {
            throw new IllegalStateException("cannot create data dir " + config.dataDir() + ": " + e.getMessage(), e);
        }
        this.writers = new Writers("strand", config.writerThreads(), config.durability(), 4096,
                new WriteAheadLog(config.dataDir().resolve("wal"), WriteAheadLog.DEFAULT_SEGMENT_BYTES, config.walCheckpointRecords()),
                metrics::syncNanos);
        this.logs = new LogStore(config.logConfig(), writers);
        this.coldTier = openColdTier(config);
        logs.enableColdTier(coldTier);
        metrics.gauge("strand.logs.open", "Log queues open now", logs::openLogs);
        metrics.gauge("strand.cold.rolls", "Cold segments rolled since start", () -> coldStat("rolls"));
        metrics.gauge("strand.cold.rolled.entries", "Entries moved to the cold tier since start", () -> coldStat("rolledEntries"));
        metrics.gauge("strand.cold.roll.failures", "Failed cold rolls (store down or erroring: hot parts keep growing meanwhile)",
                () -> coldStat("rollFailures"));
        metrics.gauge("strand.cold.roll.pending", "Logs waiting for a roll check or a retry", () -> coldStat("pending"));
        metrics.gauge("strand.cold.cache.hits", "Cold block cache hits", () -> coldStat("cacheHits"));
        metrics.gauge("strand.cold.cache.misses", "Cold block cache misses (each one ranged read of the store)", () -> coldStat("cacheMisses"));
        this.audit = new AuditLog(logs);
        this.docs = new DocStore(DocStoreConfig.defaults(config.dataDir().resolve("docs"))
                .withCapacity(config.docCapacity(), DocStoreConfig.DEFAULT_AVERAGE_KEY_BYTES, DocStoreConfig.DEFAULT_AVERAGE_VALUE_BYTES), writers);
        long replayStart = System.nanoTime();
        long replayed = writers.recover(); // both stores registered their replayers; nothing is served before this
        long replayMillis = (System.nanoTime() - replayStart) / 1_000_000;
        metrics.gauge("strand.wal.replayed", "Write-ahead records replayed at start (0 after a clean stop)", () -> replayed);
        metrics.gauge("strand.wal.replay.millis", "How long the start-up replay of the write-ahead log took", () -> replayMillis);
        // after the replay: the worker's first pass finishes trims a crash interrupted
        this.retention = new io.strand.logtier.Retention(logs, config.retentionDefaults(), config.retentionCheckInterval(),
                io.strand.coldtier.ColdLogConfig.DEFAULT_COMPACTION_GRACE);
        metrics.gauge("strand.retention.trims", "Trims that moved a log's first (requests and policies)", retention.trims::get);
        metrics.gauge("strand.retention.failures", "Retention worker steps that failed (retried on its next pass)", retention.failures::get);
        metrics.gauge("strand.retention.hot.files.deleted", "Hot cycle files deleted below a log's first", retention.hotFilesDeleted::get);
        metrics.gauge("strand.retention.cold.segments.retired", "Cold segments retired below a log's first", retention.coldSegmentsRetired::get);
        metrics.gauge("strand.retention.cold.segments.deleted", "Retired cold segments deleted after the grace period",
                retention.coldSegmentsDeleted::get);
        this.docApi = new DocApi(docs, metrics);
        metrics.gauge("strand.docs", "Docs stored", docs::size);
        metrics.gauge("strand.docs.capacity", "Docs this node accepts before writes get 507 storage_full (alert well before)",
                () -> docs.config().maxEntries());
        SocketEndpoint.DocOps docOps = (op, ws, frame, who) -> {
            if (!op.startsWith("doc.")) {
                throw new io.strand.core.StrandException(io.strand.core.ErrorCode.UNKNOWN_OP,
                        "op '" + op + "' is not available yet; see SPEC §12");
            }
            var name = frame.get("doc");
            if (name == null || !name.isTextual()) {
                throw io.strand.core.StrandException.badRequest("'doc' is required");
            }
            return docApi.call(op.substring(4), ws, name.asText(), frame, who).thenApply(o -> o);
        };
        SocketEndpoint.SocketContext socketContext = new SocketEndpoint.SocketContext(logs, docOps, authenticator, metrics,
                config.maxConnectionsPerWorkspace(), config.maxSubscriptionsPerSocket(), config.heartbeat().toMillis(),
                new ConcurrentHashMap<>());
        this.sockets = socketContext.sockets();
        sockets.startSweeper(TOKEN_SWEEP_MILLIS);
        this.server = WebServer.builder()
                .host(config.host())
                .port(config.port())
                .maxPayloadSize(config.maxBodyBytes() * 2) // the services refuse past maxBodyBytes with a JSON 413
                .shutdownHook(false)
                .connectionOptions(o -> o.tcpNoDelay(true)) // small frames and replies must not wait for delayed ACKs
                .addFeature(ObserveFeature.just(health(writers), MetricsObserver.create()))
                .addProtocol(WsConfig.builder().maxFrameLength(config.maxFrameBytes()).build())
                .routing(r -> routing(r, this))
                .addRouting(WsRouting.builder().endpoint("/v1/ws/{ws}/socket", () -> new SocketEndpoint(socketContext, config.maxFrameBytes())))
                .build();
    }

    /**
     * Why nothing matched: a name that smuggles a separator or dot segment (decoded before routing)
     * is an invalid name, anything else has no route.
     */
    static StrandException unrouted(String rawPath, String path, String method) {
        String raw = rawPath.toLowerCase(java.util.Locale.ROOT);
        if (raw.contains("%2f") || raw.contains("%5c") || raw.contains("%00") || raw.contains("%2e")
                || path.contains("/../") || path.endsWith("/..") || path.contains("/./")) {
            return new StrandException(io.strand.core.ErrorCode.INVALID_NAME,
                    "invalid name in path '" + rawPath + "': names cannot contain '/', '\\', NUL or dot segments");
        }
        return StrandException.notFound("no route for " + method + " " + path);
    }

    /**
     * Health with a {@code writers} liveness check: DOWN once a writer's durable write failed, since
     * that writer then refuses every later write until the process restarts.
     */
    private static HealthObserver health(Writers writers) {
        return HealthObserver.builder()
                .details(true)
                .addCheck(() -> {
                    java.util.Optional<String> failure = writers.failure();
                    var response = io.helidon.health.HealthCheckResponse.builder().status(failure.isEmpty());
                    failure.ifPresent(f -> response.detail("failure", f));
                    return response.build();
                }, io.helidon.health.HealthCheckType.LIVENESS, "writers")
                .build();
    }

    private Number coldStat(String name) {
        return logs.coldStats().get(name) instanceof Number n ? n : 0;
    }

    /** The cold store named by {@code --cold} (default: a directory under the data dir). */
    private static ColdTier openColdTier(ServerConfig config) {
        ColdStoreConfig store = ColdStoreConfig.parse(config.cold());
        if (store.isS3()) {
            if (config.s3Endpoint() != null && !config.s3Endpoint().isBlank()) {
                store = store.withEndpoint(java.net.URI.create(config.s3Endpoint()));
            }
            store = store.withRegion(config.s3Region()).withPathStyle(config.s3PathStyle());
        }
        return new ColdTier(store.open(), new BlockCache(BlockCache.DEFAULT_BUDGET_BYTES),
                ColdLogConfig.defaults(config.dataDir().resolve("cold-tmp")));
    }

    static void routing(HttpRouting.Builder routing, StrandServer s) {
        HttpIo io = new HttpIo(s.config.maxBodyBytes());
        AllowedMethods routes = new AllowedMethods();
        routing.addFilter(new AuthFilter(s.authenticator))
                .register("/v1", routes.recording("/v1", new ColdHttp(s.logs, io, s.audit)))
                .register("/v1", routes.recording("/v1", new DocsHttp(s.docApi, io)))
                .register("/v1", routes.recording("/v1", new LogsHttp(s.logs, io, s.metrics, (ws, log) -> s.logs.delete(ws, log), s.audit)))
                .register("/v1", routes.recording("/v1", new RetentionHttp(s.retention, io, s.audit)))
                .register("/v1", routes.recording("/v1", new AdminHttp(s.authenticator instanceof JwtAuthenticator jwt ? jwt : null, s.audit, io)))
                .get("/v1/ws/{ws}/socket", SocketEndpoint::refusedUpgrade)
                .any("/v1/*", (req, res) -> HttpIo.error(res, routes.methodNotAllowed(req, res).orElseGet(() ->
                        unrouted(req.path().rawPath(), req.path().path(), req.prologue().method().text()))))
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
        sockets.close();
        server.stop();
        retention.close();
        writers.close();
        logs.close();
        docs.close();
        try {
            coldTier.close();
        } catch (Exception e) {
            System.getLogger("strand").log(System.Logger.Level.WARNING, "closing the cold store: " + e.getMessage());
        }
    }
}
