package io.ratchet.statemachine;

import io.ratchet.statemachine.kv.Cursor;
import io.ratchet.statemachine.kv.Overlay;
import java.util.HashMap;
import java.util.TreeSet;
import java.util.function.ObjLongConsumer;

/**
 * Deleted keys, each with the index that deleted it, remembered for watches; at most
 * {@link CompareExchangeStore#MAX_TOMBSTONES}, the oldest forgotten first, in the order of their deleting
 * index (then key, in code point order). Every deletion not remembered happened at or before the watermark.
 *
 * <p>Bounded, so held in the heap as well (a few megabytes at most), in the order they are forgotten:
 * a put asks whether its key has a tombstone, and a question to the disk per put cost more than the put.
 * The store holds each as one key (the deleting index, then the key), read back when it opens.
 * Written by apply, read under the store's read lock.
 */
final class Tombstones {
    private static final byte[] ORDER_START = StateKeys.single(StateKeys.TOMBSTONE_ORDER);
    private static final byte[] ORDER_END = StateKeys.after(ORDER_START);

    private final Overlay state;
    /** Normalized key to deleting index. */
    private final HashMap<String, Long> deleted = new HashMap<>();
    /**
     * The same, in the order they are forgotten: deleting index, then key in code point order, as the
     * store's keys sort; so every replica, restarted or not, forgets the same one among those of one entry.
     */
    private final TreeSet<Tomb> order = new TreeSet<>();

    private record Tomb(long index, String id) implements Comparable<Tomb> {
        @Override
        public int compareTo(Tomb o) {
            int c = Long.compare(index, o.index);
            return c != 0 ? c : Items.compareIds(id, o.id);
        }
    }
    private long watermark;

    /** The tombstones the store holds. */
    Tombstones(Overlay state, long watermark) {
        this.state = state;
        this.watermark = watermark;
        try (Cursor c = state.scan(ORDER_START, ORDER_END)) {
            while (c.next()) {
                String id = StateKeys.numberedName(c.key());
                long index = StateKeys.number(c.key());
                deleted.put(id, index);
                order.add(new Tomb(index, id));
            }
        }
    }

    /** The index that deleted normalized key {@code id}, or -1 when no deletion of it is remembered. */
    long deletedAt(String id) {
        Long index = deleted.get(id);
        return index == null ? -1 : index;
    }

    /** Remembers that {@code id} was deleted at {@code index} (replacing an earlier deletion of it). */
    void add(String id, long index) {
        remove(id);
        deleted.put(id, index);
        order.add(new Tomb(index, id));
        state.put(StateKeys.numbered(StateKeys.TOMBSTONE_ORDER, index, id), new byte[0]);
    }

    /** Forgets the deletion of {@code id}, if one is remembered (the key was written again). */
    void remove(String id) {
        Long index = deleted.remove(id);
        if (index != null) {
            order.remove(new Tomb(index, id));
            state.delete(StateKeys.numbered(StateKeys.TOMBSTONE_ORDER, index, id));
        }
    }

    /**
     * Forgets the oldest deletion, raising the watermark to its index; returns its key, or null when none
     * is remembered.
     */
    String forgetOldest() {
        Tomb first = order.pollFirst();
        if (first == null) {
            return null;
        }
        deleted.remove(first.id());
        watermark = Math.max(watermark, first.index());
        state.delete(StateKeys.numbered(StateKeys.TOMBSTONE_ORDER, first.index(), first.id()));
        return first.id();
    }

    /** Sets the watermark to {@code index} when that is higher (an imported state's). */
    void raiseWatermark(long index) {
        watermark = Math.max(watermark, index);
    }

    long size() {
        return deleted.size();
    }

    long watermark() {
        return watermark;
    }

    /** Every remembered deletion, oldest first: key and index. */
    void forEach(ObjLongConsumer<String> tombstone) {
        order.forEach(t -> tombstone.accept(t.id(), t.index()));
    }
}
