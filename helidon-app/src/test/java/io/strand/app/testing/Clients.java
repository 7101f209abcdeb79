package io.strand.app.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntConsumer;

/** Runs concurrent test clients. Stateless, so thread-safe. */
public final class Clients {
    private Clients() {
    }

    /** Runs {@code body(0..n-1)} on {@code n} virtual threads at once, waits for all, and fails if any threw. */
    public static void concurrently(int n, IntConsumer body) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        for (int c = 0; c < n; c++) {
            int client = c;
            threads.add(Thread.ofVirtual().start(() -> {
                try {
                    body.accept(client);
                } catch (Throwable t) {
                    failures.add(t);
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        assertTrue(failures.isEmpty(), "client failures: " + failures);
    }
}
