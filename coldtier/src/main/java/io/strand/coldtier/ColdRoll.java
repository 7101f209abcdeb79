package io.strand.coldtier;

import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.FailPoints;
import io.strand.core.StrandException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;

/**
 * The steps of one roll (STYLE.md, hot → cold, steps 2–5), each safe to repeat after a crash:
 * {@link #write} a local segment file and fsync it, {@link #upload} it under its deterministic key,
 * {@link #verifyUpload} size and trailer, {@link #commit} the manifest. {@link #run} (for {@link ColdLog#roll})
 * runs them in order with fail points between; tests run them one by one to stage each crash. Stateless.
 */
final class ColdRoll {
    private ColdRoll() {
    }

    /** Steps 2–5 in order, with fail points {@code roll.afterUpload}, {@code roll.afterVerify} and {@code roll.afterManifest}. */
    static Optional<SegmentMeta> run(ColdLog log, Iterator<Entry> entries) {
        Prepared p = write(log, entries);
        if (p == null) {
            return Optional.empty();
        }
        try {
            upload(log, p);
            FailPoints.hit("roll.afterUpload");
            verifyUpload(log, p);
            FailPoints.hit("roll.afterVerify");
            SegmentMeta meta = commit(log, p);
            FailPoints.hit("roll.afterManifest");
            return Optional.of(meta);
        } finally {
            cleanup(p);
        }
    }

    /** A finished local segment waiting to be uploaded and committed. */
    record Prepared(Path file, String key, SegmentTrailer trailer) {
        SegmentMeta meta() {
            return SegmentMeta.of(key, trailer);
        }
    }

    /**
     * Step 2: writes the entries not yet cold into a local segment and fsyncs it.
     *
     * @return null when every entry is already cold
     */
    static Prepared write(ColdLog log, Iterator<Entry> entries) {
        Manifest m = log.refresh();
        long after = m.lastSeq();
        Entry first = null;
        while (entries.hasNext()) {
            Entry e = entries.next();
            if (e.seq() > after) {
                first = e;
                break;
            }
        }
        if (first == null) {
            return null;
        }
        if (after > 0 && first.seq() != after + 1) {
            throw new StrandException(ErrorCode.SEQ_MISMATCH, "roll of " + log.ws() + "/" + log.log()
                    + " must continue at seq " + (after + 1) + ", got " + first.seq(), Map.of("head", after));
        }
        if (after > 0 && first.ts() < m.segments().getLast().lastTs()) {
            throw new IllegalArgumentException("entry " + first.seq() + " has a ts before the last cold entry");
        }
        String prevChain = m.segments().isEmpty() ? null : m.segments().getLast().chainSha256();
        Path dir = log.config().tempDir();
        Path file = dir.resolve("roll@" + log.ws() + "@" + log.log() + "@" + first.seq() + ".seg");
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot create " + dir + ": " + e, Map.of(), e);
        }
        try (SegmentWriter w = SegmentWriter.create(file, prevChain, log.config().blockBytes(), log.config().zstdLevel())) {
            w.append(first);
            while (entries.hasNext()) {
                w.append(entries.next());
            }
            SegmentTrailer t = w.finish();
            return new Prepared(file, log.segmentKey(t.firstSeq(), t.lastSeq()), t);
        }
    }

    /** Step 3: uploads under the deterministic key; an object already there (an earlier attempt) is replaced by the same bytes. */
    static void upload(ColdLog log, Prepared p) {
        log.mayWrite("upload " + p.key());
        log.store().put(p.key(), p.file());
    }

    /** Step 4: the stored object has the local size and the local trailer (whose CRC covers the footer and body hash). */
    static void verifyUpload(ColdLog log, Prepared p) {
        ColdStore.ObjectInfo info = log.store().head(p.key()).orElseThrow(() -> ColdErrors.corrupt(p.key(),
                p.trailer().firstSeq(), p.trailer().lastSeq(), "missing right after upload"));
        if (info.size() != p.trailer().size()) {
            throw ColdErrors.corrupt(p.key(), p.trailer().firstSeq(), p.trailer().lastSeq(),
                    "uploaded " + info.size() + " bytes, wrote " + p.trailer().size());
        }
        SegmentReader r = SegmentReader.open(p.key(), info.size(), log.source(p.key()));
        if (!r.trailer().equals(p.trailer())) {
            throw ColdErrors.corrupt(p.key(), p.trailer().firstSeq(), p.trailer().lastSeq(),
                    "uploaded trailer differs from the local one");
        }
    }

    /** Step 5: commits the manifest with the segment appended; a no-op when a manifest already covers its range. */
    static SegmentMeta commit(ColdLog log, Prepared p) {
        SegmentMeta meta = p.meta();
        Manifest now = log.update("roll " + p.key(), m -> {
            if (m.lastSeq() >= meta.lastSeq()) {
                return null; // committed before a crash, or by another roller: nothing to do
            }
            if (m.lastSeq() != meta.firstSeq() - 1 && !(m.segments().isEmpty() && m.lastSeq() == 0)) {
                throw new StrandException(ErrorCode.SEQ_MISMATCH, "roll " + p.key() + " no longer continues the cold part, which ends at "
                        + m.lastSeq(), Map.of("head", m.lastSeq()));
            }
            if (!m.segments().isEmpty() && !m.segments().getLast().chainSha256().equals(meta.prevChainSha256())) {
                throw ColdErrors.corrupt(p.key(), meta.firstSeq(), meta.lastSeq(),
                        "its hash chain does not continue the last committed segment");
            }
            return m.withAppended(meta);
        });
        int i = now.segmentOf(meta.lastSeq());
        return i >= 0 && now.segments().get(i).key().equals(meta.key()) ? now.segments().get(i) : meta;
    }

    static void cleanup(Prepared p) {
        try {
            Files.deleteIfExists(p.file());
        } catch (IOException ignored) {
            // the next roll of this range truncates it
        }
    }
}
