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
 *
 * <p>The JSON starts {@link #HEADER_ROOM} bytes into the array, so a WebSocket frame header fits in
 * front of it and the array goes to the socket as it is ({@code SocketWriter.sendUtf8If}). Page
 * replies take their array from a small pool of spares and give it back with {@link #release}:
 * growing a fresh ~13 KB estimate to the ~32 KB of 100 entries of 256 B cost two copies and three
 * allocations per page. Numbers are written two digits at a time, and the batch's shared ts once
 * per run of equal ts (copied after that). Together with the single-copy send these took the
 * server's CPU per entry of {@code ./strand bench --warmup 10 read-pagination} (fsync, 2 shared
 * cores, 5 runs each, back to back) from 1.48 to 0.94 µs (means; medians 1.4 → 0.8).
 */
public final class EntryJson implements EntrySink {
    /** Free bytes before the JSON: the longest WebSocket frame header (RFC 6455 §5.2, unmasked). */
    public static final int HEADER_ROOM = 10;
    /** Arrays of released page replies, reused by the next ones. */
    private static final java.util.concurrent.ArrayBlockingQueue<byte[]> SPARES = new java.util.concurrent.ArrayBlockingQueue<>(8);
    /** Larger arrays are not kept as spares. */
    private static final int MAX_SPARE_BYTES = 1 << 20;
    /** "00".."99": two digits per division by 100. */
    private static final byte[] DIGIT_PAIRS = new byte[200];

    static {
        for (int i = 0; i < 100; i++) {
            DIGIT_PAIRS[2 * i] = (byte) ('0' + i / 10);
            DIGIT_PAIRS[2 * i + 1] = (byte) ('0' + i % 10);
        }
    }

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
    private int len = HEADER_ROOM;
    private int count;
    /** Where in {@link #buf} the digits of {@link #lastTs} were last written, and how many; -1: none. */
    private int lastTsAt = -1;
    private int lastTsLength;
    private long lastTs;

    private EntryJson(byte[] buf) {
        this.buf = buf;
    }

    private static EntryJson sized(int capacity) {
        return new EntryJson(new byte[HEADER_ROOM + Math.max(64, capacity)]);
    }

    /** A page reply in a spare array when there is one (give it back with {@link #release}). */
    private static EntryJson spare(int capacity) {
        byte[] spare = SPARES.poll();
        return spare != null && spare.length >= HEADER_ROOM + capacity ? new EntryJson(spare) : sized(capacity);
    }

    /** A page reply over HTTP, sized for about {@code limit} entries; {@link #release} it once its bytes are taken. */
    public static EntryJson page(int limit) {
        EntryJson json = spare(estimate(limit));
        json.put(PAGE_START);
        return json;
    }

    /** A page reply over WebSocket to the request with id {@code idJson} (its JSON text); {@link #release} it once sent. */
    public static EntryJson reply(String idJson, int limit) {
        EntryJson json = spare(estimate(limit) + idJson.length());
        json.put(REPLY_START);
        json.put(idJson.getBytes(StandardCharsets.UTF_8));
        json.put(REPLY_ENTRIES);
        return json;
    }

    /** An empty buffer for subscription frames ({@link #startFrame}). */
    public static EntryJson frames(int capacity) {
        return sized(capacity);
    }

    private static int estimate(int entries) {
        return 128 + Math.min(entries, 1000) * 128;
    }

    /** Starts an entries frame of subscription {@code subJson} (its JSON text), dropping what was built before. */
    public EntryJson startFrame(byte[] subJson) {
        len = HEADER_ROOM;
        count = 0;
        lastTsAt = -1;
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
        if (lastTsAt >= 0 && ts == lastTs) {
            ensure(lastTsLength);
            System.arraycopy(buf, lastTsAt, buf, len, lastTsLength); // the batch's ts, as written for its previous entry
            len += lastTsLength;
        } else {
            lastTsAt = len;
            number(ts);
            lastTsLength = len - lastTsAt;
            lastTs = ts;
        }
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
        return new String(buf, HEADER_ROOM, len - HEADER_ROOM, StandardCharsets.UTF_8);
    }

    /** The JSON as UTF-8 bytes (an HTTP body). */
    public byte[] bytes() {
        return Arrays.copyOfRange(buf, HEADER_ROOM, len);
    }

    /** The array the JSON is in, from {@link #offset} for {@link #length} bytes, {@link #HEADER_ROOM} free bytes before it. */
    public byte[] array() {
        return buf;
    }

    /** Where the JSON starts in {@link #array}: {@link #HEADER_ROOM}. */
    public int offset() {
        return HEADER_ROOM;
    }

    /** The JSON's length in bytes. */
    public int length() {
        return len - HEADER_ROOM;
    }

    /**
     * Gives a page reply's array back for the next reply to reuse, once it was sent or its bytes
     * taken: this object must not be used after. Not for subscription frames (they reuse their own).
     */
    public void release() {
        byte[] b = buf;
        buf = null;
        if (b != null && b.length <= MAX_SPARE_BYTES) {
            SPARES.offer(b);
        }
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
        for (long p = 10; digits < 19 && v >= p; p *= 10) {
            digits++;
        }
        int end = len + digits;
        int at = end;
        while (v >= 100) {
            int pair = 2 * (int) (v % 100);
            v /= 100;
            buf[--at] = DIGIT_PAIRS[pair + 1];
            buf[--at] = DIGIT_PAIRS[pair];
        }
        if (v >= 10) {
            buf[--at] = DIGIT_PAIRS[2 * (int) v + 1];
            buf[--at] = DIGIT_PAIRS[2 * (int) v];
        } else {
            buf[--at] = (byte) ('0' + v);
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
