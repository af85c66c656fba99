package io.ratchet.client;

/**
 * No leader (or, for a stale read, no node) answered within the client's bounded retries. Thrown
 * for reads and status calls, which change nothing, and for a write only when no node accepted it (no
 * session could be opened, every connection was refused), so it certainly did not apply and retrying
 * later is safe ({@link ErrorCode#CLUSTER_UNAVAILABLE}). A write that was sent and got no answer reports
 * {@link UnknownOutcomeException} instead, because it may have been applied.
 */
public final class ClusterUnavailableException extends RatchetException {
    public ClusterUnavailableException(String message, Throwable cause) {
        super(ErrorCode.CLUSTER_UNAVAILABLE, message, cause);
    }
}
