package io.strand.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AgentTest {
    @Test
    void doWorkShouldKeepRunningAndCountWhenAPassThrows() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch third = new CountDownLatch(3);
        try (Agent agent = Agent.start("agent-test-throws", Duration.ofMillis(1), () -> {
            int n = calls.incrementAndGet();
            third.countDown();
            if (n == 1) {
                throw new IllegalStateException("first pass fails");
            }
            if (n == 2) {
                throw new AssertionError("an Error is caught too");
            }
        })) {
            assertTrue(third.await(10, TimeUnit.SECONDS), "the agent stopped after a failing pass");
            assertEquals(2, agent.failures());
            assertTrue(agent.lastFailure().orElseThrow().contains("AssertionError"));
            assertTrue(agent.alive());
            assertTrue(Agent.all().contains(agent));
        }
    }

    @Test
    void wakeShouldRunAPassBeforeThePeriodWhenCalled() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        try (Agent agent = Agent.start("agent-test-wake", Duration.ofHours(1), ran::countDown)) {
            agent.wake();
            assertTrue(ran.await(10, TimeUnit.SECONDS), "wake did not run a pass");
        }
    }

    @Test
    void closeShouldStopTheThreadAndUnregisterWhenIdle() {
        Agent agent = Agent.start("agent-test-close", Duration.ofHours(1), () -> { });
        agent.close();
        assertFalse(agent.alive());
        assertFalse(Agent.all().contains(agent));
        assertEquals("agent-test-close", agent.name());
    }
}
