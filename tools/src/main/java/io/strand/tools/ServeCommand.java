package io.strand.tools;

import io.strand.app.Main;
import io.strand.app.ServerConfig;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code strand serve}: SPEC §10. Flags win over {@code STRAND_*} environment variables. */
@Command(name = "serve", mixinStandardHelpOptions = true, description = "Run the Strand server.")
final class ServeCommand implements Callable<Integer> {
    @Option(names = "--host", description = "Bind address (default 127.0.0.1; env STRAND_HOST).")
    String host;
    @Option(names = "--port", description = "Port; 0 picks a free one (default 8080; env STRAND_PORT).")
    Integer port;
    @Option(names = "--data", description = "Data directory (default ./data; env STRAND_DATA).")
    String data;
    @Option(names = "--durability", description = "fsync (default) or os (env STRAND_DURABILITY).")
    String durability;
    @Option(names = "--cold", description = "Cold store: file:///dir (default DATA/cold) or s3://bucket/prefix (env STRAND_COLD).")
    String cold;
    @Option(names = "--s3-endpoint", description = "S3-compatible endpoint URL, e.g. R2's (env STRAND_S3_ENDPOINT).")
    String s3Endpoint;
    @Option(names = "--s3-region", description = "Region (R2: auto; env STRAND_S3_REGION).")
    String s3Region;
    @Option(names = "--s3-path-style", description = "Path-style addressing (env STRAND_S3_PATH_STYLE).")
    Boolean s3PathStyle;
    @Option(names = "--hot-max-entries", description = "Roll to cold past this many hot entries per log.")
    Long hotMaxEntries;
    @Option(names = "--hot-max-bytes", description = "Roll to cold past this many hot bytes per log.")
    Long hotMaxBytes;
    @Option(names = "--hot-max-age", description = "Roll to cold entries older than this (30s, 5m, 2h, 7d).")
    String hotMaxAge;
    @Option(names = "--auth", arity = "1", paramLabel = "true|false",
            description = "Signed tokens (default true; DATA/root.token is created on first start). false lets every request act as root (env STRAND_AUTH).")
    Boolean auth;
    @Option(names = "--hot-roll-cycle", description = "Hot file cycle: hourly (default), daily, five-minutely, minutely, secondly (tests).")
    String hotRollCycle;
    @Option(names = "--header-timeout", description = "A request's line and headers must arrive within this, or 408 and close "
            + "(default 10s; env STRAND_HEADER_TIMEOUT). WebSockets and kept-alive connections are not cut by it.")
    String headerTimeout;
    @Option(names = "--body-timeout", description = "A request's body must arrive within this of its headers, or the "
            + "connection is closed (default 60s; env STRAND_BODY_TIMEOUT).")
    String bodyTimeout;
    @Option(names = "--idle-timeout", description = "A kept-alive HTTP connection with no request, or a WebSocket with no "
            + "frame either way, for this long is closed (default 5m; env STRAND_IDLE_TIMEOUT).")
    String idleTimeout;
    @Option(names = "--max-connections", description = "Open connections (HTTP and WebSocket) past which new ones get 503 "
            + "(default 16000; env STRAND_MAX_CONNECTIONS). Keep below the open-file limit.")
    Integer maxConnections;
    @Option(names = "--max-connections-per-ip", description = "Open connections from one address past which new ones get 429 "
            + "(default 0 = no cap, as behind a proxy; env STRAND_MAX_CONNECTIONS_PER_IP).")
    Integer maxConnectionsPerIp;
    @Option(names = "--min-free-disk", description = "Free space the data directory keeps: writes past it get 507 storage_full "
            + "and health's diskSpace check goes DOWN (default 64m; 512k, 64m, 2g; env STRAND_MIN_FREE_DISK).")
    String minFreeDisk;
    @Option(names = "--wal-checkpoint-records", description = "Checkpoint a writer's write-ahead segment after this many records (default 8192): bounds the replay after a crash.")
    Integer walCheckpointRecords;
    @Option(names = "--ds-long-poll-timeout",
            description = "How long a Durable Streams long-poll waits for data (default 20s; env STRAND_DS_LONG_POLL_TIMEOUT).")
    String dsLongPollTimeout;
    @Option(names = "--retention-max-age", description = "Default retention of logs without their own policy: keep entries younger than this (30s, 5m, 2h, 7d); unset = unlimited.")
    String retentionMaxAge;
    @Option(names = "--retention-max-entries", description = "Default retention: keep at most this many newest entries per log; unset = unlimited.")
    Long retentionMaxEntries;
    @Option(names = "--retention-max-bytes", description = "Default retention: keep about this many bytes of newest entry data per log; unset = unlimited.")
    Long retentionMaxBytes;
    @Option(names = "--retention-check-interval", description = "How often the retention worker checks every log (default 30s, at most 60s).")
    String retentionCheckInterval;

    @Option(names = "--log-format", description = "text (default) or json: one JSON object per log line (env STRAND_LOG_FORMAT).")
    String logFormat;
    @Option(names = "--log-level", description = "error, warn, info (default), debug or trace (env STRAND_LOG_LEVEL).")
    String logLevel;

    @Override
    public Integer call() throws Exception {
        Map<String, String> values = new HashMap<>(System.getenv());
        put(values, "STRAND_HOST", host);
        put(values, "STRAND_PORT", port);
        put(values, "STRAND_DATA", data);
        put(values, "STRAND_DURABILITY", durability);
        put(values, "STRAND_COLD", cold);
        put(values, "STRAND_S3_ENDPOINT", s3Endpoint);
        put(values, "STRAND_S3_REGION", s3Region);
        put(values, "STRAND_S3_PATH_STYLE", s3PathStyle);
        put(values, "STRAND_HOT_MAX_ENTRIES", hotMaxEntries);
        put(values, "STRAND_HOT_MAX_BYTES", hotMaxBytes);
        put(values, "STRAND_HOT_MAX_AGE", hotMaxAge);
        put(values, "STRAND_AUTH", auth);
        put(values, "STRAND_HOT_ROLL_CYCLE", hotRollCycle);
        put(values, "STRAND_HEADER_TIMEOUT", headerTimeout);
        put(values, "STRAND_BODY_TIMEOUT", bodyTimeout);
        put(values, "STRAND_IDLE_TIMEOUT", idleTimeout);
        put(values, "STRAND_MAX_CONNECTIONS", maxConnections);
        put(values, "STRAND_MAX_CONNECTIONS_PER_IP", maxConnectionsPerIp);
        put(values, "STRAND_MIN_FREE_DISK", minFreeDisk);
        put(values, "STRAND_WAL_CHECKPOINT_RECORDS", walCheckpointRecords);
        put(values, "STRAND_DS_LONG_POLL_TIMEOUT", dsLongPollTimeout);
        put(values, "STRAND_RETENTION_MAX_AGE", retentionMaxAge);
        put(values, "STRAND_RETENTION_MAX_ENTRIES", retentionMaxEntries);
        put(values, "STRAND_RETENTION_MAX_BYTES", retentionMaxBytes);
        put(values, "STRAND_RETENTION_CHECK_INTERVAL", retentionCheckInterval);
        put(values, "STRAND_LOG_FORMAT", logFormat);
        put(values, "STRAND_LOG_LEVEL", logLevel);
        Main.serve(ServerConfig.from(values));
        return 0;
    }

    private static void put(Map<String, String> values, String key, Object value) {
        if (value != null) {
            values.put(key, value.toString());
        }
    }
}
