package io.ratchet.statemachine.kv;

import java.util.Arrays;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * Puts and deletes, in key order, to be written at once ({@link KeyValueStore#write}). The last change
 * of a key wins, so a key put and then deleted within one set is a delete. Not thread-safe.
 */
public final class Changes {
    /** What {@link #lookup} answers for a key this set deletes. Compared by identity. */
    public static final byte[] DELETED = new byte[0];

    private final TreeMap<byte[], byte[]> changes = new TreeMap<>(Arrays::compareUnsigned);
    private long bytes;

    public void put(byte[] key, byte[] value) {
        if (value == null || value == DELETED) {
            throw new IllegalArgumentException("a value is never null; delete the key instead");
        }
        record(key, value);
    }

    public void delete(byte[] key) {
        record(key, DELETED);
    }

    private void record(byte[] key, byte[] value) {
        byte[] previous = changes.put(key, value);
        bytes += value.length + (previous == null ? key.length : -previous.length);
    }

    /** The value this set gives {@code key}, {@link #DELETED} when it deletes it, or null when it leaves it alone. */
    public byte[] lookup(byte[] key) {
        return changes.get(key);
    }

    /** The changes to keys from {@code from} (inclusive) to {@code to} (exclusive; null: to the end). */
    NavigableMap<byte[], byte[]> range(byte[] from, byte[] to) {
        return to == null ? changes.tailMap(from, true) : changes.subMap(from, true, to, false);
    }

    /** Each change in key order: a value, or {@link #DELETED}. */
    public Iterable<Map.Entry<byte[], byte[]>> entries() {
        return changes.entrySet();
    }

    public boolean isEmpty() {
        return changes.isEmpty();
    }

    public int size() {
        return changes.size();
    }

    /** The keys' and values' bytes, roughly: how large a write this is. */
    public long bytes() {
        return bytes;
    }

    public void clear() {
        changes.clear();
        bytes = 0;
    }
}
