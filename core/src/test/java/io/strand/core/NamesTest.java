package io.strand.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class NamesTest {
    /** The rules as SPEC §2 states them, the reference the hand-written check must agree with. */
    private static final Pattern WORKSPACE = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");
    private static final Pattern OBJECT = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    private static final String ALPHABET = "aZz09._-/\\:é\u0000 A.";

    @Test
    void theChecksShouldAgreeWithTheRegularExpressionsOnRandomNames() {
        long seed = System.nanoTime();
        System.out.println("NamesTest seed " + seed);
        Random random = new Random(seed);
        for (int i = 0; i < 200_000; i++) {
            int length = random.nextInt(10) == 0 ? 60 + random.nextInt(75) : random.nextInt(6);
            StringBuilder name = new StringBuilder();
            for (int j = 0; j < length; j++) {
                name.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
            }
            String n = name.toString();
            assertEquals(WORKSPACE.matcher(n).matches(), Names.isWorkspace(n), "workspace '" + n + "' (seed " + seed + ")");
            assertEquals(OBJECT.matcher(n).matches() && !n.contains(".."), Names.isObject(n), "object '" + n + "' (seed " + seed + ")");
        }
    }

    @Test
    void theEdgesShouldBeExact() {
        assertTrue(Names.isWorkspace("a".repeat(63)));
        assertFalse(Names.isWorkspace("a".repeat(64)));
        assertFalse(Names.isWorkspace("_system"), "only the server names its own workspace");
        assertEquals("_system", Names.workspace("_system"));
        assertTrue(Names.isObject("A".repeat(128)));
        assertFalse(Names.isObject("A".repeat(129)));
        assertTrue(Names.isObject("a.b.c"));
        assertFalse(Names.isObject("a..b"));
        assertFalse(Names.isObject(".a"));
        assertFalse(Names.isObject("a/b"));
        assertFalse(Names.isObject(""));
        assertFalse(Names.isObject(null));
        assertFalse(Names.isWorkspace(null));
        StrandException e = assertThrows(StrandException.class, () -> Names.object("log", "../etc"));
        assertEquals(ErrorCode.INVALID_NAME, e.code());
    }
}
