package io.ratchet.statemachine;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Result.TxnState.Record;
import io.ratchet.protocol.WireKind;
import io.ratchet.statemachine.kv.Cursor;
import io.ratchet.statemachine.kv.Overlay;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One group's part of the transactions across groups (see {@link Command.Prepare}): the intents held on
 * its keys, and the records of the transactions it is the primary of. Kept in the store (so on disk, in
 * checkpoints and in backups) and in memory, where every write looks them up: they are few, and live for
 * a transaction's few rounds.
 *
 * <pre>
 *   x key        an intent: the transaction, its primary group, the index and time of its prepare, its operation
 *   X txn        a record: its state, its lease's end, when it was decided, its groups
 *   f            until when decisions to commit are held for a backup's cut (cluster time)
 * </pre>
 */
final class Intents {
    static final byte INTENT = 'x';
    static final byte RECORD = 'X';
    static final byte FENCE = 'f';

    /**
     * A key held by a transaction: the operation to apply if it commits, planned as of its prepare (at
     * {@code index}, the prepare's log index, and {@code time}, its cluster time), so every replica
     * writes the same whenever it settles.
     */
    record Intent(String txn, int primary, long index, long time, Command.Op op) {
    }

    /** A transaction's record in its primary group; {@code decidedAt} is 0 while it is pending. */
    record TxnRecord(String txn, Record state, long deadline, long decidedAt, List<Integer> groups) {
        TxnRecord decided(Record outcome, long time) {
            return new TxnRecord(txn, outcome, deadline, time, groups);
        }
    }

    private final Overlay state;
    /** By normalized key. */
    private final Map<String, Intent> byKey = new HashMap<>();
    private final Map<String, TxnRecord> records = new LinkedHashMap<>();
    /** Until when, in cluster time, decisions to commit and forgets are held (see {@link Command.Fence}); 0: not. */
    private long fencedUntil;

    Intents(Overlay state) {
        this.state = state;
        scan(INTENT, (key, value) -> byKey.put(StateKeys.name(key), SnapshotCodec.parse(value, in -> new Intent(
                SnapshotCodec.readString(in), in.readInt(), in.readLong(), in.readLong(), Codec.decodeOp(in.readAllBytes())))));
        byte[] fence = state.get(StateKeys.single(FENCE));
        fencedUntil = fence == null ? 0 : ByteArrays.getLong(fence, 0);
        scan(RECORD, (key, value) -> {
            TxnRecord r = SnapshotCodec.parse(value, in -> {
                Record s = WireKind.byTag(Record.values(), in.readByte());
                long deadline = in.readLong();
                long decidedAt = in.readLong();
                int n = in.readInt();
                List<Integer> groups = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    groups.add(in.readInt());
                }
                return new TxnRecord(StateKeys.name(key), s, deadline, decidedAt, groups);
            });
            records.put(r.txn(), r);
        });
    }

    private interface Visit {
        void accept(byte[] key, byte[] value);
    }

    private void scan(byte part, Visit visit) {
        byte[] from = StateKeys.single(part);
        try (Cursor c = state.scan(from, StateKeys.after(from))) {
            while (c.next()) {
                visit.accept(c.key(), c.value());
            }
        }
    }

    long fencedUntil() {
        return fencedUntil;
    }

    void fence(long until) {
        fencedUntil = until;
        byte[] bytes = new byte[Long.BYTES];
        ByteArrays.putLong(bytes, 0, until);
        state.put(StateKeys.single(FENCE), bytes);
    }

    boolean isEmpty() {
        return byKey.isEmpty();
    }

    /** The intent on normalized key {@code id}, or null. */
    Intent on(String id) {
        return byKey.isEmpty() ? null : byKey.get(id);
    }

    /** Whether some intent's normalized key starts with {@code prefix} (normalized). */
    boolean anyUnder(String prefix) {
        for (String id : byKey.keySet()) {
            if (id.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    void hold(String id, Intent intent) {
        byKey.put(id, intent);
        state.put(StateKeys.named(INTENT, id), SnapshotCodec.bytes(out -> {
            SnapshotCodec.writeString(out, intent.txn());
            out.writeInt(intent.primary());
            out.writeLong(intent.index());
            out.writeLong(intent.time());
            out.write(Codec.encodeOp(intent.op()));
        }));
    }

    /** {@code txn}'s intents here, by normalized key, in key order (all from one prepare: one index). */
    Map<String, Intent> of(String txn) {
        Map<String, Intent> held = new TreeMap<>(Items::compareIds);
        byKey.forEach((id, intent) -> {
            if (intent.txn().equals(txn)) {
                held.put(id, intent);
            }
        });
        return held;
    }

    /** Removes and returns {@code txn}'s intents here, as {@link #of}. */
    Map<String, Intent> release(String txn) {
        Map<String, Intent> released = of(txn);
        released.keySet().forEach(id -> {
            byKey.remove(id);
            state.delete(StateKeys.named(INTENT, id));
        });
        return released;
    }

    TxnRecord record(String txn) {
        return records.get(txn);
    }

    void putRecord(TxnRecord r) {
        records.put(r.txn(), r);
        state.put(StateKeys.named(RECORD, r.txn()), SnapshotCodec.bytes(out -> {
            out.writeByte(r.state().tag());
            out.writeLong(r.deadline());
            out.writeLong(r.decidedAt());
            out.writeInt(r.groups().size());
            for (int g : r.groups()) {
                out.writeInt(g);
            }
        }));
    }

    void forget(String txn) {
        records.remove(txn);
        state.delete(StateKeys.named(RECORD, txn));
    }

    /** Every intent (a view). */
    Collection<Intent> intents() {
        return Collections.unmodifiableCollection(byKey.values());
    }

    /** Every record (a copy). */
    List<TxnRecord> records() {
        return new ArrayList<>(records.values());
    }
}
