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

    @Test
    void tempFilesShouldNotBeListed() throws Exception {
        store.put("w/l/a", new byte[] {1});
        Files.writeString(tmp.resolve("cold/.strand-tmp/leftover.tmp"), "crash debris");
        assertEquals(List.of("w/l/a"), store.list("").stream().map(ColdStore.ObjectInfo::key).toList());
    }
}
