package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.health.HealthCheckResponse;
import io.helidon.json.JsonObject;
import io.strand.core.Agent;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class AgentsHealthTest {
    @Test
    void callShouldStayUpAndReportTheLastFailureWhenAPassThrows() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch secondPass = new CountDownLatch(1);
        long failuresBefore = AgentsHealth.failures();
        try (Agent agent = Agent.start("agents-health-test-throws", Duration.ofMillis(1), () -> {
            if (calls.incrementAndGet() == 2) {
                secondPass.countDown();
            }
            throw new IllegalStateException("bucket gone");
        })) {
            assertTrue(secondPass.await(10, TimeUnit.SECONDS));
            HealthCheckResponse r = new AgentsHealth().call();
            JsonObject detail = (JsonObject) r.details().get(agent.name());
            assertEquals(HealthCheckResponse.Status.UP, r.status(), r.details().toString());
            assertTrue(detail.booleanValue("alive").orElseThrow());
            assertTrue(detail.numberValue("failures").orElseThrow().longValue() >= 1, detail.toString());
            assertTrue(detail.stringValue("lastFailure").orElseThrow().contains("bucket gone"), detail.toString());
            assertTrue(AgentsHealth.failures() >= failuresBefore + 1);
        }
    }

    @Test
    void callShouldBeDownWhenAnAgentsThreadDied() {
        Agent agent = Agent.start("agents-health-test-dies", Duration.ofMillis(1), () -> {
            throw new InternalError("simulated: an agent rethrows VM errors, and its thread ends");
        }, true);
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (agent.alive() && System.nanoTime() < deadline) {
                LockSupport.parkNanos(1_000_000);
            }
            assertFalse(agent.alive());
            HealthCheckResponse r = new AgentsHealth().call();
            assertEquals(HealthCheckResponse.Status.DOWN, r.status(), r.details().toString());
            JsonObject detail = (JsonObject) r.details().get(agent.name());
            assertFalse(detail.booleanValue("alive").orElseThrow());
        } finally {
            agent.close();
        }
        assertFalse(new AgentsHealth().call().details().containsKey("agents-health-test-dies"), "a closed agent is not listed");
    }
}
