package io.ratchet.client;

/** The root of every error the Ratchet client reports. Each subclass says whether a retry is safe. */
public abstract class RatchetException extends RuntimeException {
    protected RatchetException(String message, Throwable cause) {
        super(message, cause);
    }
}
