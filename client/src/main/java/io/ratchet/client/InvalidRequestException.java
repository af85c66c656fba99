package io.ratchet.client;

/**
 * The request breaks the protocol's rules (bad key, value, index, metadata, or a limit). Nothing was
 * written. Never retry it unchanged: it will be refused again.
 */
public final class InvalidRequestException extends RatchetException {
    public InvalidRequestException(String message, Throwable cause) {
        super(ErrorCode.INVALID_REQUEST, message, cause);
    }
}
