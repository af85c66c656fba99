package io.ratchet.statemachine;

import io.ratchet.protocol.Result;
import io.ratchet.statemachine.kv.Cursor;
import io.ratchet.statemachine.kv.Overlay;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * The results of requests sent with an idempotency key, each kept under its key until cluster time
 * passes its retention, and in the order they lapse beside them. Counts their {@link Footprint}, which
 * the store persists with its position.
 */
final class RememberedRequests {
    private static final byte[] ORDER_START = StateKeys.single(StateKeys.REMEMBERED_ORDER);
    private static final byte[] ORDER_END = StateKeys.after(ORDER_START);

    /**
     * The results of an idempotent request, kept until cluster time passes {@code until}, with a
     * fingerprint of the request's commands so a key reused for a different request is refused.
     * {@code canonical} says which fingerprint: {@link RequestFingerprint}'s, or (read from a snapshot of
     * format 3 or older) the hash of the request's wire encoding, which was used before.
     */
    record Remembered(long until, long fingerprint, boolean canonical, List<Result> results) {
    }

    private final Overlay state;
    private final LowWater lapsing = new LowWater(ORDER_START);
    /**
     * No remembered request lapses before this cluster time (Long.MAX_VALUE: none is remembered), as far as
     * this store has seen; 0 until the first look (after a restart). Lets an entry skip the scan for lapsed
     * requests, which most entries have none of. Not state: the scan's results are the same without it.
     */
    private long nextLapse;
    private long bytes;

    RememberedRequests(Overlay state, long bytes) {
        this.state = state;
        this.bytes = bytes;
    }

    /** What is remembered under idempotency key {@code key}, or null. */
    Remembered get(String key) {
        byte[] v = state.get(StateKeys.named(StateKeys.REMEMBERED, key));
        return v == null ? null : SnapshotCodec.parse(v, in -> new Remembered(in.readLong(), in.readLong(),
                in.readBoolean(), List.copyOf(SnapshotCodec.readResults(in))));
    }

    void put(String key, Remembered r) {
        state.put(StateKeys.named(StateKeys.REMEMBERED, key), SnapshotCodec.bytes(out -> {
            out.writeLong(r.until());
            out.writeLong(r.fingerprint());
            out.writeBoolean(r.canonical());
            SnapshotCodec.writeResults(out, r.results());
        }));
        byte[] order = StateKeys.numbered(StateKeys.REMEMBERED_ORDER, r.until(), key);
        state.put(order, new byte[0]);
        lapsing.inserted(order);
        nextLapse = Math.min(nextLapse, r.until());
        bytes += Footprint.remembered(key, r.results());
    }

    /** Forgets every request whose retention has passed at {@code clusterTime}. */
    void forgetLapsed(long clusterTime) {
        if (clusterTime < nextLapse) {
            return;
        }
        byte[] end = StateKeys.numbered(StateKeys.REMEMBERED_ORDER, clusterTime + 1, null);
        try (Cursor c = state.scan(lapsing.from(), ORDER_END)) {
            while (c.next()) {
                byte[] order = c.key();
                if (java.util.Arrays.compareUnsigned(order, end) >= 0) {
                    lapsing.firstEntryAt(order); // the first that stays
                    nextLapse = StateKeys.number(order);
                    return;
                }
                String key = StateKeys.numberedName(order);
                Remembered r = get(key);
                bytes -= Footprint.remembered(key, r.results());
                state.delete(StateKeys.named(StateKeys.REMEMBERED, key));
                state.delete(order);
            }
        }
        lapsing.firstEntryAt(ORDER_END);
        nextLapse = Long.MAX_VALUE;
    }

    /** The remembered results' {@link Footprint}, summed. */
    long bytes() {
        return bytes;
    }

    /** Every remembered request, in the order they lapse (for exports and tests). */
    void forEach(BiConsumer<String, Remembered> remembered) {
        try (Cursor c = state.scan(ORDER_START, ORDER_END)) {
            while (c.next()) {
                String key = StateKeys.numberedName(c.key());
                remembered.accept(key, get(key));
            }
        }
    }
}
