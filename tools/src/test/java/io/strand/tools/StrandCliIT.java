package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.ServerProcess;
import io.strand.app.testing.Http;
import io.strand.core.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The {@code strand} CLI end to end against a real server in a child JVM (auth on, as shipped). */
@Timeout(300)
class StrandCliIT {
    @TempDir
    static Path dir;
    static Path data;
    static ServerProcess server;
    static Http root;

    record Run(int exit, String out, String err) {
        List<String> lines() {
            return out.isBlank() ? List.of() : Arrays.asList(out.strip().split("\n"));
        }
    }

    @BeforeAll
    static void start() throws Exception {
        data = dir.resolve("data");
        server = ServerProcess.start(data, List.of("--durability", "os"), List.of());
        root = new Http(server.url, Files.readString(data.resolve("root.token")).strip());
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    /** {@code strand GROUP SUB --url … --data … ARGS}, with output captured. */
    static Run cli(String url, Path dataDir, String group, String sub, String... args) {
        List<String> all = new ArrayList<>(List.of(group, sub, "--url", url, "--data", dataDir.toString()));
        all.addAll(List.of(args));
        return exec(all.toArray(String[]::new));
    }

    static Run cli(String group, String sub, String... args) {
        return cli(server.url, data, group, sub, args);
    }

    static Run exec(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        var cl = StrandCli.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    static void await(String what, long timeoutMillis, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeoutMillis + " ms waiting for " + what);
            }
            LockSupport.parkNanos(20_000_000);
        }
    }

    @Test
    void theServerShouldCreateAnOwnerOnlyRootTokenThatTheCliUsesByDefault() throws Exception {
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(data.resolve("root.token"))));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(data.resolve("secret"))));
        assertEquals(1, Files.readAllLines(data.resolve("root.token")).size());
        Run ls = cli("logs", "ls", "-w", "fresh");
        assertEquals(0, ls.exit(), ls.err());
        Run noToken = cli(server.url, dir.resolve("elsewhere"), "logs", "ls", "-w", "fresh");
        assertEquals(1, noToken.exit());
        assertTrue(noToken.err().contains("strand: unauthorized: missing bearer token"), noToken.err());
        assertTrue(noToken.err().contains("looked at --token, the STRAND_TOKEN environment variable and "
                + dir.resolve("elsewhere").resolve("root.token")), "says where it looked: " + noToken.err());
    }

    @Test
    void logsLsShouldShowADurableStreamsLogsPathAndContentType() {
        assertEquals(201, root.put("/ds/dsls/orders/eu", "[{\"n\":1}]").status()); // the log exists from its first entry
        assertEquals(0, cli("logs", "append", "-w", "dsls", "plain", "1").exit());
        Run ls = cli("logs", "ls", "-w", "dsls");
        assertEquals(0, ls.exit(), ls.err());
        assertTrue(ls.lines().contains("plain"), ls.out());
        assertTrue(ls.lines().stream().anyMatch(l -> l.startsWith("ds-") && l.endsWith("\tds:orders/eu\tapplication/json")), ls.out());
        JsonNode json = Json.parse(cli("logs", "ls", "-w", "dsls", "--json").out());
        assertEquals(2, json.get("logs").size(), json.toString());
        assertEquals("orders/eu", json.get("ds").properties().iterator().next().getValue().get("dsPath").asText(), json.toString());
    }

    @Test
    void logsCommandsShouldAppendReadInspectListAndDelete() {
        Run append = cli("logs", "append", "-w", "acme", "chat", "hello", "{\"a\":1}", "42");
        assertEquals(0, append.exit(), append.err());
        assertEquals("appended 3 entries to chat: seq 1..3 (os)", append.out().strip());
        Run keyed = cli("logs", "append", "-w", "acme", "--key", "k1", "--string", "chat", "{\"as\":\"text\"}");
        assertEquals("appended 1 entry to chat: seq 4 (os)", keyed.out().strip());

        Run read = cli("logs", "read", "-w", "acme", "chat");
        assertEquals(0, read.exit(), read.err());
        List<String> lines = read.lines();
        assertEquals(4, lines.size(), read.out());
        assertTrue(lines.get(0).startsWith("1  ") && lines.get(0).endsWith("  \"hello\""), lines.get(0));
        assertTrue(lines.get(1).endsWith("  {\"a\":1}"), lines.get(1));
        assertTrue(lines.get(3).contains("  key=k1  \"{\\\"as\\\":\\\"text\\\"}\""), lines.get(3));

        Run json = cli("logs", "read", "-w", "acme", "--json", "--from", "2", "-n", "2", "chat");
        List<String> jl = json.lines();
        assertEquals(2, jl.size(), json.out());
        assertEquals(2, Json.parse(jl.get(0)).get("seq").asLong());
        assertEquals(42, Json.parse(jl.get(1)).get("data").asLong());

        Run last = cli("logs", "read", "-w", "acme", "--before", "end", "-n", "2", "chat");
        assertEquals(List.of("3", "4"), last.lines().stream().map(l -> l.split(" ")[0]).toList());

        Run info = cli("logs", "info", "-w", "acme", "--json", "chat");
        assertEquals(4, Json.parse(info.out()).get("head").asLong(), info.out());
        Run human = cli("logs", "info", "-w", "acme", "chat");
        assertTrue(human.out().contains("head: 4"), human.out());

        Run ls = cli("logs", "ls", "-w", "acme");
        assertTrue(ls.lines().contains("chat"), ls.out());

        Run delete = cli("logs", "delete", "-w", "acme", "--yes", "chat");
        assertEquals(0, delete.exit(), delete.err());
        Run gone = cli("logs", "info", "-w", "acme", "chat");
        assertEquals(1, gone.exit());
        assertTrue(gone.err().startsWith("strand: not_found: "), gone.err());

        Run audit = cli("logs", "read", "-w", "_system", "--json", "--all", "audit");
        assertEquals(0, audit.exit(), audit.err());
        assertTrue(audit.lines().stream().map(Json::parse)
                .anyMatch(e -> e.get("data").get("action").asText().equals("log.delete")
                        && e.get("data").get("target").asText().equals("log:acme/chat")), audit.out());
    }

    @Test
    void readAllShouldFollowEveryPageToTheHead() {
        for (int batch = 0; batch < 5; batch++) {
            StringBuilder body = new StringBuilder("{\"entries\":[");
            for (int i = 0; i < 500; i++) {
                body.append(i == 0 ? "" : ",").append("{\"data\":").append(batch * 500 + i + 1).append('}');
            }
            assertEquals(200, root.post("/v1/ws/acme/logs/big/entries", body.append("]}").toString()).status());
        }
        Run read = cli("logs", "read", "-w", "acme", "--all", "--json", "big");
        assertEquals(0, read.exit(), read.err());
        List<String> lines = read.lines();
        assertEquals(2500, lines.size());
        for (int i = 0; i < lines.size(); i++) {
            JsonNode e = Json.parse(lines.get(i));
            assertEquals(i + 1, e.get("seq").asLong());
            assertEquals(i + 1, e.get("data").asLong());
        }
        Run limited = cli("logs", "read", "-w", "acme", "--from", "2400", "-n", "1500", "big");
        assertEquals(101, limited.lines().size(), "stops at the head");
    }

    @Test
    void mintedTokensShouldBeScopedAndRevocable() {
        Run mint = cli("token", "mint", "-w", "acme", "--scope", "read", "--ttl", "5m", "--json");
        assertEquals(0, mint.exit(), mint.err());
        JsonNode minted = Json.parse(mint.out());
        String token = minted.get("token").asText();
        Run human = cli("token", "mint", "-w", "acme", "--scope", "rw");
        assertEquals(1, human.lines().size(), "only the token on stdout");
        assertTrue(human.err().startsWith("jti "), human.err());

        assertEquals(0, cli("logs", "read", "-w", "acme", "--token", token, "anything").exit());
        Run write = cli("logs", "append", "-w", "acme", "--token", token, "anything", "1");
        assertEquals(1, write.exit());
        assertTrue(write.err().startsWith("strand: forbidden: "), write.err());
        Run otherWs = cli("logs", "read", "-w", "beta", "--token", token, "anything");
        assertEquals(1, otherWs.exit());
        assertTrue(otherWs.err().startsWith("strand: forbidden: "), otherWs.err());

        Run revoke = cli("token", "revoke", minted.get("jti").asText());
        assertEquals(0, revoke.exit(), revoke.err());
        assertEquals("revoked " + minted.get("jti").asText(), revoke.out().strip());
        Run after = cli("logs", "read", "-w", "acme", "--token", token, "anything");
        assertEquals(1, after.exit());
        assertTrue(after.err().startsWith("strand: unauthorized: "), after.err());
    }

    @Test
    void usageErrorsShouldExit2AndHelpShouldExit0() {
        assertEquals(2, exec("logs").exit());
        assertEquals(2, exec("logs", "read").exit(), "LOG is required");
        assertEquals(2, exec("logs", "bogus").exit());
        assertEquals(2, exec("logs", "read", "x", "--from", "1", "--before", "end").exit());
        assertEquals(2, exec("token", "mint", "--ttl", "soon").exit());
        assertEquals(2, exec("logs", "tail", "x", "--from", "yesterday").exit());
        assertEquals(2, exec("logs", "tail", "x", "--from", "-5").exit(), "a negative seq is not silently the start");
        assertEquals(2, exec("logs", "tail", "x", "-n", "0").exit(), "-n 0 would follow forever, not stop");
        assertEquals(2, exec("token", "mint", "--ttl", "0s").exit(), "not a 1 s token");
        assertEquals(2, exec("token", "mint", "--ttl", "100ms").exit());
        // a flag value the server refuses is a usage error too (SPEC §9: 2 usage), before anything starts
        for (String[] bad : new String[][] {{"--durability", "bogus"}, {"--port", "99999"}, {"--hot-max-age", "xyz"},
                {"--retention-max-entries", "-5"}}) {
            Run serve = exec("serve", bad[0], bad[1]);
            assertEquals(2, serve.exit(), String.join(" ", bad) + ": " + serve.err());
            assertTrue(serve.err().startsWith("strand: "), serve.err());
        }
        for (String[] cmd : new String[][] {{}, {"logs"}, {"logs", "ls"}, {"logs", "info"}, {"logs", "append"}, {"logs", "read"},
                {"logs", "tail"}, {"logs", "delete"}, {"logs", "trim"}, {"logs", "retention"}, {"docs"}, {"docs", "get"}, {"docs", "put"}, {"docs", "incr"},
                {"token"}, {"token", "mint"}, {"token", "revoke"}, {"serve"}, {"bench"}, {"ws", "ls"}, {"docs", "ls"},
                {"docs", "cas"}, {"docs", "apply"}, {"docs", "delete"}, {"completion"}}) {
            List<String> args = new ArrayList<>(List.of(cmd));
            args.add("--help");
            Run help = exec(args.toArray(String[]::new));
            assertEquals(0, help.exit(), String.join(" ", args) + ": " + help.err());
            assertTrue(help.out().startsWith("Usage: strand"), help.out());
        }
    }

    @Test
    void logsLsLongShouldShowEntriesBytesAndLastAppendAsTableOrJson() {
        assertEquals(0, cli("logs", "append", "-w", "lsl", "orders", "{\"n\":1}", "{\"n\":2}", "{\"n\":3}").exit());
        assertEquals(0, cli("logs", "append", "-w", "lsl", "audit", "x").exit());
        Run table = cli("logs", "ls", "-w", "lsl", "-l");
        assertEquals(0, table.exit(), table.err());
        List<String> lines = table.lines();
        assertEquals(3, lines.size(), table.out());
        assertTrue(lines.get(0).matches("LOG +ENTRIES +BYTES +LAST APPEND.*"), lines.get(0));
        assertTrue(lines.get(2).matches("orders +3 +\\d+ B +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ \\(\\d+s ago\\).*"), lines.get(2));
        Run json = cli("logs", "ls", "-w", "lsl", "-l", "-o", "json");
        assertEquals(0, json.exit(), json.err());
        JsonNode orders = Json.parse(json.out()).get("logs").get(1);
        assertEquals("orders", orders.get("name").asText());
        assertEquals(3, orders.get("entries").asLong());
        assertTrue(orders.get("bytes").asLong() > 0, orders.toString());
        assertTrue(Math.abs(System.currentTimeMillis() - orders.get("lastAppend").asLong()) < 600_000, orders.toString());
        Run names = cli("logs", "ls", "-w", "lsl", "--output", "json");
        assertEquals("[\"audit\",\"orders\"]", Json.string(Json.parse(names.out()).get("logs")), names.out());
        assertEquals("audit\norders", cli("logs", "ls", "-w", "lsl", "-o", "table").out().strip());
        assertEquals(2, cli("logs", "ls", "-w", "lsl", "-o", "xml").exit());
        Run info = cli("logs", "info", "-w", "lsl", "orders");
        assertTrue(info.out().matches("(?s).*created: \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ \\(\\d+s ago\\).*"), info.out());
    }

    @Test
    void appendWithAProducerShouldLandAtMostOnce() {
        Run first = cli("logs", "append", "-w", "prod", "ledger", "--producer-id", "billing-7", "--producer-seq", "42", "{\"charge\":5}");
        assertEquals(0, first.exit(), first.err());
        assertTrue(first.out().contains("seq 1 ") && !first.out().contains("duplicate"), first.out());
        Run again = cli("logs", "append", "-w", "prod", "ledger", "--producer-id", "billing-7", "--producer-seq", "42", "{\"charge\":5}");
        assertEquals(0, again.exit(), again.err());
        assertTrue(again.out().contains("duplicate"), again.out());
        assertEquals(1, Json.parse(cli("logs", "info", "-w", "prod", "--json", "ledger").out()).get("entries").asLong());
        assertEquals(2, cli("logs", "append", "-w", "prod", "ledger", "--producer-id", "billing-7", "x").exit(),
                "--producer-id needs --producer-seq");
    }

    @Test
    void logsDeleteShouldAskFirstAndRefuseWithoutYesWhenNotOnATerminal() {
        assertEquals(0, cli("logs", "append", "-w", "del", "keep", "x").exit());
        Run refused = cli("logs", "delete", "-w", "del", "keep");
        assertEquals(2, refused.exit(), refused.out());
        assertTrue(refused.err().contains("without --yes"), refused.err());
        assertEquals(1, Json.parse(cli("logs", "info", "-w", "del", "--json", "keep").out()).get("entries").asLong(), "nothing deleted");
        Run yes = cli("logs", "delete", "-w", "del", "-y", "keep");
        assertEquals(0, yes.exit(), yes.err());
        assertEquals(1, cli("logs", "info", "-w", "del", "keep").exit());
    }

    @Test
    void docsCommandsShouldListCasApplyAndDelete() {
        assertEquals(0, cli("docs", "put", "-w", "dcs", "wallet", "{\"balance\":100}").exit());
        assertEquals(0, cli("docs", "put", "-w", "dcs", "cart", "{}").exit());
        assertEquals("cart\nwallet", cli("docs", "ls", "-w", "dcs").out().strip());
        assertEquals("{\"docs\":[\"cart\",\"wallet\"]}", cli("docs", "ls", "-w", "dcs", "-o", "json").out().strip());
        Run cas = cli("docs", "cas", "-w", "dcs", "--json", "wallet", "owner", "ann");
        assertEquals(0, cas.exit(), cas.err());
        assertEquals("ann", Json.parse(cas.out()).get("value").get("owner").asText());
        Run conflict = cli("docs", "cas", "-w", "dcs", "wallet", "owner", "bob", "--expect", "carl");
        assertEquals(1, conflict.exit());
        assertTrue(conflict.err().startsWith("strand: cas_conflict: "), conflict.err());
        Run apply = cli("docs", "apply", "-w", "dcs", "--json", "wallet",
                "[{\"op\":\"incr\",\"path\":\"balance\",\"delta\":-5,\"floor\":0},{\"op\":\"set\",\"path\":\"last\",\"value\":\"coffee\"}]");
        assertEquals(0, apply.exit(), apply.err());
        JsonNode applied = Json.parse(apply.out());
        assertEquals(95, applied.get("value").get("balance").asLong());
        assertEquals("coffee", applied.get("value").get("last").asText());
        assertEquals(2, cli("docs", "apply", "-w", "dcs", "wallet", "{\"op\":\"set\"}").exit(), "OPS must be an array");
        long version = applied.get("version").asLong();
        Run stale = cli("docs", "delete", "-w", "dcs", "wallet", "--expect-version", String.valueOf(version - 1));
        assertEquals(1, stale.exit());
        assertTrue(stale.err().startsWith("strand: version_conflict: "), stale.err());
        Run delete = cli("docs", "delete", "-w", "dcs", "wallet", "--expect-version", String.valueOf(version));
        assertEquals(0, delete.exit(), delete.err());
        assertEquals("deleted doc wallet (version " + version + ")", delete.out().strip());
        assertEquals("cart", cli("docs", "ls", "-w", "dcs").out().strip());
    }

    @Test
    void wsLsShouldListWorkspacesWithCountsAndBytes() {
        assertEquals(0, cli("logs", "append", "-w", "inv", "a", "x").exit());
        assertEquals(0, cli("docs", "put", "-w", "inv", "d", "{\"k\":1}").exit());
        Run json = cli("ws", "ls", "-o", "json");
        assertEquals(0, json.exit(), json.err());
        JsonNode inv = null;
        for (JsonNode w : Json.parse(json.out()).get("workspaces")) {
            if (w.get("ws").asText().equals("inv")) {
                inv = w;
            }
        }
        assertTrue(inv != null && inv.get("logs").asLong() == 1 && inv.get("docs").asLong() == 1, json.out());
        Run table = cli("ws", "ls");
        assertEquals(0, table.exit(), table.err());
        assertTrue(table.lines().get(0).matches("WORKSPACE +LOGS +ENTRIES +LOG BYTES +DOCS +DOC BYTES"), table.out());
        assertTrue(table.lines().stream().anyMatch(l -> l.matches("inv +1 +1 +\\d+ B +1 +\\d+ B")), table.out());
    }

    @Test
    void completionShouldPrintBashAndZshScriptsCoveringEveryCommand() {
        Run bash = exec("completion", "bash");
        assertEquals(0, bash.exit(), bash.err());
        assertTrue(bash.out().contains("complete -F _complete_strand"), bash.out().substring(0, 300));
        for (String word : List.of("serve", "logs", "docs", "ws", "token", "cold", "--producer-id", "--yes", "--writers")) {
            assertTrue(bash.out().contains(word), word);
        }
        Run zsh = exec("completion", "zsh");
        assertEquals(0, zsh.exit(), zsh.err());
        assertTrue(zsh.out().startsWith("autoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n"));
        assertEquals(2, exec("completion", "fish").exit());
    }

    @Test
    void helpShouldShowExamples() {
        for (String[] cmd : new String[][] {{"--help"}, {"logs", "append", "--help"}, {"logs", "ls", "--help"}, {"logs", "delete", "--help"},
                {"docs", "apply", "--help"}, {"docs", "cas", "--help"}, {"serve", "--help"}, {"completion", "--help"}}) {
            Run help = exec(cmd);
            assertTrue(help.out().contains("\nExamples:\n  strand "), String.join(" ", cmd) + ":\n" + help.out());
        }
    }

    @Test
    void serveHelpShouldListEverySettingAsAFlagThatReachesTheConfig() {
        String help = exec("serve", "--help").out();
        java.util.Map<String, String> env = new java.util.HashMap<>();
        List<String> args = new ArrayList<>(List.of("serve"));
        for (String key : io.strand.app.ServerConfig.keys()) {
            String flag = ServeCommand.flag(key);
            assertTrue(help.contains(flag + "=") || help.contains(flag + " "), key + " → " + flag + " missing from serve --help");
            env.put(key, "from-env");
        }
        args.addAll(List.of("--writers", "3", "--doc-capacity", "1234", "--heartbeat", "5s", "--max-body-bytes", "99",
                "--max-frame-bytes", "77", "--max-connections-per-workspace", "5", "--max-subscriptions-per-socket", "6",
                "--port", "9"));
        var cl = StrandCli.commandLine();
        var parsed = cl.parseArgs(args.toArray(String[]::new));
        ServeCommand serve = parsed.subcommand().commandSpec().commandLine().getCommand();
        java.util.Map<String, String> settings = serve.settings(env);
        assertEquals("3", settings.get("STRAND_WRITERS"));
        assertEquals("1234", settings.get("STRAND_DOC_CAPACITY"));
        assertEquals("5s", settings.get("STRAND_HEARTBEAT"));
        assertEquals("99", settings.get("STRAND_MAX_BODY_BYTES"));
        assertEquals("77", settings.get("STRAND_MAX_FRAME_BYTES"));
        assertEquals("5", settings.get("STRAND_MAX_CONNECTIONS_PER_WORKSPACE"));
        assertEquals("6", settings.get("STRAND_MAX_SUBSCRIPTIONS_PER_SOCKET"));
        assertEquals("9", settings.get("STRAND_PORT"));
        assertEquals("from-env", settings.get("STRAND_HOT_MAX_AGE"), "a flag not given leaves the environment's value");
    }

    @Test
    void aRunShouldBuildOnlyTheCommandItNames() {
        assertEquals(List.of("logs"), List.copyOf(StrandCli.commandLine(new String[] {"logs", "ls"}).getSubcommands().keySet()));
        assertEquals(List.copyOf(StrandCli.SUBCOMMANDS.keySet()), List.copyOf(StrandCli.commandLine().getSubcommands().keySet()));
    }

    @Test
    void logsTrimAndRetentionShouldSetFirstAndPolicyAndInfoShouldShowThem() {
        assertEquals(0, cli("logs", "append", "-w", "acme", "kept", "1", "2", "3", "4", "5", "6").exit());
        Run trim = cli("logs", "trim", "-w", "acme", "kept", "--before", "3");
        assertEquals(0, trim.exit(), trim.err());
        assertEquals("log kept now starts at seq 3 (head 6)", trim.out().strip());
        Run past = cli("logs", "trim", "-w", "acme", "kept", "--before", "9");
        assertEquals(1, past.exit());
        assertTrue(past.err().startsWith("strand: bad_request: "), past.err());
        Run policy = cli("logs", "retention", "-w", "acme", "--json", "kept", "--max-age", "7d", "--max-entries", "1000");
        assertEquals(0, policy.exit(), policy.err());
        assertEquals(604_800, Json.parse(policy.out()).get("retention").get("maxAgeSeconds").asLong(), policy.out());
        JsonNode info = Json.parse(cli("logs", "info", "-w", "acme", "--json", "kept").out());
        assertEquals(3, info.get("first").asLong(), info.toString());
        assertEquals(1000, info.get("retention").get("maxEntries").asLong(), info.toString());
        assertTrue(info.get("bytesHot").asLong() > 0 && info.has("bytesCold"), info.toString());
        Run human = cli("logs", "info", "-w", "acme", "kept");
        assertTrue(human.out().contains("first: 3") && human.out().contains("retention: {\"maxAgeSeconds\":604800"), human.out());
        Run clear = cli("logs", "retention", "-w", "acme", "kept", "--clear");
        assertEquals(0, clear.exit(), clear.err());
        assertEquals("retention of log kept: {\"maxAgeSeconds\":null,\"maxEntries\":null,\"maxBytes\":null}", clear.out().strip());
        assertEquals(2, exec("logs", "retention", "-w", "acme", "kept").exit(), "a limit or --clear is required");
        assertEquals(2, exec("logs", "retention", "-w", "acme", "kept", "--clear", "--max-entries", "5").exit());
        assertEquals(2, exec("logs", "trim", "-w", "acme", "kept").exit(), "--before is required");
        Run audit = cli("logs", "read", "-w", "_system", "--json", "--all", "audit");
        assertTrue(audit.out().contains("\"log.trim\"") && audit.out().contains("\"log.retention\""), audit.out());
    }

    @Test
    void serverErrorsShouldPrintTheCodeAndMessageAndExit1() {
        Run bad = cli("logs", "read", "-w", "Not_Valid", "x");
        assertEquals(1, bad.exit());
        assertTrue(bad.err().startsWith("strand: invalid_name: "), bad.err());
        Run down = cli("http://127.0.0.1:1", data, "logs", "ls");
        assertEquals(1, down.exit());
        assertTrue(down.err().startsWith("strand: unreachable: cannot reach http://127.0.0.1:1"), down.err());
    }

    @Test
    void docsCommandsShouldPutGetAndIncrement() {
        Run put = cli("docs", "put", "-w", "acme", "wallet", "{\"balance\":10}");
        assertEquals(0, put.exit(), put.err());
        assertTrue(put.out().startsWith("version "), put.out());
        Run incr = cli("docs", "incr", "-w", "acme", "--floor", "0", "wallet", "balance", "-5");
        assertEquals(0, incr.exit(), incr.err());
        assertTrue(incr.out().startsWith("5 (version "), incr.out());
        Run refused = cli("docs", "incr", "-w", "acme", "--floor", "0", "wallet", "balance", "-6");
        assertEquals(1, refused.exit());
        assertTrue(refused.err().startsWith("strand: floor_violation: "), refused.err());
        Run get = cli("docs", "get", "-w", "acme", "--json", "wallet");
        assertEquals(5, Json.parse(get.out()).get("value").get("balance").asLong(), get.out());
        assertEquals(2, cli("docs", "put", "-w", "acme", "wallet", "[1,2]").exit(), "VALUE must be an object");
    }

    @Test
    void tailShouldResumeAcrossServerRestartsWithNoEntryLostOrRepeated() throws Exception {
        Path restartData = dir.resolve("restart");
        ServerProcess first = ServerProcess.start(restartData, List.of("--durability", "os"), List.of());
        String url = first.url;
        String port = String.valueOf(URI.create(url).getPort());
        String token = Files.readString(restartData.resolve("root.token")).strip();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> tail = new CompletableFuture<>();
        List<ServerProcess> servers = new ArrayList<>(List.of(first));
        try {
            appendNumbered(new Http(url, token), 1, 100);
            Thread.ofVirtual().name("cli-tail").start(() -> {
                var cl = StrandCli.commandLine();
                cl.setOut(new PrintWriter(out, true));
                cl.setErr(new PrintWriter(err, true));
                tail.complete(cl.execute("logs", "tail", "--url", url, "--data", restartData.toString(), "-w", "acme",
                        "--from", "1", "--count", "300", "t"));
            });
            await("the first 100 entries", 30_000, () -> lines(out) >= 100);

            first.kill(); // SIGKILL under a live tail
            ServerProcess second = ServerProcess.start(restartData, List.of("--durability", "os", "--port", port), List.of());
            servers.add(second);
            appendNumbered(new Http(url, token), 101, 100); // likely before the tail is back: it must catch up from its cursor
            await("entries up to 200", 60_000, () -> lines(out) >= 200);

            second.terminate(); // SIGTERM: a clean shutdown under a live tail
            ServerProcess third = ServerProcess.start(restartData, List.of("--durability", "os", "--port", port), List.of());
            servers.add(third);
            appendNumbered(new Http(url, token), 201, 100);
            assertEquals(0, tail.get(60, TimeUnit.SECONDS), err.toString());
        } finally {
            for (ServerProcess s : servers) {
                s.close();
            }
        }
        List<String> printed = Arrays.asList(out.toString().strip().split("\n"));
        assertEquals(300, printed.size(), err.toString());
        for (int i = 0; i < printed.size(); i++) {
            String[] f = printed.get(i).split("  ");
            assertEquals(String.valueOf(i + 1), f[0], "seq in order, once each: " + printed.get(i));
            assertEquals("{\"n\":" + (i + 1) + "}", f[2], printed.get(i));
        }
        assertTrue(err.toString().contains("reconnected; resuming at seq"), err.toString());
        System.out.println("tail across restarts, stderr:\n" + err);
    }

    @Test
    void tailShouldStopWithUnauthorizedWhenItsTokenIsRevoked() throws Exception {
        JsonNode minted = Json.parse(cli("token", "mint", "-w", "acme", "--scope", "read", "--json").out());
        String token = minted.get("token").asText();
        assertEquals(200, root.post("/v1/ws/acme/logs/rv/entries", "{\"data\":{\"n\":1}}").status());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> tail = new CompletableFuture<>();
        Thread.ofVirtual().name("cli-tail-revoked").start(() -> {
            var cl = StrandCli.commandLine();
            cl.setOut(new PrintWriter(out, true));
            cl.setErr(new PrintWriter(err, true));
            tail.complete(cl.execute("logs", "tail", "--url", server.url, "--token", token, "-w", "acme", "--from", "1", "rv"));
        });
        await("the first entry", 30_000, () -> lines(out) >= 1);
        assertEquals(0, cli("token", "revoke", minted.get("jti").asText()).exit());
        assertEquals(1, tail.get(10, TimeUnit.SECONDS));
        assertTrue(err.toString().contains("strand: unauthorized: the token expired or was revoked"), err.toString());

        Run again = cli("logs", "tail", "--token", token, "-w", "acme", "rv");
        assertEquals(1, again.exit());
        assertEquals("strand: unauthorized: the token was revoked", again.err().strip());
    }

    private static int lines(StringWriter w) {
        String s = w.toString();
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == '\n') {
                n++;
            }
        }
        return n;
    }

    private static void appendNumbered(Http http, int first, int n) {
        for (int i = first; i < first + n; i += 10) {
            StringBuilder body = new StringBuilder("{\"entries\":[");
            for (int j = i; j < i + 10; j++) {
                body.append(j == i ? "" : ",").append("{\"data\":{\"n\":").append(j).append("}}");
            }
            Http.Reply r = http.post("/v1/ws/acme/logs/t/entries", body.append("]}").toString());
            assertEquals(200, r.status(), r.body());
        }
    }
}
