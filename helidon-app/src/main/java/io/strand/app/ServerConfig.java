package io.strand.app;

import io.strand.core.Durability;
import io.strand.logtier.LogConfig;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * The server's settings (SPEC §10), immutable and validated once. Built from a map whose keys are
 * the environment names ({@code STRAND_PORT}, {@code STRAND_DATA}, …): the CLI's flags and the
 * environment fill the same map, so both spellings mean exactly the same thing.
 */
public record ServerConfig(
        String host,
        int port,
        Path dataDir,
        Durability durability,
        String cold,
        String s3Endpoint,
        String s3Region,
        boolean s3PathStyle,
        LogConfig.HotThreshold hot,
        String hotRollCycle,
        int writerThreads,
        long maxBodyBytes,
        int maxFrameBytes,
        int maxConnectionsPerWorkspace,
        int maxSubscriptionsPerSocket,
        int wsReaderThreads,
        int wsEventLoops,
        boolean wsLoopWrites,
        Duration heartbeat,
        boolean auth,
        long docCapacity,
        Duration headerTimeout,
        Duration bodyTimeout,
        Duration idleTimeout,
        int maxConnections,
        int maxConnectionsPerIp,
        long minFreeDisk,
        int walCheckpointRecords,
        Duration dsLongPollTimeout,
        io.strand.logtier.RetentionPolicy retentionDefaults,
        Duration retentionCheckInterval,
        ServerLogging logging,
        Cluster cluster) {

    /**
     * Cluster mode (SPEC §13), null on a single node: this node's id, every member as
     * {@code id=HOST:RAFTPORT} (the same list on every node), the shard count (fixed when the cluster
     * is created), the replicas per shard (all nodes when fewer), whether this node joins an
     * existing cluster (it holds no shard until {@code strand cluster replace} moves one to it), and
     * the minimum Raft election timeout (the maximum is twice it).
     */
    public record Cluster(String nodeId, String members, int shards, int replicas, boolean joining, Duration electionTimeout) {
        public Cluster {
            Duration min = io.strand.cluster.ClusterSpec.MIN_ELECTION_TIMEOUT;
            if (electionTimeout.compareTo(min) < 0 || electionTimeout.toSeconds() > 60) {
                throw new IllegalArgumentException("--election-timeout must be " + min.toMillis() + "ms..60s, not "
                        + electionTimeout.toMillis() + " ms");
            }
            if (nodeId == null || nodeId.isBlank()) {
                throw new IllegalArgumentException("--cluster needs --node-id (this node's id in the --cluster list)");
            }
            if (shards < 1 || shards > 1024) {
                throw new IllegalArgumentException("--shards must be 1..1024, not " + shards);
            }
            if (replicas < 1) {
                throw new IllegalArgumentException("--replicas must be ≥ 1, not " + replicas);
            }
        }
    }


    public static final Map<String, String> DEFAULTS = Map.ofEntries(
            Map.entry("STRAND_HOST", "127.0.0.1"),
            Map.entry("STRAND_PORT", "8080"),
            Map.entry("STRAND_DATA", "./data"),
            Map.entry("STRAND_DURABILITY", "fsync"),
            Map.entry("STRAND_S3_REGION", "us-east-1"),
            Map.entry("STRAND_S3_PATH_STYLE", "false"),
            Map.entry("STRAND_HOT_MAX_ENTRIES", "1000000"),
            Map.entry("STRAND_HOT_MAX_BYTES", String.valueOf(256L << 20)),
            Map.entry("STRAND_HOT_MAX_AGE", "7d"),
            Map.entry("STRAND_HOT_ROLL_CYCLE", "hourly"),
            Map.entry("STRAND_WRITERS", "4"),
            Map.entry("STRAND_MAX_BODY_BYTES", String.valueOf(4 << 20)),
            Map.entry("STRAND_MAX_FRAME_BYTES", String.valueOf(1 << 20)),
            Map.entry("STRAND_MAX_CONNECTIONS_PER_WORKSPACE", "10000"),
            Map.entry("STRAND_MAX_SUBSCRIPTIONS_PER_SOCKET", "1000"),
            // WebSockets read by a platform thread of their own (fewer wake-ups per request); those beyond are read by virtual threads
            Map.entry("STRAND_WS_READER_THREADS", "256"),
            // event loops that read plain WebSockets of a single node, each many sockets per wake-up ("auto": one per core; 0: none)
            Map.entry("STRAND_WS_EVENT_LOOPS", "auto"),
            // an event loop runs the group commit of the writes it read itself, before it sleeps (false: the writer thread does)
            Map.entry("STRAND_WS_LOOP_WRITES", "true"),
            Map.entry("STRAND_HEARTBEAT", "15s"),
            Map.entry("STRAND_AUTH", "true"),
            Map.entry("STRAND_DOC_CAPACITY", "200000"),
            // a request head (request line + headers) must arrive within this of the connection or request line
            Map.entry("STRAND_HEADER_TIMEOUT", "10s"),
            // a request body must arrive within this of its head (4 MiB in 60s: ≥ 70 KB/s on average)
            Map.entry("STRAND_BODY_TIMEOUT", "60s"),
            // a kept-alive HTTP connection with no request, or a WebSocket with no frame either way, for this long is closed (Helidon's default)
            Map.entry("STRAND_IDLE_TIMEOUT", "5m"),
            // open connections of every kind (HTTP and WebSocket); keep below the open-file limit minus the stores' files
            Map.entry("STRAND_MAX_CONNECTIONS", "16000"),
            // open connections from one address; 0 = no per-address cap (behind a proxy every client shares one address)
            Map.entry("STRAND_MAX_CONNECTIONS_PER_IP", "0"),
            // free space the data directory keeps: writes past it get 507 storage_full
            Map.entry("STRAND_MIN_FREE_DISK", String.valueOf(io.strand.core.DiskSpace.DEFAULT_RESERVE_BYTES)),
            Map.entry("STRAND_WAL_CHECKPOINT_RECORDS", String.valueOf(io.strand.core.WriteAheadLog.DEFAULT_CHECKPOINT_RECORDS)),
            Map.entry("STRAND_DS_LONG_POLL_TIMEOUT", "20s"),
            Map.entry("STRAND_RETENTION_CHECK_INTERVAL", "30s"),
            // cluster mode (with --cluster): Raft groups the workspaces are spread over, and copies of each
            Map.entry("STRAND_SHARDS", "8"),
            Map.entry("STRAND_REPLICAS", "3"),
            Map.entry("STRAND_CLUSTER_JOIN", "false"),
            // a follower that hears no leader for a random 1..2 times this starts an election
            Map.entry("STRAND_ELECTION_TIMEOUT", io.strand.cluster.ClusterSpec.DEFAULT_ELECTION_TIMEOUT.toMillis() + "ms"),

            // text (one line each, java.util.logging's SimpleFormatter) or json (one object per line)
            Map.entry("STRAND_LOG_FORMAT", ServerLogging.DEFAULT_FORMAT),
            Map.entry("STRAND_LOG_LEVEL", ServerLogging.DEFAULT_LEVEL));

    /** Settings with no default: absent means "not set". */
    private static final java.util.Set<String> OPTIONAL = java.util.Set.of("STRAND_COLD", "STRAND_S3_ENDPOINT",
            "STRAND_RETENTION_MAX_AGE", "STRAND_RETENTION_MAX_ENTRIES", "STRAND_RETENTION_MAX_BYTES",
            "STRAND_CLUSTER", "STRAND_NODE_ID");

    /** Every setting's environment name, sorted: the server's flags are these ({@code STRAND_HOT_MAX_AGE} is {@code --hot-max-age}). */
    public static java.util.SortedSet<String> keys() {
        java.util.SortedSet<String> keys = new java.util.TreeSet<>(DEFAULTS.keySet());
        keys.addAll(OPTIONAL);
        return keys;
    }

    public ServerConfig {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be 0..65535, not " + port);
        }
        if (writerThreads < 1 || maxBodyBytes < 1024 || maxFrameBytes < 1024) {
            throw new IllegalArgumentException("writers ≥ 1, body and frame limits ≥ 1 KiB");
        }
        if (cold != null && !cold.isBlank()) {
            String scheme = URI.create(cold).getScheme();
            if (!"file".equals(scheme) && !"s3".equals(scheme)) {
                throw new IllegalArgumentException("--cold must be file:///dir or s3://bucket/prefix, not " + cold);
            }
        }
        LogConfig.rollCycleNamed(hotRollCycle); // validates
        if (!headerTimeout.isPositive() || !bodyTimeout.isPositive() || !idleTimeout.isPositive() || maxConnections < 1 || maxConnectionsPerIp < 0) {
            throw new IllegalArgumentException("header, body and idle timeouts > 0, max connections ≥ 1, max connections per IP ≥ 0 (0 = no cap)");
        }
        if (minFreeDisk < 0) {
            throw new IllegalArgumentException("--min-free-disk must be ≥ 0, not " + minFreeDisk);
        }
        if (retentionCheckInterval.isNegative() || retentionCheckInterval.isZero() || retentionCheckInterval.toSeconds() > 60) {
            throw new IllegalArgumentException("--retention-check-interval must be more than 0 and at most 60s (a trim is due"
                    + " within a minute of an entry leaving its policy), not " + retentionCheckInterval);
        }
        if (walCheckpointRecords < 1) {
            throw new IllegalArgumentException("--wal-checkpoint-records must be ≥ 1, not " + walCheckpointRecords);
        }
        if (wsReaderThreads < 0 || wsReaderThreads > 100_000) {
            throw new IllegalArgumentException("--ws-reader-threads must be 0..100000, not " + wsReaderThreads);
        }
        if (wsEventLoops < 0 || wsEventLoops > 256) {
            throw new IllegalArgumentException("--ws-event-loops must be auto or 0..256, not " + wsEventLoops);
        }
        if (dsLongPollTimeout.isNegative() || dsLongPollTimeout.isZero()) {
            throw new IllegalArgumentException("--ds-long-poll-timeout must be positive");
        }
    }

    /** Settings from {@code values} (environment-style keys), falling back to {@link #DEFAULTS}. */
    public static ServerConfig from(Map<String, String> values) {
        Function<String, String> get = k -> {
            String v = values.get(k);
            return v == null || v.isBlank() ? DEFAULTS.get(k) : v.trim();
        };
        Path data = Path.of(get.apply("STRAND_DATA")).toAbsolutePath().normalize();
        String cold = get.apply("STRAND_COLD");
        String members = get.apply("STRAND_CLUSTER");
        Cluster cluster = members == null ? null : new Cluster(get.apply("STRAND_NODE_ID"), members,
                Integer.parseInt(get.apply("STRAND_SHARDS")), Integer.parseInt(get.apply("STRAND_REPLICAS")),
                Boolean.parseBoolean(get.apply("STRAND_CLUSTER_JOIN")), duration(get.apply("STRAND_ELECTION_TIMEOUT")));
        return new ServerConfig(
                get.apply("STRAND_HOST"),
                Integer.parseInt(get.apply("STRAND_PORT")),
                data,
                Durability.parse(get.apply("STRAND_DURABILITY")),
                // a cluster's nodes do not share one data directory, so its default is no cold tier (logs stay hot)
                cold == null ? (cluster == null ? data.resolve("cold").toUri().toString() : null) : cold,
                get.apply("STRAND_S3_ENDPOINT"),
                get.apply("STRAND_S3_REGION"),
                Boolean.parseBoolean(get.apply("STRAND_S3_PATH_STYLE")),
                new LogConfig.HotThreshold(Long.parseLong(get.apply("STRAND_HOT_MAX_ENTRIES")),
                        Long.parseLong(get.apply("STRAND_HOT_MAX_BYTES")), duration(get.apply("STRAND_HOT_MAX_AGE"))),
                get.apply("STRAND_HOT_ROLL_CYCLE").toLowerCase(Locale.ROOT),
                Integer.parseInt(get.apply("STRAND_WRITERS")),
                Long.parseLong(get.apply("STRAND_MAX_BODY_BYTES")),
                Integer.parseInt(get.apply("STRAND_MAX_FRAME_BYTES")),
                Integer.parseInt(get.apply("STRAND_MAX_CONNECTIONS_PER_WORKSPACE")),
                Integer.parseInt(get.apply("STRAND_MAX_SUBSCRIPTIONS_PER_SOCKET")),
                Integer.parseInt(get.apply("STRAND_WS_READER_THREADS")),
                "auto".equalsIgnoreCase(get.apply("STRAND_WS_EVENT_LOOPS")) ? Math.min(256, Runtime.getRuntime().availableProcessors())
                        : Integer.parseInt(get.apply("STRAND_WS_EVENT_LOOPS")),
                bool(get.apply("STRAND_WS_LOOP_WRITES"), "--ws-loop-writes"),
                duration(get.apply("STRAND_HEARTBEAT")),
                Boolean.parseBoolean(get.apply("STRAND_AUTH")),
                Long.parseLong(get.apply("STRAND_DOC_CAPACITY")),
                duration(get.apply("STRAND_HEADER_TIMEOUT")),
                duration(get.apply("STRAND_BODY_TIMEOUT")),
                duration(get.apply("STRAND_IDLE_TIMEOUT")),
                Integer.parseInt(get.apply("STRAND_MAX_CONNECTIONS")),
                Integer.parseInt(get.apply("STRAND_MAX_CONNECTIONS_PER_IP")),
                bytes(get.apply("STRAND_MIN_FREE_DISK")),
                Integer.parseInt(get.apply("STRAND_WAL_CHECKPOINT_RECORDS")),
                duration(get.apply("STRAND_DS_LONG_POLL_TIMEOUT")),
                retentionDefaults(get),
                duration(get.apply("STRAND_RETENTION_CHECK_INTERVAL")),
                ServerLogging.parse(get.apply("STRAND_LOG_FORMAT"), get.apply("STRAND_LOG_LEVEL")),
                cluster);
    }

    /** {@code true} or {@code false}; anything else is refused, naming {@code option}. */
    static boolean bool(String text, String option) {
        return switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(option + " must be true or false, not '" + text + "'");
        };
    }

    /** {@code 67108864}, {@code 512k}, {@code 64m}, {@code 2g} (binary units). */
    public static long bytes(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        int shift = switch (t.isEmpty() ? ' ' : t.charAt(t.length() - 1)) {
            case 'k' -> 10;
            case 'm' -> 20;
            case 'g' -> 30;
            default -> 0;
        };
        try {
            return Long.parseLong(shift == 0 ? t : t.substring(0, t.length() - 1)) << shift;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a size: '" + text + "' (use 67108864, 512k, 64m or 2g)");
        }
    }

    /** {@code --retention-max-age} (a duration, whole seconds), {@code -max-entries}, {@code -max-bytes}: unset = unlimited. */
    private static io.strand.logtier.RetentionPolicy retentionDefaults(Function<String, String> get) {
        String age = get.apply("STRAND_RETENTION_MAX_AGE");
        String entries = get.apply("STRAND_RETENTION_MAX_ENTRIES");
        String bytes = get.apply("STRAND_RETENTION_MAX_BYTES");
        try {
            return new io.strand.logtier.RetentionPolicy(age == null ? null : Math.max(1, duration(age).toSeconds()),
                    entries == null ? null : Long.valueOf(entries), bytes == null ? null : Long.valueOf(bytes));
        } catch (io.strand.core.StrandException e) {
            throw new IllegalArgumentException("--retention-max-*: " + e.getMessage());
        }
    }

    /** {@code 30s}, {@code 5m}, {@code 2h}, {@code 7d}, {@code 250ms} or ISO-8601 ({@code PT1H}). */
    public static Duration duration(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        try {
            if (t.startsWith("p")) {
                return Duration.parse(t.toUpperCase(Locale.ROOT));
            }
            if (t.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
            }
            long n = Long.parseLong(t.substring(0, t.length() - 1));
            return switch (t.charAt(t.length() - 1)) {
                case 's' -> Duration.ofSeconds(n);
                case 'm' -> Duration.ofMinutes(n);
                case 'h' -> Duration.ofHours(n);
                case 'd' -> Duration.ofDays(n);
                default -> throw new IllegalArgumentException();
            };
        } catch (RuntimeException e) {
            if (e instanceof DateTimeParseException || e instanceof IllegalArgumentException) {
                throw new IllegalArgumentException("not a duration: '" + text + "' (use 30s, 5m, 2h, 7d or PT1H)");
            }
            throw e;
        }
    }

    public LogConfig logConfig() {
        return logConfig(dataDir, durability);
    }

    /**
     * How often a quiet live subscription gets a heartbeat: {@code --heartbeat}, but at most half of
     * {@code --idle-timeout}, since heartbeats are the traffic that keeps a subscriber's socket from
     * being closed as idle.
     */
    public Duration subscriptionHeartbeat() {
        Duration half = idleTimeout.dividedBy(2);
        return heartbeat.compareTo(half) <= 0 ? heartbeat : half;
    }

    /** The object store {@code --cold} names, with the S3 settings applied; null without {@code --cold} (a cluster keeps logs hot). */
    public io.strand.coldtier.ColdStoreConfig coldStoreConfig() {
        if (cold == null || cold.isBlank()) {
            return null;
        }
        io.strand.coldtier.ColdStoreConfig store = io.strand.coldtier.ColdStoreConfig.parse(cold);
        if (store.isS3()) {
            if (s3Endpoint != null && !s3Endpoint.isBlank()) {
                store = store.withEndpoint(URI.create(s3Endpoint));
            }
            store = store.withRegion(s3Region).withPathStyle(s3PathStyle);
        }
        return store;
    }

    /** The log settings for a store set over {@code dir} in {@code mode} (a cluster's shard replicas use their own). */
    public LogConfig logConfig(Path dir, Durability mode) {
        return LogConfig.defaults(dir, mode).withHot(hot).withRollCycle(LogConfig.rollCycleNamed(hotRollCycle));
    }
}
