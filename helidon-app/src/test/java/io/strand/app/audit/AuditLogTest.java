package io.strand.app.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.auth.Principal;
import io.strand.core.Durability;
import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.core.WriteAheadLog;
import io.strand.core.Writers;
import io.strand.logtier.LogConfig;
import io.strand.logtier.LogStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link AuditLog#perform}: intent durable before the action, outcome after, and which failure answers what. */
class AuditLogTest {
    @TempDir
    Path dir;
    Writers writers;
    LogStore logs;
    AuditLog audit;
    Path auditDir;

    @BeforeEach
    void open() {
        LogConfig config = LogConfig.defaults(dir, Durability.OS);
        writers = new Writers("test", 1, config.durability(), 1024, new WriteAheadLog(dir.resolve("wal")), nanos -> { });
        logs = new LogStore(config, writers);
        writers.recover();
        audit = new AuditLog(logs);
        auditDir = config.logsDir().resolve(Names.SYSTEM_WORKSPACE).resolve(AuditLog.LOG);
    }

    @AfterEach
    void close() {
        logs.close();
        writers.close();
    }

    private List<JsonNode> entries() {
        return logs.readForward(Names.SYSTEM_WORKSPACE, AuditLog.LOG, 1, 1000).entries().stream()
                .map(Entry::data).map(Json::parse).toList();
    }

    /** Makes the audit log unwritable: a plain file where its directory would be. */
    private void breakAuditLog() {
        try {
            Files.createDirectories(auditDir.getParent());
            Files.writeString(auditDir, "not a log");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void anUnwritableIntentShouldRefuseTheActionBeforeItRuns() {
        breakAuditLog();
        AtomicBoolean ran = new AtomicBoolean();
        StrandException e = assertThrows(StrandException.class, () -> audit.perform(Principal.ROOT, "log.delete", "log:a/b",
                Map.of(), () -> ran.getAndSet(true), r -> Map.of()));
        assertFalse(ran.get(), "the action did not run");
        assertEquals(ErrorCode.UNAVAILABLE, e.code());
        assertTrue(e.getMessage().contains("audit log cannot be written, so log.delete was not done"), e.getMessage());
    }

    /** A cluster that cannot commit the intent says its write's outcome is unknown; the action's is known: not done. */
    @Test
    void anIntentWhoseWriteIsInDoubtShouldStillAnswerNotDoneWithoutAnUnknownOutcome() {
        AuditLog inDoubt = new AuditLog((ws, log, req) -> java.util.concurrent.CompletableFuture.failedFuture(new StrandException(
                ErrorCode.UNAVAILABLE, "shard 7 cannot commit now; the write may or may not be applied",
                Map.of("retryable", true, "outcome", "unknown"))));
        AtomicBoolean ran = new AtomicBoolean();
        StrandException e = assertThrows(StrandException.class, () -> inDoubt.perform(Principal.ROOT, "token.mint", "ws:a",
                Map.of(), () -> ran.getAndSet(true), r -> Map.of()));
        assertFalse(ran.get(), "the action did not run");
        assertEquals(ErrorCode.UNAVAILABLE, e.code());
        assertEquals(Boolean.TRUE, e.extras().get("retryable"));
        assertFalse(e.extras().containsKey("outcome"), e.extras().toString());
        assertTrue(e.getMessage().contains("token.mint was not done (its audit intent entry may or may not be recorded)"), e.getMessage());
    }

    @Test
    void anActionThatTookEffectShouldBeAnsweredAsDoneEvenIfItsOutcomeEntryFails() {
        String result = audit.perform(Principal.ROOT, "log.delete", "log:a/b", Map.of("ws", "a"), () -> {
            assertEquals(1, entries().size(), "the intent is durable before the action runs");
            logs.delete(Names.SYSTEM_WORKSPACE, AuditLog.LOG); // the outcome entry will find no writable audit log
            breakAuditLog();
            return "done";
        }, r -> Map.of("result", r));
        assertEquals("done", result);
        assertThrows(RuntimeException.class, () -> logs.append(Names.SYSTEM_WORKSPACE, AuditLog.LOG,
                io.strand.logtier.AppendRequest.of("{}".getBytes(java.nio.charset.StandardCharsets.UTF_8))).join(),
                "the outcome entry really had no writable audit log");
    }

    @Test
    void eachPhaseShouldNameTheIntent() {
        audit.perform(Principal.ROOT, "cold.roll", "log:a/b", Map.of(), () -> 7L, n -> Map.of("rolledEntries", n));
        StrandException refused = StrandException.notFound("no log");
        assertSame(refused, assertThrows(StrandException.class, () -> audit.perform(Principal.ROOT, "log.delete", "log:a/c",
                Map.of(), () -> {
                    throw refused;
                }, r -> Map.of())));
        List<JsonNode> e = entries();
        assertEquals(4, e.size(), e.toString());
        assertEquals(List.of("intent", "done", "intent", "failed"), e.stream().map(n -> n.get("phase").asText()).toList());
        assertEquals(1, e.get(1).get("intent").asLong());
        assertEquals(7, e.get(1).get("rolledEntries").asLong());
        assertEquals(3, e.get(3).get("intent").asLong());
        assertEquals("not_found", e.get(3).get("error").get("code").asText());
        assertEquals("root", e.get(3).get("actor").get("jti").asText());
    }
}
