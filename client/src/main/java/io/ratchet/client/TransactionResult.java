package io.ratchet.client;

import io.ratchet.protocol.Result;
import java.util.List;

/**
 * The outcome of a cluster-wide transaction. When {@code successful}, every write applied at
 * {@code index}; when not, nothing applied and {@code conflicts} names each key whose index was not
 * the expected one.
 */
public record TransactionResult(boolean successful, long index, List<Result.Conflict> conflicts) {
    public TransactionResult {
        conflicts = List.copyOf(conflicts);
    }
}
