package io.ratchet.node.http;

import io.ratchet.client.ErrorCode;
import io.ratchet.protocol.Json;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * The errors Jetty answers itself, before a request reaches the API (a request line, path, header or
 * body it cannot parse, a header block too large), in the API's own shape: {@code {"error": ERROR,
 * "message": TEXT, "code": CODE}} (docs/HTTP.md, "Errors"), never an HTML page. Nothing is written for any of them, and
 * each answer ends its connection.
 */
final class JsonErrors extends ErrorHandler {
    private static final HttpField JSON = new HttpField(HttpHeader.CONTENT_TYPE, "application/json");

    @Override
    protected void generateResponse(Request request, Response response, int status, String message, Throwable cause,
                                    Callback callback) {
        // Jetty ends the connection after a request it failed, so the answer says so (else a client that
        // keeps connections sends its next request on it, and gets no answer); a body is dropped first, so
        // that a client still sending it reads the answer, not a reset.
        HttpApi.drained(request).whenComplete((done, error) -> {
            response.getHeaders().put(HttpHeader.CONNECTION, "close");
            response.getHeaders().put(JSON);
            response.write(true, ByteBuffer.wrap(body(status, message)), callback);
        });
    }

    @Override
    public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
        fields.put(JSON);
        return ByteBuffer.wrap(body(status, reason));
    }

    static byte[] body(int status, String message) {
        String text = message == null || message.isBlank() ? HttpStatus.getMessage(status) : message;
        return Json.write(HttpReply.errorBody(code(status), errorCode(status), text)).getBytes(StandardCharsets.UTF_8);
    }

    /** The {@link ErrorCode} of a status Jetty answers with: the request's fault, but for its own failures. */
    static ErrorCode errorCode(int status) {
        if (status == 404) {
            return ErrorCode.NOT_FOUND;
        }
        return status >= 500 && status != 501 && status != 505 ? ErrorCode.INTERNAL_ERROR : ErrorCode.INVALID_REQUEST;
    }

    /** The API's error code for a status Jetty answers with. */
    static String code(int status) {
        return switch (status) {
            case 400 -> "bad_request";
            case 404 -> "not_found";
            case 405 -> "method_not_allowed";
            case 408 -> "request_timeout";
            case 411 -> "length_required";
            case 413 -> "payload_too_large";
            case 414 -> "uri_too_long";
            case 415 -> "unsupported_media_type";
            case 431 -> "headers_too_large";
            case 501 -> "not_implemented";
            case 505 -> "http_version_not_supported";
            default -> status >= 500 ? "internal_error" : "bad_request";
        };
    }
}
