package io.strand.app;

import io.helidon.http.NotFoundException;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.staticcontent.StaticContentService;
import io.helidon.webserver.observe.ObserveFeature;
import io.helidon.webserver.observe.health.HealthObserver;
import io.helidon.webserver.observe.metrics.MetricsObserver;
import io.helidon.webserver.http1.Http1Config;
import io.helidon.webserver.ProtocolConfigs;
import io.helidon.webserver.http1.Http1ConnectionProvider;
import io.helidon.webserver.websocket.WsConfig;
import io.helidon.webserver.websocket.WsRouting;
import io.strand.app.audit.AuditLog;
import io.strand.app.auth.AuthFilter;
import io.strand.app.auth.Authenticator;
import io.strand.app.auth.JwtAuthenticator;
import io.strand.app.ds.DsCors;
import io.strand.app.ds.DsHttp;
import io.strand.app.ds.DsStates;
import io.strand.app.http.AdminHttp;
import io.strand.app.http.AllowedMethods;
import io.strand.app.http.ConnectionGuard;
import io.strand.app.http.DirectRefusals;
import io.strand.app.http.HttpIo;
import io.strand.app.http.ColdHttp;
import io.strand.app.http.DocsHttp;
import io.strand.app.http.TxnHttp;
import io.strand.app.cluster.ClusterHttp;
import io.strand.app.cluster.ClusterPlacement;
import io.strand.app.stores.Placement;
import io.strand.app.stores.SingleNode;
import io.strand.app.stores.Stores;
import io.strand.app.stores.WritePath;
import io.strand.docstore.DocStore;
import io.strand.app.http.LogsHttp;
import io.strand.app.http.RetentionHttp;
import io.strand.app.http.WorkspacesHttp;
import io.strand.app.http.RecoveryListener;
import io.strand.coldtier.BlockCache;
import io.strand.coldtier.ColdLogConfig;
import io.strand.coldtier.ColdStoreConfig;
import io.strand.logtier.ColdTier;
import io.strand.app.ws.OpenSockets;
import io.strand.app.ws.ReaderThreads;
import io.strand.app.ws.WsEventLoops;
import io.strand.app.ws.SocketEndpoint;
import io.strand.core.DiskSpace;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import io.strand.logtier.LogStore;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Wires the stores to Helidon: one {@link Writers} that owns every write, the log store, the
 * HTTP services, the WebSocket endpoint and the observe endpoints. {@link #routing} is separate
 * so tests and the CLI build the same routes.
 */
public final class StrandServer implements AutoCloseable {
    /** How often open sockets re-check their token (revocation and expiry reach them within this). */
    static final long TOKEN_SWEEP_MILLIS = 1000;
    /** How long a shard's apply thread waits for subscriptions on its closing stores to end (a stalled client is not waited for). */
    static final java.time.Duration SUBSCRIPTIONS_END_WAIT = java.time.Duration.ofSeconds(2);
    private final ServerConfig config;
    private final StrandMetrics metrics = new StrandMetrics();
    private final Writers writers;
    /** The data directory's free-space guard: every store claims from it before writing. */
    private final DiskSpace disk;
    /** Where each workspace's stores are and how writes reach them. */
    private final Placement placement;
    /** Cluster mode only (null on a single node). */
    private final ClusterPlacement cluster;
    /** Single node: the one store set's parts (the cold tier, retention and Durable Streams use them). */
    private final LogStore logs;
    private final DocStore docs;
    /** The Durable Streams state of every store set here (on a cluster node, applied by each shard replica). */
    private final DsStates dsStates;
    private final DsHttp dsHttp;
    private final ColdTier coldTier;
    private final Authenticator authenticator;
    private final AuditLog audit;
    private final OpenSockets sockets;
    private final WsEventLoops wsLoops;
    private final ConnectionGuard guard;
    private final WebServer server;
    /** Holds the port until {@link #start} when made by {@link #recovering}; null otherwise. */
    private final RecoveryListener recovering;
    /** The {@code /v1} routes as registered (for 405s, and for the OpenAPI check). */
    final AllowedMethods routes = new AllowedMethods();

    public StrandServer(ServerConfig config, Authenticator authenticator) {
        this(config, authenticator, null);
    }

    /**
     * As above, the data directory's free bytes read from {@code freeSpace} instead of its file
     * system when not null (tests simulate a full disk where a small file system cannot be mounted).
     */
    public StrandServer(ServerConfig config, Authenticator authenticator, DiskSpace.FreeSpace freeSpace) {
        this(config, placement -> authenticator, freeSpace, null);
    }

    /**
     * A server whose port answers from the start: {@link RecoveryListener} holds it (readiness DOWN,
     * requests {@code 503}) while the stores open and the write-ahead log replays, and {@link #start}
     * takes it over. What {@code strand serve} runs.
     */
    public static StrandServer recovering(ServerConfig config, Authenticator authenticator) {
        return recoveringWith(config, placement -> authenticator);
    }

    /**
     * As {@link #recovering(ServerConfig, Authenticator)}, the authenticator made over the node's
     * placement once the stores are open (a cluster node's auth state is in its {@code _system}
     * shard); the server closes it before the stores.
     */
    public static StrandServer recoveringWith(ServerConfig config, java.util.function.Function<Placement, Authenticator> authenticator) {
        RecoveryListener listener = RecoveryListener.start(config.host(), config.port());
        try {
            return new StrandServer(config, authenticator, null, listener);
        } catch (RuntimeException | Error e) {
            listener.close();
            throw e;
        }
    }

    private StrandServer(ServerConfig config, java.util.function.Function<Placement, Authenticator> authFor,
            DiskSpace.FreeSpace freeSpace, RecoveryListener recovering) {
        this.recovering = recovering;
        this.config = config;
        if (config.cluster() != null) {
            // a cluster: one store set per shard replica, a cold tier only with --cold (shared by every node), trims,
            // retention and Durable Streams writes through each shard's log
            this.dsStates = new DsStates(true, config.dsLongPollTimeout());
            ClusterPlacement cluster = ClusterPlacement.start(config, metrics, dsStates);
            this.placement = cluster;
            this.cluster = cluster;
            this.writers = null;
            this.disk = DiskSpace.of(config.dataDir(), config.minFreeDisk());
            this.logs = null;
            this.docs = null;
            this.coldTier = null;
            System.getLogger("strand").log(System.Logger.Level.INFO, "cluster node " + config.cluster().nodeId() + ": "
                    + config.cluster().shards() + " shards over " + config.cluster().members()
                    + (cluster.hasColdTier() ? "; cold tier " + config.cold() + " shared by every"
                    + " node (each shard's leader rolls and compacts)" : "; no --cold, so logs stay hot (each node's data"
                    + " directory is its own; give every node the same --cold to tier them)"));
        } else {
            Stores home = Stores.open("strand", config, config.dataDir(), config.durability(), config.writerThreads(), metrics, freeSpace);
            this.dsStates = new DsStates(false, config.dsLongPollTimeout());
            this.placement = new SingleNode(home, dsStates); // native writes may not bypass a stream's rules
            this.cluster = null;
            this.writers = home.writers();
            this.disk = home.disk();
            this.logs = home.logs();
            this.docs = home.docs();
            this.coldTier = openColdTier(config);
            logs.enableColdTier(coldTier);
            // after the replay: the worker's first pass finishes trims a crash interrupted
            home.startRetention(config.retentionDefaults(), config.retentionCheckInterval(), null);
        }
        dsStates.serveThrough(placement);
        this.dsHttp = new DsHttp(dsStates, placement, config.maxBodyBytes());
        coldMetrics();
        retentionMetrics();
        this.authenticator = authFor.apply(placement);
        metrics.counter("strand.process.cpu.micros", "CPU time (user + system, every thread) this server process has used, in"
                + " microseconds: a remote `strand bench --server/--cluster-nodes` reads its CPU per operation from it", StrandMetrics::processCpuMicros);
        metrics.gauge("strand.logs.open", "Log queues open now", () -> placement.all().stream().mapToInt(st -> st.logs().openLogs()).sum());
        this.audit = new AuditLog(placement);
        placement.onPolicyTrim((ws, log, first, policy) -> audit.recordDone(AuditLog.RETENTION_WORKER, "log.trim",
                "log:" + ws + "/" + log, java.util.Map.of("ws", ws, "log", log, "before", first, "policy", policy)));
        long replayed = placement.all().stream().mapToLong(Stores::replayed).sum();
        long replayMillis = placement.all().stream().mapToLong(Stores::replayMillis).sum();
        metrics.gauge("strand.wal.replayed", "Write-ahead records replayed at start (0 after a clean stop)", () -> replayed);
        metrics.gauge("strand.wal.replay.millis", "How long the start-up replay of the write-ahead log took", () -> replayMillis);
        metrics.gauge("strand.docs", "Docs stored", () -> placement.all().stream().mapToLong(st -> st.docs().size()).sum());
        metrics.gauge("strand.docs.capacity", "Docs this node accepts before writes get 507 storage_full (alert well before)",
                () -> placement.all().stream().mapToLong(st -> st.docs().config().maxEntries()).sum());
        WritePath writes = placement.writes();
        SocketEndpoint.DocOps docOps = (op, ws, frame, who) -> {
            if (op.equals("txn")) {
                return writes.txn(ws, frame, who).thenApply(o -> o);
            }
            if (!op.startsWith("doc.")) {
                throw new io.strand.core.StrandException(io.strand.core.ErrorCode.UNKNOWN_OP,
                        "op '" + op + "' is not available yet; see SPEC §12");
            }
            var name = frame.get("doc");
            if (name == null || !name.isTextual()) {
                throw io.strand.core.StrandException.badRequest("'doc' is required");
            }
            return writes.doc(op.substring(4), io.strand.docstore.DocId.of(ws, name.asText()), frame).thenApply(o -> o); // scope checked by the socket
        };
        ReaderThreads wsReaders = new ReaderThreads(config.wsReaderThreads());
        // a cluster's socket ops may wait on Raft (a read index before a subscription), which must not stop a loop
        this.wsLoops = cluster == null ? new WsEventLoops(config.wsEventLoops(), config.wsLoopWrites(), writers::writerOf) : WsEventLoops.NONE;
        SocketEndpoint.SocketContext socketContext = new SocketEndpoint.SocketContext(placement, docOps, authenticator, metrics,
                config.maxConnectionsPerWorkspace(), config.maxSubscriptionsPerSocket(), config.subscriptionHeartbeat().toMillis(),
                new ConcurrentHashMap<>(), new OpenSockets(), wsReaders, wsLoops);
        metrics.gauge("strand.ws.reader.threads", "WebSockets read by a platform thread of their own (at most --ws-reader-threads)",
                wsReaders::inUse);
        metrics.gauge("strand.ws.event.loop.sockets", "WebSockets read by an event loop (--ws-event-loops)", wsLoops::connections);
        this.sockets = socketContext.sockets();
        sockets.startSweeper(TOKEN_SWEEP_MILLIS);
        if (cluster != null && authenticator instanceof JwtAuthenticator jwt) {
            jwt.onRevoked(sockets::sweepSoon); // a revocation made on another node reaches this one's sockets at once
        }
        if (cluster != null) {
            // a snapshot from the leader replaces a lagging replica's stores: subscriptions on them end first,
            // each with a retryable error and its next seq, so the client resumes on the new stores exactly
            cluster.onStoresClosing(shard -> sockets.endSubscriptions(ws -> cluster.spec().shardOf(ws) == shard,
                    ClusterPlacement.storesClosing(shard), SUBSCRIPTIONS_END_WAIT));
        }
        this.guard = new ConnectionGuard(config.headerTimeout(), config.bodyTimeout(), config.maxConnections(),
                config.maxConnectionsPerIp());
        metrics.gauge("strand.http.connections", "Open connections (HTTP and WebSocket); refused past --max-connections",
                guard::openConnections);
        metrics.counter("strand.http.header.timeouts", "Connections closed because their request head or body did not arrive in time",
                guard::timedOut);
        metrics.counter("strand.http.connections.accepted", "Connections accepted since start (HTTP and WebSocket, refused ones included)",
                guard::accepted);
        metrics.gauge("strand.sockets", "Open WebSockets", sockets::size);
        metrics.counter("strand.sockets.opened", "WebSockets opened since start", sockets::opened);
        metrics.counter("strand.http.connections.refused", "Connections refused by --max-connections or --max-connections-per-ip",
                guard::refusals);
        WsConfig wsConfig = WsConfig.builder().maxFrameLength(config.maxFrameBytes()).build();
        // the only connection selector, so every accepted connection passes the guard first; made by
        // Helidon's own HTTP/1 provider so the upgraders it finds (StrictWsUpgradeProvider) apply as before
        var http1 = new Http1ConnectionProvider().create("@default",
                Http1Config.builder().addReceiveListener(guard).addSendListener(guard).build(),
                ProtocolConfigs.create(List.of(wsConfig)));
        this.server = WebServer.builder()
                .host(config.host())
                .port(recovering == null ? config.port() : recovering.port())
                .protocolsDiscoverServices(false)
                .addProtocol(wsConfig)
                .addConnectionSelector(guard.wrap(http1))
                .maxTcpConnections(config.maxConnections() + ConnectionGuard.REFUSAL_HEADROOM)
                .idleConnectionTimeout(config.idleTimeout()) // kept-alive HTTP without a request, WebSockets without frames
                .idleConnectionPeriod(ConnectionGuard.idleCheckPeriod(config.idleTimeout()))
                // the services refuse past maxBodyBytes with a JSON 413, reading at most maxBodyBytes+1; Durable
                // Streams reads and drops up to DRAIN_LIMIT more first, so browsers see the 413 instead of a reset
                .maxPayloadSize(config.maxBodyBytes() + DsHttp.DRAIN_LIMIT)
                .shutdownHook(false)
                .directHandlers(DirectRefusals.all(guard)) // refusals before routing get the SPEC §2 body too
                .errorHandling(e -> e.includeEntity(true)) // pass Helidon's (escaped, safe) reason to DirectRefusals
                .connectionOptions(o -> o.tcpNoDelay(true)) // small frames and replies must not wait for delayed ACKs
                .addFeature(ObserveFeature.just(health(placement, disk, replayed, replayMillis, cluster != null
                        && authenticator instanceof JwtAuthenticator jwt ? jwt::keyed : null), MetricsObserver.builder()
                        .metricsConfig(StrandMetrics.metricsConfig()).build()))
                .addFeature(io.strand.app.http.RedactedRequestLine.feature()) // never prints ?token= values
                .routing(r -> routing(r, this))
                .addRouting(WsRouting.builder().endpoint("/v1/ws/{ws}/socket", () -> new SocketEndpoint(socketContext, config.maxFrameBytes())))
                .build();
    }

    /** The cold tier's counters, summed over this node's store sets (a cluster node's shards share one block cache). */
    private void coldMetrics() {
        metrics.counter("strand.cold.rolls", "Cold segments rolled since start", () -> coldStat("rolls"));
        metrics.counter("strand.cold.rolled.entries", "Entries moved to the cold tier since start", () -> coldStat("rolledEntries"));
        metrics.counter("strand.cold.roll.failures", "Failed cold rolls (store down or erroring: hot parts keep growing meanwhile)",
                () -> coldStat("rollFailures"));
        metrics.gauge("strand.cold.roll.pending", "Logs waiting for a roll check or a retry", () -> coldStat("pending"));
        metrics.counter("strand.cold.cache.hits", "Cold block cache hits", () -> coldStat("cacheHits"));
        metrics.counter("strand.cold.cache.misses", "Cold block cache misses (each one ranged read of the store)", () -> coldStat("cacheMisses"));
    }

    /** The retention workers' counters, summed over this node's store sets. */
    private void retentionMetrics() {
        metrics.counter("strand.retention.trims", "Trims that moved a log's first (requests and policies)", () -> retentionStat(r -> r.trims));
        metrics.counter("strand.retention.failures", "Retention worker steps that failed (retried on its next pass)",
                () -> retentionStat(r -> r.failures));
        metrics.counter("strand.retention.hot.files.deleted", "Hot cycle files deleted below a log's first", () -> retentionStat(r -> r.hotFilesDeleted));
        metrics.counter("strand.retention.cold.segments.retired", "Cold segments retired below a log's first",
                () -> retentionStat(r -> r.coldSegmentsRetired));
        metrics.counter("strand.retention.cold.segments.deleted", "Retired cold segments deleted after the grace period",
                () -> retentionStat(r -> r.coldSegmentsDeleted));
    }

    private long retentionStat(java.util.function.Function<io.strand.logtier.Retention, java.util.concurrent.atomic.AtomicLong> counter) {
        return placement.all().stream().mapToLong(st -> counter.apply(st.retention()).get()).sum();
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
     * that writer then refuses every later write until the process restarts. Helidon's own
     * {@code diskSpace} check watches {@code /}; it is replaced by one on the data directory's file
     * system, DOWN below the {@code --min-free-disk} reserve, when writes get {@code 507}. That one is
     * a readiness check: a restart frees no space (so liveness stays UP), reads keep working, and it
     * turns UP again by itself once space is freed. The {@code agents} liveness check lists every
     * background job ({@link AgentsHealth}). A cluster node with auth has an {@code auth} readiness
     * check, DOWN until it has loaded the cluster's signing key ({@code authKeyed}, null elsewhere).
     */
    private static HealthObserver health(Placement placement, DiskSpace disk, long replayed, long replayMillis,
            java.util.function.BooleanSupplier authKeyed) {
        var builder = HealthObserver.builder();
        if (authKeyed != null) {
            builder.addCheck(() -> io.helidon.health.HealthCheckResponse.builder().status(authKeyed.getAsBoolean())
                    .detail("signingKey", authKeyed.getAsBoolean() ? "loaded" : "waiting for the _system shard").build(),
                    io.helidon.health.HealthCheckType.READINESS, "auth");
        }
        return builder
                .details(true)
                .useSystemServices(false) // Helidon's discovered diskSpace check looks at "/", not the data directory
                .addCheck(io.helidon.health.checks.HealthChecks.deadlockCheck())
                .addCheck(io.helidon.health.checks.HealthChecks.heapMemoryCheck())
                .addCheck(() -> {
                    DiskSpace.Reading r = disk.reading();
                    var response = io.helidon.health.HealthCheckResponse.builder().status(r.ok())
                            .detail("path", r.dir().toString())
                            .detail("freeBytes", r.freeBytes())
                            .detail("reserveBytes", r.reserveBytes());
                    if (r.error() != null) {
                        response.detail("error", r.error());
                    } else if (!r.ok()) {
                        response.detail("error", "the data directory " + r.dir() + " has " + r.freeBytes()
                                + " bytes free, below the " + r.reserveBytes() + "-byte reserve: writes are refused with 507");
                    }
                    return response.build();
                }, io.helidon.health.HealthCheckType.READINESS, "diskSpace")
                .addCheck(() -> io.helidon.health.HealthCheckResponse.builder().status(true) // DOWN is RecoveryListener's
                        .detail("replayedRecords", replayed).detail("replayMillis", replayMillis).build(),
                        io.helidon.health.HealthCheckType.READINESS, "recovery")
                .addCheck(() -> {
                    java.util.Optional<String> failure = placement.all().stream().map(st -> st.writers().failure())
                            .flatMap(java.util.Optional::stream).findFirst();
                    var response = io.helidon.health.HealthCheckResponse.builder().status(failure.isEmpty());
                    failure.ifPresent(f -> response.detail("failure", f));
                    return response.build();
                }, io.helidon.health.HealthCheckType.LIVENESS, "writers")
                .addCheck(new AgentsHealth())
                .addCheck(placement instanceof ClusterPlacement cluster ? cluster::health
                        : () -> io.helidon.health.HealthCheckResponse.builder().status(true).detail("mode", "single node").build(),
                        io.helidon.health.HealthCheckType.READINESS, "cluster")
                .build();
    }

    private Number coldStat(String name) {
        java.util.stream.LongStream values = placement.all().stream().map(st -> st.logs().coldStats().get(name))
                .filter(Number.class::isInstance).mapToLong(v -> ((Number) v).longValue());
        return name.startsWith("cache") ? values.max().orElse(0) : values.sum(); // one cache, seen by every shard
    }

    /** The cold store named by {@code --cold} (default: a directory under the data dir). */
    private static ColdTier openColdTier(ServerConfig config) {
        ColdStoreConfig store = config.coldStoreConfig();
        return new ColdTier(store.open(), new BlockCache(BlockCache.DEFAULT_BUDGET_BYTES),
                ColdLogConfig.defaults(config.dataDir().resolve("cold-tmp")));
    }

    static void routing(HttpRouting.Builder routing, StrandServer s) {
        HttpIo io = new HttpIo(s.config.maxBodyBytes());
        AllowedMethods routes = s.routes;
        routing.addFilter(new DsCors()) // CORS headers on every /ds/ answer, 401s included; preflights need no token
                .addFilter(new AuthFilter(s.authenticator));
        if (s.cluster != null) { // first: a cluster node relays the requests of workspaces whose shard it does not replicate
            io.helidon.webserver.http.Handler forwarding = s.cluster.forwarding(s.config.maxBodyBytes());
            routing.any("/v1/ws", forwarding).any("/v1/ws/*", forwarding).any("/ds/*", forwarding);
        }
        routing
                .register("/v1", routes.recording("/v1", new DocsHttp(s.placement, io)))
                .register("/v1", routes.recording("/v1", new TxnHttp(s.placement.writes(), io)))
                .register("/v1", routes.recording("/v1", new LogsHttp(s.placement, io, s.metrics, s.audit,
                        s.dsStates::annotate)))
                .register("/v1", routes.recording("/v1", new WorkspacesHttp(s.placement)))
                .register("/v1", routes.recording("/v1", new RetentionHttp(s.placement.writes(), io, s.audit)))
                .register("/v1", routes.recording("/v1", new AdminHttp(s.authenticator instanceof JwtAuthenticator jwt ? jwt : null, s.audit, io)));
        if (s.cluster == null) {
            routing.register("/v1", routes.recording("/v1", new ColdHttp(s.placement, io, s.audit, ColdHttp.ColdWriters.ANY_NODE)));
        } else {
            routing.register("/v1", routes.recording("/v1", new ClusterHttp(s.cluster, io, s.audit, s::url)))
                    .register("/v1", routes.recording("/v1", new ColdHttp(s.placement, io, s.audit, s.cluster::requireColdWriter)));
        }
        routing.any("/ds/*", s.dsHttp);
        routing
                .get("/v1/ws/{ws}/socket", SocketEndpoint::refusedUpgrade)
                // the web console: static files from the jar, no token needed to load them (the page asks for one)
                .register("/console", StaticContentService.builder("console")
                        .welcomeFileName("index.html").build())
                .get("/openapi", new io.strand.app.http.OpenApiHttp())
                .any("/v1/*", (req, res) -> HttpIo.error(res, routes.methodNotAllowed(req, res).orElseGet(() ->
                        unrouted(req.path().rawPath(), req.path().path(), req.prologue().method().text()))))
                .error(NotFoundException.class, (req, res, t) -> HttpIo.error(res, unrouted(req.path().rawPath(),
                        req.path().path(), req.prologue().method().text())))
                .error(Throwable.class, (req, res, t) -> HttpIo.error(res, t));
    }

    public StrandServer start() {
        if (recovering != null) {
            recovering.close(); // the port is free for a moment: clients retry a refused connection as they would a 503
        }
        server.start();
        if (cluster != null) {
            cluster.publishHttp(port()); // where other nodes relay requests for shards this node replicates
        }
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

    /** Who checks this server's tokens. */
    public Authenticator authenticator() {
        return authenticator;
    }

    /** Stops accepting, then flushes and closes every queue and map. */
    @Override
    public void close() {
        if (recovering != null) {
            recovering.close();
        }
        sockets.close();
        server.stop();
        wsLoops.close(); // after the server: its stop ended the loops' connections
        guard.close();
        dsStates.close();
        if (cluster != null && authenticator instanceof JwtAuthenticator jwt) {
            jwt.close(); // its follower reads the _system shard's stores
        }
        placement.close();
        try {
            if (coldTier != null) {
                coldTier.close();
            }
        } catch (Exception e) {
            System.getLogger("strand").log(System.Logger.Level.WARNING, "closing the cold store: " + e.getMessage());
        }
    }
}
