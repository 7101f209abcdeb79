package io.strand.app.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The platform readers' rules: a thread of its own while one is free, and the loop's owner sees what the loop did. */
@Timeout(30)
class ReaderThreadsTest {
    @Test
    void aLoopShouldRunOnAPlatformThreadWhileOneIsFreeAndGiveItBack() throws Exception {
        ReaderThreads readers = new ReaderThreads(1);
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch stop = new CountDownLatch(1);
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        CompletableFuture<Boolean> first = CompletableFuture.supplyAsync(() -> readers.runOnOwnThread(() -> {
            ranOn.set(Thread.currentThread());
            running.countDown();
            try {
                stop.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        assertTrue(running.await(10, TimeUnit.SECONDS));
        assertFalse(ranOn.get().isVirtual());
        assertTrue(ranOn.get().getName().startsWith("strand-ws-reader-"), ranOn.get().getName());
        assertEquals(1, readers.inUse());
        assertFalse(readers.runOnOwnThread(() -> { }), "the only place is taken: the caller reads");
        stop.countDown();
        assertTrue(first.get(10, TimeUnit.SECONDS), "waited for its reader");
        assertEquals(0, readers.inUse());
        assertFalse(ReaderThreads.NONE.runOnOwnThread(() -> { }));
    }

    @Test
    void whatTheLoopThrowsShouldBeThrownToItsOwner() {
        ReaderThreads readers = new ReaderThreads(1);
        IllegalStateException boom = new IllegalStateException("boom");
        assertSame(boom, assertThrows(IllegalStateException.class, () -> readers.runOnOwnThread(() -> {
            throw boom;
        })));
        assertEquals(0, readers.inUse(), "the place is free again");
    }

    @Test
    void anInterruptOfTheOwnerShouldReachTheReaderAndBeKept() throws Exception {
        ReaderThreads readers = new ReaderThreads(1);
        CountDownLatch running = new CountDownLatch(1);
        AtomicReference<Boolean> readerInterrupted = new AtomicReference<>(false);
        AtomicReference<Boolean> ownerKept = new AtomicReference<>();
        Thread owner = Thread.ofVirtual().start(() -> {
            readers.runOnOwnThread(() -> {
                running.countDown();
                try {
                    new CountDownLatch(1).await();
                } catch (InterruptedException e) {
                    readerInterrupted.set(true);
                }
            });
            ownerKept.set(Thread.currentThread().isInterrupted());
        });
        assertTrue(running.await(10, TimeUnit.SECONDS));
        owner.interrupt();
        owner.join(10_000);
        assertFalse(owner.isAlive());
        assertTrue(readerInterrupted.get(), "the reader was interrupted");
        assertTrue(ownerKept.get(), "the owner's interrupt is kept");
    }
}
