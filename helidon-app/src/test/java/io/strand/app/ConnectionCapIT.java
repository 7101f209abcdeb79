package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** SPEC §2: at most N sockets per workspace (close 4029 past it), counted per workspace, freed on close. */
@Timeout(120)
@FaultTest
class ConnectionCapIT {
    @TempDir
    Path dir;

    @Test
    @Scenario("sockets past the workspace cap")
    void aSocketPastTheWorkspaceCapShouldBeClosedWith4029AndTheSlotFreedOnClose(ReliabilityRow row) throws Exception {
        try (TestServer server = TestServer.start(dir, Map.of("STRAND_MAX_CONNECTIONS_PER_WORKSPACE", "2"))) {
            WsClient a = WsClient.connect(server.wsUrl("acme"));
            WsClient b = WsClient.connect(server.wsUrl("acme"));
            assertAccepted(a);
            assertAccepted(b);
            try (WsClient c = WsClient.connect(server.wsUrl("acme"))) {
                assertEquals(4029, c.closed.get(10, TimeUnit.SECONDS));
            }
            try (WsClient other = WsClient.connect(server.wsUrl("beta"))) {
                assertAccepted(other); // the cap is per workspace
            }
            a.close();
            assertEquals(1000, a.closed.get(10, TimeUnit.SECONDS)); // the server answered the close: its count is down
            try (WsClient d = WsClient.connect(server.wsUrl("acme"))) {
                assertAccepted(d);
            }
            b.close();
            row.runs(1).operations(5).note("the 3rd socket of a workspace capped at 2 closed 4029; slot freed on close");
        }
    }

    private static void assertAccepted(WsClient c) {
        long id = c.request("ping", "");
        JsonNode reply = c.reply(id, 10_000);
        assertTrue(reply.get("ok").asBoolean(), reply.toString());
        assertTrue(!c.closed.isDone(), "still open");
    }
}
