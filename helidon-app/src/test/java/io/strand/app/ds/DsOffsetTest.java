package io.strand.app.ds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.StrandException;
import java.util.Random;
import org.junit.jupiter.api.Test;

class DsOffsetTest {
    @Test
    void offsetShouldRoundTripAndSortAsPositions() {
        long seed = System.nanoTime();
        System.out.println("DsOffsetTest seed " + seed);
        Random random = new Random(seed);
        for (int i = 0; i < 1000; i++) {
            long a = random.nextLong(0, 9_999_999_999_999_999L);
            long b = random.nextLong(0, 9_999_999_999_999_999L);
            DsOffset x = DsOffset.after(a);
            DsOffset y = DsOffset.after(b);
            assertEquals(x, DsOffset.parse(x.toString()));
            assertEquals(Long.signum(Long.compare(a, b)), Integer.signum(x.toString().compareTo(y.toString())), a + " vs " + b);
            assertEquals(a + 1, x.nextSeq(), "the next read starts after the entry consumed");
        }
    }

    @Test
    void startShouldBeAllZeroesAndMinusOne() {
        assertEquals("0000000000000000_0000000000000000", DsOffset.START.toString());
        assertEquals(DsOffset.START, DsOffset.parse("-1"));
        assertEquals(1, DsOffset.START.nextSeq());
    }

    @Test
    void parseShouldRefuseAnythingButTheExactFormat() {
        for (String bad : new String[] {"", " ", "1", "now", "0,1", "0000000000000000_000000000000000",
                "0000000000000000-0000000000000000", "000000000000000a_0000000000000000", "../0000000000000000_0000000000000000",
                "0000000000000000_0000000000000000\n", "-2", null}) {
            StrandException e = assertThrows(StrandException.class, () -> DsOffset.parse(bad), String.valueOf(bad));
            assertTrue(e.code().httpStatus() == 400);
        }
    }
}
