package io.ratchet.node.http;

/**
 * An answer other than success, raised anywhere a request is handled: its status, its error code (the
 * {@code error} field of the body) and a message naming what is wrong. Nothing has been written when
 * one is raised before the write was sent.
 */
final class HttpError extends RuntimeException {
    private final int status;
    private final String code;

    HttpError(int status, String code, String message) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
    }

    static HttpError badRequest(String message) {
        return new HttpError(400, "bad_request", message);
    }

    static HttpError tooLarge(String message) {
        return new HttpError(413, "payload_too_large", message);
    }

    int status() {
        return status;
    }

    String code() {
        return code;
    }
}
