package io.ratchet.client;

/**
 * No leader (or, for a stale read, no node) answered within the client's bounded retries. Thrown
 * for reads and status calls, which change nothing, so retrying later is safe. A write that gets no
 * answer reports {@link UnknownOutcomeException} instead, because it may have been applied.
 */
public final class ClusterUnavailableException extends RatchetException {
    public ClusterUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
