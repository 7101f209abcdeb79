package io.strand.docstore;

import io.strand.core.Durability;
import io.strand.core.Writers;
import io.strand.core.WriteAheadLog;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Semaphore;

/**
 * The writer a crash test kills: opens a doc store and increments {@code w/counter.n} forever with
 * {@code window} increments in flight, printing {@code A <value>} after each acknowledgement (so after it is
 * durable), and now and then replaces a 2 KiB doc so journal chunks, checkpoints and snapshots happen too.
 * Args: data dir, recovery mode, window.
 */
public final class DocCrashChild {
    private DocCrashChild() {
    }

    static DocStoreConfig config(Path dir, DocStoreConfig.Recovery recovery) {
        return DocStoreConfig.defaults(dir).withCapacity(1000, 16, 2200).withRecovery(recovery)
                .withCheckpoints(Duration.ofMillis(50), 1500);
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        DocStoreConfig.Recovery recovery = DocStoreConfig.Recovery.valueOf(args[1]);
        int window = Integer.parseInt(args[2]);
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        Writers writers = new Writers("child", 1, Durability.FSYNC, 1000, new WriteAheadLog(dir.resolve("wal")), nanos -> {
        });
        DocStore store = new DocStore(config(dir, recovery), writers);
        writers.recover();
        long start = store.get("w", "counter").map(v -> v.value().get("n").longValue()).orElse(0L);
        out.println("READY " + start);
        Semaphore inFlight = new Semaphore(window);
        String filler = "x".repeat(2000);
        for (long i = 0; ; i++) {
            inFlight.acquire();
            if (i % 50 == 0) {
                store.put("w", "blob", TestStores.obj("{\"i\":" + i + ",\"s\":\"" + filler + "\"}"), null);
            }
            store.incr("w", "counter", "n", 1, null, null).whenComplete((r, e) -> {
                out.println(e == null ? "A " + r.value() : "E " + e);
                inFlight.release();
            });
        }
    }
}
