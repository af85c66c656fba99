package io.ratchet.client;

/**
 * The root of every error the Ratchet client reports. Each subclass says when it is thrown, and its
 * {@link #code()} says whether the write certainly did not apply and whether a retry is safe.
 */
public abstract class RatchetException extends RuntimeException {
    protected RatchetException(String message, Throwable cause) {
        super(message, cause);
    }

    /** What this failure means, the same name and meaning from the command line and the HTTP API. */
    public abstract ErrorCode code();
}
