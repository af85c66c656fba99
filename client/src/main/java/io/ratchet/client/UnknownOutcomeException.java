package io.ratchet.client;

/**
 * A write got no answer within the client's bounded retries: it may or may not have been applied.
 * Do not blindly resend a create-only or conditional write; read the item first and decide from its
 * current value and index (a compare-exchange on the index makes that decision safe). A write sent with
 * an idempotency key may be resent with the same key: the cluster answers it with the first outcome
 * ({@link ErrorCode#UNKNOWN_OUTCOME}).
 */
public final class UnknownOutcomeException extends RatchetException {
    public UnknownOutcomeException(String message, Throwable cause) {
        super(ErrorCode.UNKNOWN_OUTCOME, message, cause);
    }
}
