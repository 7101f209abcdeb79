package io.strand.app.auth;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;

/**
 * Every token this server minted and every revocation, as an append-only text file
 * ({@code DATA/tokens.journal}), so revocations survive restarts and a revoke can name the
 * token's workspace. Thread-safe: the map is concurrent and appends hold one lock.
 *
 * <p>Format, one record per line (ASCII, fields separated by one space):
 * <pre>
 * | record  | fields                                   | example                              |
 * |---------|------------------------------------------|--------------------------------------|
 * | mint    | {@code m <jti> <ws|*> <scope> <exp>}     | {@code m q3Zk… acme rw 1764453600}   |
 * | revoke  | {@code r <jti>}                          | {@code r q3Zk…}                      |
 * </pre>
 * {@code exp} is epoch seconds. Commit point: a record counts once its {@code '\n'} is forced to
 * disk; mint and revoke return only after that fsync. A crash mid-append leaves a last line with
 * no newline, which was never acknowledged: loading cuts it off. A complete line that does not
 * parse is corruption and stops the start (never skipped silently). Loading also rewrites the
 * file without the records of expired tokens (temp + fsync + rename), so it stays small.
 */
final class TokenJournal implements TokenRegistry {
    static final String FILE = "tokens.journal";
    private static final Pattern JTI = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    private final Path file;
    private final Map<String, TokenRecord> tokens = new ConcurrentHashMap<>();
    private final ReentrantLock appendLock = new ReentrantLock();
    private final FileChannel channel;

    private TokenJournal(Path file, FileChannel channel) {
        this.file = file;
        this.channel = channel;
    }

    /** Loads (and tidies) the journal under {@code dataDir}, dropping tokens expired at {@code nowSeconds}. */
    static TokenJournal open(Path dataDir, long nowSeconds) {
        Path file = dataDir.resolve(FILE);
        try {
            Map<String, TokenRecord> loaded = new LinkedHashMap<>();
            boolean rewrite = false;
            if (Files.exists(file)) {
                byte[] bytes = Files.readAllBytes(file);
                int end = lastNewline(bytes) + 1;
                if (end < bytes.length) {
                    rewrite = true; // a torn, unacknowledged last record
                }
                String text = new String(bytes, 0, end, StandardCharsets.US_ASCII);
                int lineNo = 0;
                for (String line : text.split("\n")) {
                    lineNo++;
                    if (!line.isEmpty()) {
                        apply(loaded, line, file, lineNo);
                    }
                }
                int before = loaded.size();
                loaded.values().removeIf(t -> t.exp() <= nowSeconds);
                rewrite |= loaded.size() != before;
            }
            if (rewrite) {
                AuthFiles.writePrivate(file, render(loaded.values()));
            }
            FileChannel ch = FileChannel.open(file, Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.APPEND), AuthFiles.ownerOnly(dataDir));
            TokenJournal journal = new TokenJournal(file, ch);
            journal.tokens.putAll(loaded);
            return journal;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the token journal " + file, e);
        }
    }

    private static int lastNewline(byte[] bytes) {
        for (int i = bytes.length - 1; i >= 0; i--) {
            if (bytes[i] == '\n') {
                return i;
            }
        }
        return -1;
    }

    private static void apply(Map<String, TokenRecord> into, String line, Path file, int lineNo) {
        String[] f = line.split(" ");
        try {
            if (f[0].equals("m") && f.length == 5 && JTI.matcher(f[1]).matches()) {
                into.put(f[1], new TokenRecord(f[1], f[2], Scope.parse(f[3]), Long.parseLong(f[4]), false));
                return;
            }
            if (f[0].equals("r") && f.length == 2 && JTI.matcher(f[1]).matches()) {
                into.computeIfPresent(f[1], (k, t) -> t.revoke());
                return;
            }
        } catch (IllegalArgumentException e) {
            // falls through to the corruption report
        }
        throw new IllegalStateException("corrupt token journal " + file + " at line " + lineNo + ": '"
                + (line.length() > 80 ? line.substring(0, 80) + "…" : line) + "'");
    }

    private static byte[] render(Iterable<TokenRecord> records) {
        StringBuilder sb = new StringBuilder();
        for (TokenRecord t : records) {
            sb.append(mintLine(t));
            if (t.revoked()) {
                sb.append("r ").append(t.jti()).append('\n');
            }
        }
        return sb.toString().getBytes(StandardCharsets.US_ASCII);
    }

    private static String mintLine(TokenRecord t) {
        return "m " + t.jti() + " " + t.ws() + " " + t.scope().wire() + " " + t.exp() + "\n";
    }

    static boolean isJti(String text) {
        return text != null && JTI.matcher(text).matches();
    }

    @Override
    public Optional<TokenRecord> find(String jti) {
        return Optional.ofNullable(tokens.get(jti));
    }

    /** Records a new token; returns after the record is on disk. */
    @Override
    public void minted(TokenRecord t) {
        append(mintLine(t));
        tokens.put(t.jti(), t);
    }

    /** Marks {@code jti} revoked, durably; false when this journal never saw it. Idempotent. */
    @Override
    public boolean revoke(String jti) {
        appendLock.lock();
        try {
            TokenRecord t = tokens.get(jti);
            if (t == null) {
                return false;
            }
            if (!t.revoked()) {
                append("r " + jti + "\n");
                tokens.put(jti, t.revoke());
            }
            return true;
        } finally {
            appendLock.unlock();
        }
    }

    private void append(String line) {
        appendLock.lock();
        long size = -1;
        try {
            size = channel.size();
            ByteBuffer buf = ByteBuffer.wrap(line.getBytes(StandardCharsets.US_ASCII));
            while (buf.hasRemaining()) {
                channel.write(buf);
            }
            channel.force(false);
        } catch (IOException e) {
            truncateTo(size); // so the next record does not land on a torn one
            throw new UncheckedIOException("cannot append to the token journal " + file, e);
        } finally {
            appendLock.unlock();
        }
    }

    private void truncateTo(long size) {
        if (size >= 0) {
            try {
                channel.truncate(size);
            } catch (IOException ignored) {
                // the start-up load cuts a torn tail anyway
            }
        }
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // nothing buffered: every append was forced
        }
    }
}
