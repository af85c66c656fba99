package io.ratchet.client;

/**
 * The root of every error the Ratchet client reports. Each subclass says when it is thrown, and its
 * {@link #code()} says whether the write certainly did not apply and whether a retry is safe.
 */
public abstract class RatchetException extends RuntimeException {
    private final ErrorCode code;

    protected RatchetException(ErrorCode code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    /** What this failure means, the same name and meaning from the command line and the HTTP API. */
    public final ErrorCode code() {
        return code;
    }
}
