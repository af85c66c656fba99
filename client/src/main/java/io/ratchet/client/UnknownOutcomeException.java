package io.ratchet.client;

/**
 * A write got no answer within the client's bounded retries: it may or may not have been applied.
 * Do not blindly resend a create-only or conditional write; read the item first and decide from its
 * current value and index (a compare-exchange on the index makes that decision safe).
 */
public final class UnknownOutcomeException extends RatchetException {
    public UnknownOutcomeException(String message, Throwable cause) {
        super(message, cause);
    }
}
