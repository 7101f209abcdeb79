package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;

/** {@code --log-format} and {@code --log-level}: parsing, the flags, and JSON lines that parse. */
class ServerLoggingTest {
    @Test
    void flagsShouldReachTheConfig() {
        ServerConfig config = ServerConfig.from(Main.settings(new String[] {"--log-format", "json", "--log-level", "debug"}, Map.of()));
        assertTrue(config.logging().json());
        assertEquals(Level.FINE, config.logging().level());
        ServerConfig defaults = ServerConfig.from(Map.of());
        assertFalse(defaults.logging().json());
        assertEquals(Level.INFO, defaults.logging().level());
        assertEquals(Level.WARNING, ServerLogging.parse("text", "warn").level());
        assertEquals(Level.SEVERE, ServerLogging.parse("TEXT", "SEVERE").level());
    }

    @Test
    void badValuesShouldBeRefusedWithTheChoices() {
        var format = assertThrows(IllegalArgumentException.class, () -> ServerLogging.parse("xml", "info"));
        assertTrue(format.getMessage().contains("text or json"), format.getMessage());
        var level = assertThrows(IllegalArgumentException.class, () -> ServerConfig.from(Map.of("STRAND_LOG_LEVEL", "loud")));
        assertTrue(level.getMessage().contains("error, warn, info, debug, trace"), level.getMessage());
    }

    @Test
    void jsonLinesShouldParseWithTheirFields() throws Exception {
        LogRecord record = new LogRecord(Level.WARNING, "disk {0} is \"low\"\nsecond line");
        record.setParameters(new Object[] {"/data"});
        record.setLoggerName("strand.test");
        record.setThrown(new IllegalStateException("boom"));
        String line = new JsonLogFormatter().format(record);
        assertEquals(line.length() - System.lineSeparator().length(), line.indexOf('\n'), "one line: " + line);
        JsonNode json = Json.MAPPER.readTree(line);
        assertEquals("WARNING", json.get("level").asText());
        assertEquals("strand.test", json.get("logger").asText());
        assertEquals("disk /data is \"low\"\nsecond line", json.get("message").asText());
        assertTrue(json.get("error").asText().startsWith("java.lang.IllegalStateException: boom"), line);
        assertTrue(json.get("ts").asText().endsWith("Z"), line);
        assertTrue(json.has("thread"));
    }

    @Test
    void textLinesShouldCarryTheTimeToTheMillisecondOnOneLine() {
        LogRecord record = new LogRecord(Level.INFO, "leader of shard {0} changed");
        record.setParameters(new Object[] {3});
        record.setLoggerName("strand.cluster");
        record.setInstant(java.time.Instant.parse("2026-12-02T07:05:21Z"));
        String line = ServerLogging.parse("text", "info").formatter().format(record);
        assertEquals("2026-12-02T07:05:21.000Z INFO strand.cluster [" + Thread.currentThread().getName()
                + "]: leader of shard 3 changed" + System.lineSeparator(), line);
        record.setThrown(new IllegalStateException("boom"));
        String withTrace = new TextLogFormatter().format(record);
        assertTrue(withTrace.contains(System.lineSeparator() + "java.lang.IllegalStateException: boom"), withTrace);
    }
}
