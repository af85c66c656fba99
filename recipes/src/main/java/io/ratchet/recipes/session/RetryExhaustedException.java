package io.ratchet.recipes.session;

import io.ratchet.client.ErrorCode;
import io.ratchet.client.RatchetException;
import java.util.List;

/**
 * A retry loop gave up: every one of its bounded attempts was refused because something it read had
 * moved (or it was interrupted while backing off). Nothing of the last attempt was applied, and of
 * earlier attempts neither: a refused attempt writes nothing. The cause, when there is one, is the last
 * attempt's {@link ConcurrencyException}.
 *
 * <p>{@link #trail()} tells what happened, attempt by attempt: which key was expected at which index
 * and where it actually was, how long the loop backed off, and, for a combined update, how many other
 * updates each attempt carried.
 *
 * <p>Retrying at once is unlikely to help: the key is contended. Back off for longer, or serialize the
 * writers of the hot key ({@code client.metrics()} shows which one it is).
 */
public final class RetryExhaustedException extends RatchetException {
    private final int attempts;
    private final transient List<RetryEvent> trail;

    public RetryExhaustedException(String message, int attempts, Throwable cause) {
        this(message, attempts, cause, List.of());
    }

    /** With the loop's trail, ending in its {@link RetryEvent.Exhausted} event. */
    public RetryExhaustedException(String message, int attempts, Throwable cause, List<RetryEvent> trail) {
        super(ErrorCode.RETRY_EXHAUSTED, message, cause);
        this.attempts = attempts;
        this.trail = List.copyOf(trail);
    }

    /** How many attempts were made. */
    public int attempts() {
        return attempts;
    }

    /** The loop's events in order, the last one its {@link RetryEvent.Exhausted}; immutable (empty when not given). */
    public List<RetryEvent> trail() {
        return trail == null ? List.of() : trail;
    }
}
