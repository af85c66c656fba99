package io.ratchet.statemachine;

import io.ratchet.statemachine.kv.KeyValueStore;

/**
 * The store's position and counters, one record written with every entry's changes: the entry's index
 * and term (so the state says which entry it holds, after a crash too), cluster time, and the sums the
 * quota is judged by, which would otherwise take a pass over the whole state to recount.
 */
record StoreMeta(long lastEntryIndex, long lastEntryTerm, long clusterTime, long itemCount, long itemFootprint,
                 long documentBytes, long rememberedBytes, long tombstoneCount, long tombstoneWatermark,
                 long quota, boolean quotaSet) {
    private static final byte[] KEY = StateKeys.single(StateKeys.META);
    private static final int LONGS = 10;

    static StoreMeta empty(long defaultQuota) {
        return new StoreMeta(0, 0, 0, 0, 0, 0, 0, 0, 0, defaultQuota, false);
    }

    static byte[] key() {
        return KEY.clone();
    }

    byte[] encode() {
        byte[] b = new byte[1 + LONGS * Long.BYTES + 1];
        b[0] = StateKeys.FORMAT;
        long[] v = {lastEntryIndex, lastEntryTerm, clusterTime, itemCount, itemFootprint, documentBytes,
                rememberedBytes, tombstoneCount, tombstoneWatermark, quota};
        for (int i = 0; i < LONGS; i++) {
            ByteArrays.putLong(b, 1 + i * Long.BYTES, v[i]);
        }
        b[b.length - 1] = (byte) (quotaSet ? 1 : 0);
        return b;
    }

    /**
     * The position of the state in {@code store}, or null when it holds none (a new store).
     *
     * @throws IllegalStateException when it holds a layout this build does not read
     */
    static StoreMeta read(KeyValueStore store) {
        byte[] b = store.get(KEY);
        if (b == null) {
            return null;
        }
        if (b.length > 0 && b[0] > StateKeys.FORMAT) {
            throw new IllegalStateException("the store holds state in layout " + b[0] + ", which a later release wrote;"
                    + " this release reads layout " + StateKeys.FORMAT + ": run that release (or a later one) on this"
                    + " storage, or restore a backup into an empty one");
        }
        if (b.length == 0 || b[0] != StateKeys.FORMAT) {
            throw new IllegalStateException("the store holds state in layout " + (b.length == 0 ? "?" : b[0])
                    + "; this release reads layout " + StateKeys.FORMAT);
        }
        if (b.length != 1 + LONGS * Long.BYTES + 1) {
            throw new IllegalStateException("the store's position record has " + b.length + " bytes; it is damaged");
        }
        long[] v = new long[LONGS];
        for (int i = 0; i < LONGS; i++) {
            v[i] = ByteArrays.getLong(b, 1 + i * Long.BYTES);
        }
        return new StoreMeta(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], b[b.length - 1] != 0);
    }
}
