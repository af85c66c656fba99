package io.ratchet.client.session;

import io.ratchet.client.RatchetException;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Result;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A {@link ClusterSession#saveChanges() save} was refused because documents or items it was conditioned
 * on had moved since the session read them; nothing was applied. {@link #conflicts()} names each key
 * (for a document, its guard {@code rvn-atomic/<id>}) with the index the session expected and the one
 * the cluster has (0: absent).
 *
 * <p>Not retryable as is: resending the same changes fails the same way. Re-run the whole unit of work
 * in a new session, from fresh reads ({@link Retry#run} does that).
 */
public final class ConcurrencyException extends RatchetException {
    private final transient List<Result.Conflict> conflicts;

    public ConcurrencyException(List<Result.Conflict> conflicts) {
        super(describe(conflicts), null);
        this.conflicts = List.copyOf(conflicts);
    }

    /** Every failed condition: key, expected index, actual index. */
    public List<Result.Conflict> conflicts() {
        return conflicts;
    }

    /** The keys that had moved. */
    public List<String> keys() {
        return conflicts.stream().map(Result.Conflict::key).toList();
    }

    private static String describe(List<Result.Conflict> conflicts) {
        return "the save was refused, nothing applied; moved since read: " + conflicts.stream()
                .map(c -> name(c.key()) + " expected index " + c.expected() + ", actual " + c.actual())
                .collect(Collectors.joining("; "));
    }

    private static String name(String key) {
        return Keys.isGuard(key)
                ? "document '" + key.substring(Limits.RESERVED_GUARD_PREFIX.length()) + "' (guard " + key + ")"
                : "'" + key + "'";
    }
}
