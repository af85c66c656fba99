package io.ratchet.node.http;

import io.ratchet.client.ErrorCode;

/**
 * An answer other than success, raised anywhere a request is handled: its status, its error (the {@code
 * error} field of the body), its {@link ErrorCode} (the {@code code} field) and a message naming what is
 * wrong. Nothing has been written when one is raised before the write was sent.
 */
final class HttpError extends RuntimeException {
    private final int status;
    private final String error;
    private final ErrorCode code;

    HttpError(int status, String error, ErrorCode code, String message) {
        super(message, null, false, false);
        this.status = status;
        this.error = error;
        this.code = code;
    }

    static HttpError badRequest(String message) {
        return new HttpError(400, "bad_request", ErrorCode.INVALID_REQUEST, message);
    }

    static HttpError tooLarge(String message) {
        return new HttpError(413, "payload_too_large", ErrorCode.INVALID_REQUEST, message);
    }

    int status() {
        return status;
    }

    String error() {
        return error;
    }

    ErrorCode code() {
        return code;
    }
}
