package io.ratchet.recipes.session;

import io.ratchet.client.ErrorCode;
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
 * in a new session, from fresh reads ({@link Retry#run} does that). When a {@link Retry} loop's attempt
 * was refused, the exception (the cause of its {@link RetryExhaustedException}) carries the loop's
 * {@link #trail()} up to that refusal.
 */
public final class ConcurrencyException extends RatchetException {
    private final transient List<Result.Conflict> conflicts;
    /** Set once by the retry loop that got the refusal; empty for a save of the caller's own. */
    private transient volatile List<RetryEvent> trail = List.of();

    public ConcurrencyException(List<Result.Conflict> conflicts) {
        super(ErrorCode.CONDITION_FAILED, describe(conflicts), null);
        this.conflicts = List.copyOf(conflicts);
    }

    /** Every failed condition: key, expected index, actual index. */
    public List<Result.Conflict> conflicts() {
        return conflicts;
    }

    /**
     * The events of the {@link Retry} loop whose attempt was refused, up to and including that attempt's
     * {@link RetryEvent.Abort}; immutable. Empty when the save was not made by a retry loop.
     */
    public List<RetryEvent> trail() {
        List<RetryEvent> t = trail;
        return t == null ? List.of() : t;
    }

    /** Attaches the loop's trail; returns this. */
    ConcurrencyException withTrail(List<RetryEvent> trail) {
        this.trail = List.copyOf(trail);
        return this;
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
