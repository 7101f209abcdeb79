package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import io.strand.logtier.PageInfo;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The page and frame JSON written byte by byte: numbers, the batch's shared ts, and the room left for a frame header. */
class EntryJsonTest {
    private static final byte[] DATA = "{\"n\":1}".getBytes(StandardCharsets.UTF_8);

    @Test
    void numbersShouldReadBackExactlyWhenTheyHaveAnyNumberOfDigits() {
        long[] values = {0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12_345, 1_796_151_091_123L, 999_999_999_999_999_999L,
                1_000_000_000_000_000_000L, Long.MAX_VALUE, -1, -10, -99, -100, -1_796_151_091_123L, Long.MIN_VALUE + 1, Long.MIN_VALUE};
        EntryJson json = EntryJson.page(values.length);
        for (long v : values) {
            json.entry(v, -v, null, DATA, 0, DATA.length);
        }
        JsonNode page = Json.parse(json.endPage(new PageInfo(values.length, 7, 0, 1, 6, null), false).text());
        for (int i = 0; i < values.length; i++) {
            JsonNode entry = page.get("entries").get(i);
            assertEquals(Long.toString(values[i]), entry.get("seq").asText());
            assertEquals(Long.toString(-values[i]), entry.get("ts").asText()); // -MIN_VALUE is MIN_VALUE
        }
    }

    @Test
    void aSharedTsShouldBeWrittenForEveryEntryWhenABatchRepeatsItAndAFrameRestarts() {
        EntryJson frames = EntryJson.frames(16); // grows while it writes: the copied ts must survive that
        for (int round = 0; round < 2; round++) {
            frames.startFrame("\"s\"".getBytes(StandardCharsets.UTF_8));
            for (long seq = 1; seq <= 50; seq++) {
                frames.entry(seq, seq <= 30 ? 1_700_000_000_000L : 1_700_000_000_001L, seq == 3 ? "k\"ey" : null, DATA, 0, DATA.length);
            }
            JsonNode frame = Json.parse(frames.endFrame(51).text());
            assertEquals(50, frame.get("entries").size());
            for (int i = 0; i < 50; i++) {
                JsonNode entry = frame.get("entries").get(i);
                assertEquals(i + 1, entry.get("seq").asLong());
                assertEquals(i < 30 ? 1_700_000_000_000L : 1_700_000_000_001L, entry.get("ts").asLong());
                assertEquals(1, entry.get("data").get("n").asInt());
            }
            assertEquals("k\"ey", frame.get("entries").get(2).get("key").asText());
        }
    }

    @Test
    void theJsonShouldStartAfterTheHeaderRoomWhenSentFromTheArray() {
        EntryJson reply = EntryJson.reply("7", 1);
        reply.entry(1, 2, null, DATA, 0, DATA.length);
        reply.endPage(new PageInfo(1, 2, 0, 1, 1, null), false);
        String fromArray = new String(reply.array(), reply.offset(), reply.length(), StandardCharsets.UTF_8);
        assertEquals(EntryJson.HEADER_ROOM, reply.offset());
        assertEquals(reply.text(), fromArray);
        assertEquals(fromArray, new String(reply.bytes(), StandardCharsets.UTF_8));
        assertEquals("{\"id\":7,\"ok\":true,\"entries\":[{\"seq\":1,\"ts\":2,\"data\":{\"n\":1}}],\"next\":2,\"first\":1,\"head\":1}", fromArray);
    }

    @Test
    void aReleasedArrayShouldNotLeakItsOldBytesIntoTheNextReply() {
        EntryJson big = EntryJson.reply("1", 100);
        for (long seq = 1; seq <= 100; seq++) {
            big.entry(seq, seq, null, DATA, 0, DATA.length);
        }
        big.endPage(new PageInfo(100, 101, 0, 1, 100, null), false);
        big.release();
        EntryJson next = EntryJson.reply("2", 1);
        next.endPage(new PageInfo(0, 1, 0, 1, 0, null), false);
        assertEquals("{\"id\":2,\"ok\":true,\"entries\":[],\"next\":1,\"first\":1,\"head\":0}", next.text());
    }
}
