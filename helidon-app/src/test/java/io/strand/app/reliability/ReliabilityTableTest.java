package io.strand.app.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class ReliabilityTableTest {
    @Test
    void renderShouldPadEveryColumnToItsWidestCellAndRightAlignCounts() {
        String[] row = {"kill -9", "15", "1148", "1088", "0", "0", "0", "-", "pass"};
        String text = ReliabilityTable.render(List.of(ReliabilityTable.HEADER, row));
        List<String> lines = text.lines().toList();
        assertEquals(3, lines.size(), text);
        assertEquals("| scenario | runs | operations | acknowledged | lost | duplicated | gaps | detected corruptions | outcome |", lines.get(0));
        assertEquals("| -------- | ---: | ---------: | -----------: | ---: | ---------: | ---: | -------------------: | ------- |", lines.get(1));
        assertEquals("| kill -9  |   15 |       1148 |         1088 |    0 |          0 |    0 |                    - | pass    |", lines.get(2));
    }

    @Test
    void loopsShouldBeShortByDefaultAndScaleTheFullCountInTheProfile() {
        String old = System.getProperty("strand.reliability.scale");
        try {
            System.clearProperty("strand.reliability.scale");
            assertEquals(4, ReliabilityReport.loops(4, 15));
            System.setProperty("strand.reliability.scale", "1");
            assertEquals(15, ReliabilityReport.loops(4, 15));
            System.setProperty("strand.reliability.scale", "3");
            assertEquals(45, ReliabilityReport.loops(4, 15));
        } finally {
            if (old == null) {
                System.clearProperty("strand.reliability.scale");
            } else {
                System.setProperty("strand.reliability.scale", old);
            }
        }
    }
}
