package io.strand.coldtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;

class FileColdStoreTest extends ColdStoreContract {

    @Override
    ColdStore newStore() {
        return new FileColdStore(tmp.resolve("cold"));
    }

    @Override
    ColdStore reopen() {
        return new FileColdStore(tmp.resolve("cold"));
    }

    @Test
    void keysShouldNeverEscapeTheRoot() {
        for (String bad : List.of("../x", "a/../../x", "/etc/passwd", "a//b", "a/./b", ".strand-lock", "a\\b", "")) {
            assertThrows(IllegalArgumentException.class, () -> store.put(bad, new byte[1]), bad);
        }
    }

    /** A store whose directory is gone is down, not empty: reads answer cold_unavailable, never "not found". */
    @Test
    void aStoreWhoseDirectoryIsGoneShouldBeUnavailableNotEmpty() throws Exception {
        store.put("w/l/seg", new byte[] {1, 2});
        assertEquals(java.util.Optional.empty(), store.head("w/l/other"), "a missing object in a store that is there");
        Files.move(tmp.resolve("cold"), tmp.resolve("cold-away"));
        Files.writeString(tmp.resolve("cold"), "not a directory any more");
        for (org.junit.jupiter.api.function.Executable read : List.<org.junit.jupiter.api.function.Executable>of(
                () -> store.head("w/l/seg"), () -> store.get("w/l/seg"), () -> store.getVersioned("w/l/manifest"))) {
            io.strand.core.StrandException e = assertThrows(io.strand.core.StrandException.class, read);
            assertEquals(io.strand.core.ErrorCode.COLD_UNAVAILABLE, e.code(), e.getMessage());
        }
    }

    @Test
    void tempFilesShouldNotBeListed() throws Exception {
        store.put("w/l/a", new byte[] {1});
        Files.writeString(tmp.resolve("cold/.strand-tmp/leftover.tmp"), "crash debris");
        assertEquals(List.of("w/l/a"), store.list("").stream().map(ColdStore.ObjectInfo::key).toList());
    }
}
