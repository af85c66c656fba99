package io.ratchet.client;

import io.ratchet.protocol.Result;
import io.ratchet.protocol.Keys;
import java.util.List;
import java.util.Map;

/**
 * The outcome of a cluster-wide transaction. When {@code successful}, every write applied: in one group at
 * {@code index}; across groups each group's writes at that group's own index ({@link #indexOf}), and
 * {@code index} is the primary group's. When not, nothing applied and {@code conflicts} names each key whose
 * index was not the expected one.
 *
 * @param indexes across groups, the index each written key (normalized) has now; empty in one group
 */
public record TransactionResult(boolean successful, long index, List<Result.Conflict> conflicts, Map<String, Long> indexes) {
    public TransactionResult {
        conflicts = List.copyOf(conflicts);
        indexes = Map.copyOf(indexes);
    }

    /** A transaction in one group: every write at {@code index}. */
    public TransactionResult(boolean successful, long index, List<Result.Conflict> conflicts) {
        this(successful, index, conflicts, Map.of());
    }

    /** The index {@code key}'s item has after a successful transaction that wrote it. */
    public long indexOf(String key) {
        Long i = indexes.get(Keys.normalize(key));
        return i != null ? i : index;
    }
}
