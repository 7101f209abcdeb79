package io.strand.app;

import io.helidon.health.HealthCheck;
import io.helidon.health.HealthCheckResponse;
import io.helidon.health.HealthCheckType;
import io.helidon.json.JsonObject;
import io.strand.core.Agent;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code agents} liveness check: every background job running on an {@link Agent} in this
 * process (roller, reaper, checkpointers, sweepers), each with its passes, failures and last
 * failure. DOWN when an agent's thread has died (it rethrows an Error such as OutOfMemoryError),
 * since its job no longer runs until the process restarts; failed passes alone keep it UP, as the
 * agent carries on and retries, and are counted in {@code strand.agent.failures}. Stateless: reads
 * {@link Agent#all()} on each call.
 */
final class AgentsHealth implements HealthCheck {
    @Override
    public String name() {
        return "agents";
    }

    @Override
    public HealthCheckType type() {
        return HealthCheckType.LIVENESS;
    }

    @Override
    public HealthCheckResponse call() {
        List<Agent> agents = Agent.all();
        boolean allAlive = true;
        var response = HealthCheckResponse.builder();
        Map<String, Integer> seen = new HashMap<>(); // several servers in one JVM (tests) run agents of one name
        for (Agent agent : agents) {
            boolean alive = agent.alive();
            allAlive &= alive;
            int n = seen.merge(agent.name(), 1, Integer::sum);
            JsonObject.Builder detail = JsonObject.builder()
                    .set("alive", alive)
                    .set("passes", agent.passes())
                    .set("failures", agent.failures());
            agent.lastFailure().ifPresent(f -> detail.set("lastFailure", f));
            response.detail(n == 1 ? agent.name() : agent.name() + "#" + n, detail.build());
        }
        return response.status(allAlive).build();
    }

    /** Failed passes of the agents running now, for the {@code strand.agent.failures} counter. */
    static long failures() {
        long total = 0;
        for (Agent agent : Agent.all()) {
            total += agent.failures();
        }
        return total;
    }
}
