package io.strand.app.ds;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.logtier.LogStore;
import io.strand.logtier.PageInfo;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * How DS bodies become Strand entries and back. JSON streams: each message is one entry holding
 * the message's own text (a top-level array is flattened one level), so numbers and key order
 * round-trip exactly and native readers see the same values. Byte streams: each POST is one or more
 * entries, each a JSON string holding base64 of at most {@link #RAW_PER_ENTRY} raw bytes, so a DS
 * stream stays an ordinary log of JSON entries that native pages and subscriptions read. Stateless.
 */
final class DsEntries {
    /** Raw bytes per entry: base64 of this plus two quotes stays under the 256 KiB entry limit. */
    static final int RAW_PER_ENTRY = 190_000;
    /** About this many body bytes per read reply (cut at entry boundaries). */
    static final long READ_CHUNK_BYTES = 1 << 20;
    private static final JsonFactory JSON = new JsonFactory();

    private DsEntries() {
    }

    /** The entries of one append or initial body; empty for an empty body (and for {@code []} when allowed). */
    static List<byte[]> encode(boolean json, byte[] body, boolean allowEmptyArray) {
        if (body.length == 0) {
            return List.of();
        }
        return json ? jsonMessages(body, allowEmptyArray) : byteChunks(body);
    }

    private static List<byte[]> byteChunks(byte[] body) {
        List<byte[]> out = new ArrayList<>(body.length / RAW_PER_ENTRY + 1);
        Base64.Encoder enc = Base64.getEncoder();
        for (int off = 0; off < body.length; off += RAW_PER_ENTRY) {
            byte[] part = Arrays.copyOfRange(body, off, Math.min(body.length, off + RAW_PER_ENTRY));
            byte[] b64 = enc.encode(part);
            byte[] entry = new byte[b64.length + 2];
            entry[0] = '"';
            System.arraycopy(b64, 0, entry, 1, b64.length);
            entry[entry.length - 1] = '"';
            out.add(entry);
        }
        return out;
    }

    private static List<byte[]> jsonMessages(byte[] body, boolean allowEmptyArray) {
        List<byte[]> out = new ArrayList<>();
        try (JsonParser p = JSON.createParser(body)) {
            JsonToken t = p.nextToken();
            if (t == null) {
                throw StrandException.badRequest("the body is not JSON");
            }
            if (t == JsonToken.START_ARRAY) {
                while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
                    out.add(value(p, body));
                }
                if (out.isEmpty() && !allowEmptyArray) {
                    throw StrandException.badRequest("an empty JSON array appends nothing");
                }
            } else {
                out.add(value(p, body));
            }
            if (p.nextToken() != null) {
                throw StrandException.badRequest("the body holds more than one JSON value");
            }
        } catch (IOException e) {
            throw StrandException.badRequest("the body is not valid JSON: " + e.getMessage());
        }
        return out;
    }

    /** The text of the value whose first token the parser is on, validated by skipping it. */
    private static byte[] value(JsonParser p, byte[] body) throws IOException {
        int start = (int) p.currentTokenLocation().getByteOffset();
        p.skipChildren();
        int end = (int) p.currentLocation().getByteOffset();
        if (p.currentToken() == JsonToken.VALUE_STRING || p.currentToken().isNumeric() || p.currentToken().isBoolean()
                || p.currentToken() == JsonToken.VALUE_NULL) {
            p.finishToken();
            end = (int) p.currentLocation().getByteOffset();
        }
        return Arrays.copyOfRange(body, start, end);
    }

    /** One read's body: the bytes (or JSON array) of entries from {@code from}, and where it ended. */
    record Chunk(byte[] body, long lastSeq, long head, int entries) {
        boolean upToDate() {
            return lastSeq >= head;
        }
    }

    /** Reads from {@code from} (≥ 1) up to about {@link #READ_CHUNK_BYTES}. */
    static Chunk read(LogStore logs, DsStream s, long from) {
        return read(logs, s, from, 0);
    }

    /**
     * Reads from {@code from} (≥ 1) up to about {@link #READ_CHUNK_BYTES}, a byte stream's first entry
     * without its first {@code skip} bytes (an offset's byte part; 0 for JSON streams, see
     * {@link DsOffset}).
     *
     * @throws StrandException {@code 410 gone} when {@code from} is past the start (≥ 2) but below the
     *         log's first retained seq (a trim or retention took the entries the offset points at: never
     *         a silent skip; reading from the start begins at the first retained entry); {@code 400
     *         bad_request} when {@code skip} is past the end of entry {@code from} or that entry does not exist
     */
    static Chunk read(LogStore logs, DsStream s, long from, long skip) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        boolean json = s.json();
        int[] n = {0};
        long[] last = {from - 1};
        if (json) {
            out.write('[');
        }
        Base64.Decoder dec = Base64.getDecoder();
        long[] skipped = {skip > 0 ? -1 : 0};
        PageInfo page = logs.readChunk(s.ws, s.logName, from, 1000, READ_CHUNK_BYTES, (seq, ts, key, data, offset, length) -> {
            if (json) {
                if (n[0] > 0) {
                    out.write(',');
                }
                out.write(data, offset, length);
            } else {
                ByteBuffer raw = dec.decode(ByteBuffer.wrap(data, offset + 1, length - 2));
                int cut = 0;
                if (n[0] == 0 && skip > 0 && seq == from) {
                    skipped[0] = raw.remaining();
                    cut = (int) Math.min(skip, raw.remaining());
                }
                out.write(raw.array(), raw.arrayOffset() + raw.position() + cut, raw.remaining() - cut);
            }
            n[0]++;
            last[0] = seq;
        });
        if (page.gap() != null && from > 1) {
            throw new StrandException(ErrorCode.GONE, "offset " + DsOffset.after(from - 1) + " is no longer stored: the log"
                    + " was trimmed (retention or a trim) and now starts at seq " + page.first() + "; read again from "
                    + DsOffset.after(page.first() - 1) + " (offset -1 reads from there too)",
                    Map.of("first", page.first(), "offset", DsOffset.after(page.first() - 1).toString()));
        }
        if (skip > 0 && skipped[0] < skip) {
            throw StrandException.badRequest(skipped[0] < 0 ? "the offset's byte part points into entry " + from
                    + ", which does not exist" : "the offset's byte part (" + skip + ") is past the end of entry " + from
                    + " (" + skipped[0] + " bytes)");
        }
        if (json) {
            out.write(']');
        }
        return new Chunk(out.toByteArray(), Math.max(last[0], Math.min(from - 1, page.head())), page.head(), n[0]);
    }
}
