package io.ratchet.statemachine;

import io.ratchet.statemachine.kv.Cursor;
import io.ratchet.statemachine.kv.Overlay;

/**
 * Deleted keys, each with the index that deleted it, remembered for watches; the oldest are forgotten
 * first, in the order of their deleting index (then key). Every deletion not remembered happened at or
 * before the watermark. Counted here; the store persists the count and the watermark with its position.
 */
final class Tombstones {
    private static final byte[] ORDER_START = StateKeys.single(StateKeys.TOMBSTONE_ORDER);
    private static final byte[] ORDER_END = StateKeys.after(ORDER_START);

    private final Overlay state;
    private final LowWater oldest = new LowWater(ORDER_START);
    private long count;
    private long watermark;

    Tombstones(Overlay state, long count, long watermark) {
        this.state = state;
        this.count = count;
        this.watermark = watermark;
    }

    /** The index that deleted normalized key {@code id}, or -1 when no deletion of it is remembered. */
    long deletedAt(String id) {
        byte[] v = state.get(StateKeys.named(StateKeys.TOMBSTONE, id));
        return v == null ? -1 : StateKeys.getLong(v, 0);
    }

    /** Remembers that {@code id} was deleted at {@code index} (replacing an earlier deletion of it). */
    void add(String id, long index) {
        remove(id);
        state.put(StateKeys.named(StateKeys.TOMBSTONE, id), StateKeys.longBytes(index));
        byte[] order = StateKeys.numbered(StateKeys.TOMBSTONE_ORDER, index, id);
        state.put(order, new byte[0]);
        oldest.inserted(order);
        count++;
    }

    /** Forgets the deletion of {@code id}, if one is remembered (the key was written again). */
    void remove(String id) {
        byte[] key = StateKeys.named(StateKeys.TOMBSTONE, id);
        byte[] v = state.get(key);
        if (v != null) {
            state.delete(key);
            state.delete(StateKeys.numbered(StateKeys.TOMBSTONE_ORDER, StateKeys.getLong(v, 0), id));
            count--;
        }
    }

    /**
     * Forgets the oldest deletion, raising the watermark to its index; returns its key, or null when none
     * is remembered.
     */
    String forgetOldest() {
        byte[] first = null;
        try (Cursor c = state.scan(oldest.from(), ORDER_END)) {
            if (c.next()) {
                first = c.key();
            }
        }
        if (first == null) {
            oldest.firstEntryAt(ORDER_END);
            return null;
        }
        oldest.firstEntryAt(first);
        String id = StateKeys.numberedName(first);
        watermark = Math.max(watermark, StateKeys.number(first));
        remove(id);
        return id;
    }

    /** Sets the watermark to {@code index} when that is higher (an imported state's). */
    void raiseWatermark(long index) {
        watermark = Math.max(watermark, index);
    }

    long size() {
        return count;
    }

    long watermark() {
        return watermark;
    }

    /** Every remembered deletion, oldest first (for exports and tests): key and index. */
    void forEach(java.util.function.ObjLongConsumer<String> tombstone) {
        try (Cursor c = state.scan(ORDER_START, ORDER_END)) {
            while (c.next()) {
                tombstone.accept(StateKeys.numberedName(c.key()), StateKeys.number(c.key()));
            }
        }
    }

    void forgetCaches() {
        oldest.reset();
    }
}
