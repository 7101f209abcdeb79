package io.strand.app;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.strand.logtier.EntrySink;
import io.strand.logtier.PageInfo;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One page reply or subscription frame, written as UTF-8 JSON bytes while a read streams its
 * entries in ({@link EntrySink}). {@code data} is stored as the serialized JSON the client sent, so
 * its bytes are copied in as they are: no object, String or re-parse per entry. Used by one thread
 * at a time; a subscription reuses one for the frames of a replay.
 *
 * <p>Shapes (SPEC §5, §6): a page is {@code {"entries":[…],"next":N,"first":F,"head":H}} (a
 * backward page has {@code "prev"} instead of {@code "next"}, a page that skipped trimmed seqs adds
 * {@code "gap"}); a WebSocket reply puts {@code "id"} and {@code "ok":true} in front; an entries
 * frame is {@code {"sub":S,"type":"entries","entries":[…],"next":N}}; an entry is
 * {@code {"seq":…,"ts":…,"key":…,"data":…}} with {@code key} only when it has one.
 */
public final class EntryJson implements EntrySink {
    private static final byte[] PAGE_START = ascii("{\"entries\":[");
    private static final byte[] REPLY_START = ascii("{\"id\":");
    private static final byte[] REPLY_ENTRIES = ascii(",\"ok\":true,\"entries\":[");
    private static final byte[] FRAME_START = ascii("{\"sub\":");
    private static final byte[] FRAME_ENTRIES = ascii(",\"type\":\"entries\",\"entries\":[");
    private static final byte[] SEQ = ascii("{\"seq\":");
    private static final byte[] TS = ascii(",\"ts\":");
    private static final byte[] KEY = ascii(",\"key\":\"");
    private static final byte[] DATA = ascii(",\"data\":");
    private static final byte[] NEXT = ascii("],\"next\":");
    private static final byte[] PREV = ascii("],\"prev\":");
    private static final byte[] FIRST = ascii(",\"first\":");
    private static final byte[] HEAD = ascii(",\"head\":");
    private static final byte[] GAP_FROM = ascii(",\"gap\":{\"from\":");
    private static final byte[] GAP_TO = ascii(",\"to\":");

    private byte[] buf;
    private int len;
    private int count;

    private EntryJson(int capacity) {
        buf = new byte[Math.max(64, capacity)];
    }

    /** A page reply over HTTP, sized for about {@code limit} entries. */
    public static EntryJson page(int limit) {
        EntryJson json = new EntryJson(estimate(limit));
        json.put(PAGE_START);
        return json;
    }

    /** A page reply over WebSocket to the request with id {@code idJson} (its JSON text). */
    public static EntryJson reply(String idJson, int limit) {
        EntryJson json = new EntryJson(estimate(limit) + idJson.length());
        json.put(REPLY_START);
        json.put(idJson.getBytes(StandardCharsets.UTF_8));
        json.put(REPLY_ENTRIES);
        return json;
    }

    /** An empty buffer for subscription frames ({@link #startFrame}). */
    public static EntryJson frames(int capacity) {
        return new EntryJson(capacity);
    }

    private static int estimate(int entries) {
        return 128 + Math.min(entries, 1000) * 128;
    }

    /** Starts an entries frame of subscription {@code subJson} (its JSON text), dropping what was built before. */
    public EntryJson startFrame(byte[] subJson) {
        len = 0;
        count = 0;
        put(FRAME_START);
        put(subJson);
        put(FRAME_ENTRIES);
        return this;
    }

    @Override
    public void entry(long seq, long ts, String key, byte[] data, int offset, int length) {
        ensure(length + 64);
        if (count++ > 0) {
            buf[len++] = ',';
        }
        put(SEQ);
        number(seq);
        put(TS);
        number(ts);
        if (key != null) {
            put(KEY);
            put(JsonStringEncoder.getInstance().quoteAsUTF8(key));
            put((byte) '"');
        }
        put(DATA);
        ensure(length + 1);
        System.arraycopy(data, offset, buf, len, length);
        len += length;
        buf[len++] = '}';
    }

    /** Entries written so far. */
    public int count() {
        return count;
    }

    /** Ends a page reply with the cursor, bounds and gap of {@code page}. */
    public EntryJson endPage(PageInfo page, boolean backward) {
        if (backward) {
            put(PREV);
            number(page.prev());
        } else {
            put(NEXT);
            number(page.next());
        }
        put(FIRST);
        number(page.first());
        put(HEAD);
        number(page.head());
        if (page.gap() != null) {
            put(GAP_FROM);
            number(page.gap().from());
            put(GAP_TO);
            number(page.gap().to());
            put((byte) '}');
        }
        put((byte) '}');
        return this;
    }

    /** Ends an entries frame with its resume cursor. */
    public EntryJson endFrame(long next) {
        put(NEXT);
        number(next);
        put((byte) '}');
        return this;
    }

    /** The JSON as text (a WebSocket text frame). */
    public String text() {
        return new String(buf, 0, len, StandardCharsets.UTF_8);
    }

    /** The JSON as UTF-8 bytes (an HTTP body). */
    public byte[] bytes() {
        return Arrays.copyOf(buf, len);
    }

    private void put(byte[] bytes) {
        ensure(bytes.length);
        System.arraycopy(bytes, 0, buf, len, bytes.length);
        len += bytes.length;
    }

    private void put(byte b) {
        ensure(1);
        buf[len++] = b;
    }

    private void number(long v) {
        ensure(20);
        if (v < 0) {
            if (v == Long.MIN_VALUE) {
                put(ascii(Long.toString(v)));
                return;
            }
            buf[len++] = '-';
            v = -v;
        }
        int digits = 1;
        for (long rest = v / 10; rest != 0; rest /= 10) {
            digits++;
        }
        int end = len + digits;
        for (int i = end - 1; i >= len; i--) {
            buf[i] = (byte) ('0' + v % 10);
            v /= 10;
        }
        len = end;
    }

    private void ensure(int more) {
        if (len + more > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + more));
        }
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** A JSON string literal, quoted and escaped, appended to {@code out}. */
    public static void string(StringBuilder out, String s) {
        out.append('"');
        JsonStringEncoder.getInstance().quoteAsString(s, out);
        out.append('"');
    }
}
