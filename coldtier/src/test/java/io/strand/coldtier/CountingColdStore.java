package io.strand.coldtier;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/** Test double in front of a real store: counts reads so tests can assert what a page fetched. */
class CountingColdStore implements ColdStore {
    final ColdStore inner;
    final AtomicLong rangeGets = new AtomicLong();
    final AtomicLong rangeBytes = new AtomicLong();
    final AtomicLong wholeGets = new AtomicLong();
    /** Runs before every put with the key about to be written: tests stage races at exact points. */
    volatile java.util.function.Consumer<String> beforePut = key -> { };
    /** Runs after every versioned read, with the key read, before the bytes go back to the caller. */
    volatile java.util.function.Consumer<String> afterVersionedGet = key -> { };

    CountingColdStore(ColdStore inner) {
        this.inner = inner;
    }

    void reset() {
        rangeGets.set(0);
        rangeBytes.set(0);
        wholeGets.set(0);
    }

    @Override
    public void put(String key, Path file) {
        beforePut.accept(key);
        inner.put(key, file);
    }

    @Override
    public void put(String key, byte[] bytes) {
        inner.put(key, bytes);
    }

    @Override
    public byte[] get(String key) {
        wholeGets.incrementAndGet();
        return inner.get(key);
    }

    @Override
    public byte[] getRange(String key, long offset, int length) {
        rangeGets.incrementAndGet();
        byte[] b = inner.getRange(key, offset, length);
        rangeBytes.addAndGet(b.length);
        return b;
    }

    @Override
    public Optional<Versioned> getVersioned(String key) {
        wholeGets.incrementAndGet();
        Optional<Versioned> v = inner.getVersioned(key);
        afterVersionedGet.accept(key);
        return v;
    }

    @Override
    public Optional<ObjectInfo> head(String key) {
        return inner.head(key);
    }

    @Override
    public List<ObjectInfo> list(String prefix) {
        return inner.list(prefix);
    }

    @Override
    public void delete(String key) {
        inner.delete(key);
    }

    @Override
    public Optional<String> putIfAbsent(String key, byte[] bytes) {
        return inner.putIfAbsent(key, bytes);
    }

    @Override
    public Optional<String> putIfMatch(String key, byte[] bytes, String etag) {
        return inner.putIfMatch(key, bytes, etag);
    }

    @Override
    public String describe() {
        return "counting " + inner.describe();
    }

    @Override
    public void close() {
        inner.close();
    }
}
