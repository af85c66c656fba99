package io.ratchet.statemachine;

import java.util.Arrays;

/**
 * The lowest key at which an ordered index may still hold an entry, for an index whose entries are
 * taken from its front (expiry orders, the oldest tombstones). A store on disk keeps a deleted key as a
 * deletion marker until compaction drops it, and a scan from the index's start steps over every such
 * marker; a scan from here does not. Not state: it only says where entries cannot be, so results are the
 * same with or without it, and it starts unknown (the index's start) after a restart.
 *
 * <p>Moved up by a scan that found its first entry ({@link #firstEntryAt}), down by every insertion
 * below it ({@link #inserted}). Readers move it under the store's read lock, the writer under its write
 * lock; every value a reader sets is one it saw as the first entry, so concurrent readers may only set
 * it to equally valid values.
 */
final class LowWater {
    private final byte[] start;
    private volatile byte[] floor;

    /** @param start the index's first possible key (its part's prefix) */
    LowWater(byte[] start) {
        this.start = start;
        this.floor = start;
    }

    /** Where a scan of the index starts. */
    byte[] from() {
        return floor;
    }

    /** A scan that started at {@link #from} found its first entry at {@code key} (or none: the index's end, {@code end}). */
    void firstEntryAt(byte[] key) {
        floor = key;
    }

    /** An entry was written at {@code key}. */
    void inserted(byte[] key) {
        byte[] f = floor;
        if (Arrays.compareUnsigned(key, f) < 0) {
            floor = key.clone();
        }
    }

    /** Forgets what it learnt: the next scan starts at the index's start. */
    void reset() {
        floor = start;
    }
}
