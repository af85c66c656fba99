package io.ratchet.statemachine.kv;

import java.io.Closeable;

/**
 * An ordered map from byte keys to byte values, in unsigned byte order, changed only in atomic sets of
 * changes: a reader sees all of a {@link Changes} or none of it. What the store keeps its state in
 * ({@link RocksKeyValueStore} on a node, {@link MemoryKeyValueStore} in unit tests); both pass one
 * contract test, so the store above behaves alike on either.
 *
 * <p>Reads may run beside a write; the caller orders writes (one writer at a time).
 */
public interface KeyValueStore extends Closeable {
    /** The value under {@code key}, or null. */
    byte[] get(byte[] key);

    /**
     * The entries whose keys are at least {@code from} and below {@code to} (null: to the end), in key
     * order, as of when the scan is made. The caller closes it.
     */
    Cursor scan(byte[] from, byte[] to);

    /**
     * Applies every change in {@code changes} at once.
     *
     * @throws StorageException when they could not be written; the store is then unusable (what it
     *                          holds is what it held before, but its owner must not go on as if written)
     */
    void write(Changes changes);

    /** Releases what the store holds; a store on disk keeps everything written before. */
    @Override
    void close();
}
