package io.ratchet.client.session;

import io.ratchet.client.RatchetException;

/**
 * A retry loop gave up: every one of its bounded attempts was refused because something it read had
 * moved (or it was interrupted while backing off). Nothing of the last attempt was applied, and of
 * earlier attempts neither: a refused attempt writes nothing. The cause, when there is one, is the last
 * attempt's {@link ConcurrencyException}.
 *
 * <p>Retrying at once is unlikely to help: the key is contended. Back off for longer, or serialize the
 * writers of the hot key ({@code client.metrics()} shows which one it is).
 */
public final class RetryExhaustedException extends RatchetException {
    private final int attempts;

    public RetryExhaustedException(String message, int attempts, Throwable cause) {
        super(message, cause);
        this.attempts = attempts;
    }

    /** How many attempts were made. */
    public int attempts() {
        return attempts;
    }
}
