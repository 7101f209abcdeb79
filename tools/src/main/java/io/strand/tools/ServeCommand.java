package io.strand.tools;

import io.strand.app.Main;
import io.strand.app.ServerConfig;
import java.util.HashMap;
import java.util.Map;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Option;

/** {@code strand serve}: SPEC §10. Flags win over {@code STRAND_*} environment variables. */
@Command(name = "serve", mixinStandardHelpOptions = true, description = "Run the Strand server.",
        modelTransformer = ServeCommand.EverySetting.class, sortOptions = false,
        footer = {"", "Every flag is also an environment variable (--hot-max-age is STRAND_HOT_MAX_AGE); flags win.",
                "", "Examples:", "  strand serve --data ./data --port 8080",
                "  strand serve --cold s3://bucket/strand --s3-endpoint https://HOST --s3-region auto",
                "  STRAND_WRITERS=8 strand serve --durability os"})
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

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        ServerConfig config;
        try {
            config = ServerConfig.from(settings(System.getenv()));
        } catch (IllegalArgumentException e) { // a flag value the server refuses is a usage error, as an unknown flag is
            spec.commandLine().getErr().println("strand: " + e.getMessage());
            return 2;
        }
        Main.serve(config);
        return 0;
    }

    /** {@code env} with every flag given on the command line put over it, by its environment name. */
    Map<String, String> settings(Map<String, String> env) {
        Map<String, String> values = new HashMap<>(env);
        for (String key : ServerConfig.keys()) {
            OptionSpec option = spec.findOption(flag(key));
            if (option != null) {
                put(values, key, option.getValue());
            }
        }
        return values;
    }

    /** {@code STRAND_HOT_MAX_AGE} → {@code --hot-max-age}. */
    static String flag(String key) {
        return "--" + key.substring("STRAND_".length()).toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * Adds an option for every {@link ServerConfig#keys() setting} the fields above do not declare,
     * so a setting added to the server is a flag (and in {@code --help}) without an edit here.
     */
    static final class EverySetting implements CommandLine.IModelTransformer {
        @Override
        public CommandSpec transform(CommandSpec spec) {
            for (String key : ServerConfig.keys()) {
                String flag = flag(key);
                if (spec.findOption(flag) == null) {
                    String def = ServerConfig.DEFAULTS.get(key);
                    spec.addOption(OptionSpec.builder(flag).type(String.class).paramLabel("<" + flag.substring(2) + ">")
                            .description("Env " + key + (def == null ? "" : "; default " + def) + ".").build());
                }
            }
            return spec;
        }
    }

    private static void put(Map<String, String> values, String key, Object value) {
        if (value != null) {
            values.put(key, value.toString());
        }
    }
}
