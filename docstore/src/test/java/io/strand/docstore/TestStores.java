package io.strand.docstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Durability;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import io.strand.core.WriteAheadLog;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/** Shared set-up for doc store tests: small stores, fsync writers, and helpers to await outcomes. */
final class TestStores {
    private TestStores() {
    }

    static DocStoreConfig config(Path dir) {
        return DocStoreConfig.defaults(dir).withCapacity(10_000, 32, 256)
                .withCheckpoints(Duration.ofSeconds(30), 1_000_000);
    }

    /** Writers in fsync mode with their write-ahead log in {@code dir/wal}. */
    static Writers writers(Path dir) {
        return new Writers("test", 2, Durability.FSYNC, 1000, new WriteAheadLog(dir.resolve("wal")), nanos -> {
        });
    }

    /** Opens a store on {@code dir} with {@link #config}, then recovers {@code writers}' write-ahead log into it. */
    static DocStore open(Path dir, Writers writers) {
        DocStore store = new DocStore(config(dir), writers);
        writers.recover();
        return store;
    }

    /** Closes {@code store} before the {@code writers} it submits to. */
    static void close(DocStore store, Writers writers) {
        store.close();
        writers.close();
    }

    static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Awaits a write that must fail with {@code code}, returning the failure. */
    static StrandException failure(CompletableFuture<?> future, ErrorCode code) {
        try {
            Object value = future.get(30, TimeUnit.SECONDS);
            fail("expected " + code + " but the write succeeded with " + value);
            return null;
        } catch (ExecutionException e) {
            StrandException se = assertInstanceOf(StrandException.class, e.getCause());
            assertEquals(code, se.code(), se.getMessage());
            return se;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static ObjectNode obj(String json) {
        return (ObjectNode) Json.parse(json);
    }

    static JsonNode json(String json) {
        return Json.parse(json);
    }
}
