package io.ratchet.node.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.AddOverflowException;
import io.ratchet.client.DiskFullException;
import io.ratchet.client.NotAnIntegerException;
import io.ratchet.client.ErrorCode;
import io.ratchet.common.Failures;
import io.ratchet.client.QuotaExceededException;
import io.ratchet.recipes.lock.LeaseLostException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's HTTP server (Jetty): the JSON API under {@code /v1} (docs/HTTP.md, {@code /v1/openapi.json}),
 * the web console at {@code /}, and the {@link Probes} ({@code /metrics}, {@code /health/*}). Requests are
 * handled asynchronously: a long-polling watch holds no thread. Every request ends in a JSON answer
 * (but {@code /metrics}, Prometheus text); input a client sent never gets a 500.
 */
public final class HttpApi implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);
    /** Longer than the longest watch, so a long poll is not cut off as idle. */
    private static final long IDLE_TIMEOUT_MILLIS = 120_000;
    /** An over-limit body up to this size is read and dropped before the 413; a larger one is not read. */
    private static final long MAX_DISCARDED_BODY = 16L << 20;
    private static final Pattern CONSOLE_FILE = Pattern.compile("[A-Za-z0-9_-]+\\.(html|js|css|svg)");

    private final Server server;
    private final List<Route> routes;
    private final Probes probes;

    private HttpApi(Server server, List<Route> routes, Probes probes) {
        this.server = server;
        this.routes = routes;
        this.probes = probes;
    }

    /**
     * Starts serving on {@code host:port} (port 0: any free one).
     *
     * @param tls    the node's TLS in front of HTTP/1.1: HTTPS only, no plaintext connector; null for plain HTTP
     * @param routes the API (see {@link Routes})
     * @param probes {@code /metrics} and {@code /health/*}, outside the API
     */
    public static HttpApi start(String host, int port, SslConnectionFactory tls, Routes routes, Probes probes)
            throws IOException {
        QueuedThreadPool threads = new QueuedThreadPool(64, 4);
        threads.setName("ratchet-http");
        threads.setDaemon(true);
        Server server = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        // A key may hold any character, "%2F" included: the path is decoded by the route, not by Jetty.
        http.setUriCompliance(UriCompliance.UNSAFE);
        ServerConnector connector = new ServerConnector(server, 1, 1, connectionFactories(http, tls));
        connector.setHost(host);
        connector.setPort(port);
        connector.setIdleTimeout(IDLE_TIMEOUT_MILLIS);
        server.addConnector(connector);
        HttpApi api = new HttpApi(server, routes.all(), probes);
        server.setHandler(api.new Dispatch());
        server.setErrorHandler(new JsonErrors());
        try {
            server.start();
        } catch (Exception e) {
            try {
                server.stop();
            } catch (Exception suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new IOException("cannot serve HTTP on " + host + ":" + port + ": " + e.getMessage(), e);
        }
        return api;
    }

    /** HTTP/1.1, over TLS when there is any. */
    private static ConnectionFactory[] connectionFactories(HttpConfiguration http, SslConnectionFactory tls) {
        if (tls == null) {
            return new ConnectionFactory[] {new HttpConnectionFactory(http)};
        }
        SecureRequestCustomizer secure = new SecureRequestCustomizer();
        // Which names the certificate holds is the operator's choice; any Host the client connected by is served.
        secure.setSniHostCheck(false);
        http.addCustomizer(secure);
        return new ConnectionFactory[] {tls, new HttpConnectionFactory(http)};
    }

    /** The port it listens on. */
    public int port() {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    /** The routes served under /v1, for the OpenAPI test. */
    public List<Route> routes() {
        return routes;
    }

    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            LOG.warn("HTTP server did not stop cleanly", e);
        }
    }

    // ---- routing

    /**
     * One route: a method and a path, either exact ({@code /v1/status}) or a prefix whose rest of the
     * path is one parameter, slashes included ({@code /v1/items/{key}}).
     *
     * @param bodyLimit the largest body accepted, in bytes (0: the route takes none)
     */
    public record Route(String method, String prefix, String parameter, long bodyLimit, Handler handler) {
        /** How a route answers a call. */
        @FunctionalInterface
        public interface Handler {
            CompletableFuture<HttpReply> handle(HttpCall call);
        }

        /** The path as OpenAPI writes it: {@code /v1/items/{key}}. */
        public String template() {
            return parameter == null ? prefix : prefix + "/{" + parameter + "}";
        }

        /** The encoded rest of the path when this route's path matches {@code path}, else null. */
        String match(String path) {
            if (parameter == null) {
                return path.equals(prefix) ? "" : null;
            }
            return path.startsWith(prefix + "/") && path.length() > prefix.length() + 1
                    ? path.substring(prefix.length() + 1) : null;
        }
    }

    private final class Dispatch extends Handler.Abstract {
        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            try {
                String path = request.getHttpURI().getPath();
                if (path == null || path.isEmpty()) {
                    path = "/";
                }
                if (!path.startsWith("/v1/")) {
                    HttpReply probe = probes.answer(request.getMethod(), path);
                    write(response, callback, probe != null ? probe : console(request.getMethod(), path));
                    return true;
                }
                serve(request, response, callback, path);
            } catch (RuntimeException e) {
                // Refused before the body was read (a bad path or query): drop the body first.
                answerAfterDraining(request, response, callback, failure(e));
            }
            return true;
        }
    }

    private void serve(Request request, Response response, Callback callback, String path) {
        String method = request.getMethod();
        List<String> allowed = new ArrayList<>();
        Route route = null;
        String rest = null;
        for (Route r : routes) {
            String m = r.match(path);
            if (m == null) {
                continue;
            }
            allowed.add(r.method());
            if (r.method().equals(method)) {
                route = r;
                rest = m;
            }
        }
        if (route == null) {
            HttpReply reply = allowed.isEmpty()
                    ? HttpReply.error(404, "not_found", ErrorCode.NOT_FOUND, "no route " + method + " " + path + "; see /v1/openapi.json")
                    : HttpReply.error(405, "method_not_allowed", ErrorCode.INVALID_REQUEST, method + " is not allowed on " + path
                            + "; allowed: " + String.join(", ", allowed)).header("Allow", String.join(", ", allowed));
            answerAfterDraining(request, response, callback, reply);
            return;
        }
        Route chosen = route;
        HttpCall.HeaderLookup headers = name -> request.getHeaders().get(name);
        Map<String, String> query = query(request);
        String decoded = decodePath(rest);
        if (!decoded.isEmpty() && hasDotSegment(decoded)) {
            throw HttpError.badRequest("a key with a '.' or '..' path segment cannot travel in a URL (browsers and "
                    + "proxies resolve them, even escaped, and would address another key); use the CLI or the Java client");
        }
        readBody(request, chosen.bodyLimit())
                .thenCompose(body -> chosen.handler().handle(new HttpCall(method, decoded, query, headers, body)))
                .whenComplete((reply, error) -> write(response, callback, error == null ? reply : failure(error)));
    }

    private static Map<String, String> query(Request request) {
        Fields fields;
        try {
            fields = Request.extractQueryParameters(request, StandardCharsets.UTF_8);
        } catch (RuntimeException e) {
            throw HttpError.badRequest("the query string cannot be read: " + e.getMessage());
        }
        Map<String, String> query = new LinkedHashMap<>();
        for (Fields.Field field : fields) {
            if (field.getValues().size() > 1) {
                throw HttpError.badRequest("parameter '" + field.getName() + "' is given more than once");
            }
            query.put(field.getName(), field.getValue());
        }
        return query;
    }

    /** The body, refused with 413 past {@code limit} bytes (whatever Content-Length claimed). */
    private static CompletableFuture<byte[]> readBody(Request request, long limit) {
        long declared = request.getHeaders().getLongField(HttpHeader.CONTENT_LENGTH);
        if (limit == 0) {
            return drained(request).thenApply(done -> new byte[0]);
        }
        if (declared > limit) {
            if (declared > MAX_DISCARDED_BODY) {
                return CompletableFuture.failedFuture(tooLarge(declared, limit));
            }
            return drained(request).handle((done, error) -> {
                throw tooLarge(declared, limit);
            });
        }
        return Content.Source.asByteBufferAsync(request, (int) limit + 1).handle((buffer, error) -> {
            if (error != null) {
                Throwable cause = Failures.unwrap(error);
                throw cause instanceof IllegalArgumentException || cause instanceof IllegalStateException
                        ? tooLarge(-1, limit) : HttpError.badRequest("the body could not be read: " + cause.getMessage());
            }
            if (buffer.remaining() > limit) {
                throw tooLarge(buffer.remaining(), limit);
            }
            byte[] bytes = new byte[buffer.remaining()];
            buffer.get(bytes);
            return bytes;
        });
    }

    /**
     * Reads and drops the request's body (one of at most {@link #MAX_DISCARDED_BODY} declared bytes; a
     * larger or undeclared one is left, and the connection closes after the answer). Done before every
     * answer that does not read the body: a client still sending when the answer comes and the connection
     * closes sees a reset, not the answer (seen with the JDK's HttpClient).
     */
    static CompletableFuture<Void> drained(Request request) {
        long declared = request.getHeaders().getLongField(HttpHeader.CONTENT_LENGTH);
        if (declared <= 0 || declared > MAX_DISCARDED_BODY) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> drained = new CompletableFuture<>();
        Content.Source.consumeAll(request, Callback.from(drained));
        return drained;
    }

    /**
     * Says {@code Connection: close} on an answer to a request whose body is left unread (larger than is
     * drained, or still arriving). Jetty closes such a connection once the answer is sent, and without the
     * header a client that keeps connections (the JDK's HttpClient) may send its next request on it and
     * get no answer at all: the fuzz test's lost requests.
     */
    static void closeUnlessConsumed(Response response) {
        if (!response.getRequest().consumeAvailable()) {
            response.getHeaders().put(HttpHeader.CONNECTION, "close");
        }
    }

    private static void answerAfterDraining(Request request, Response response, Callback callback, HttpReply reply) {
        drained(request).whenComplete((done, error) -> write(response, callback, reply));
    }

    private static HttpError tooLarge(long size, long limit) {
        return HttpError.tooLarge((size < 0 ? "the body is" : "the body is " + size + " bytes;")
                + (size < 0 ? " over " : " the limit is ") + limit + " bytes");
    }

    /** Percent-decodes a path part as UTF-8, strictly: a malformed escape or invalid UTF-8 is refused. */
    static String decodePath(String encoded) {
        if (encoded.indexOf('%') < 0) {
            return encoded;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(encoded.length());
        for (int i = 0; i < encoded.length(); i++) {
            char c = encoded.charAt(i);
            if (c != '%') {
                bytes.writeBytes(String.valueOf(c).getBytes(StandardCharsets.UTF_8));
                continue;
            }
            if (i + 2 >= encoded.length() || Character.digit(encoded.charAt(i + 1), 16) < 0
                    || Character.digit(encoded.charAt(i + 2), 16) < 0) {
                throw HttpError.badRequest("the path has a malformed percent escape at '" + encoded.substring(i) + "'");
            }
            bytes.write(Integer.parseInt(encoded.substring(i + 1, i + 3), 16));
            i += 2;
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
        } catch (CharacterCodingException e) {
            throw HttpError.badRequest("the path is not valid UTF-8 once percent-decoded");
        }
    }

    private static boolean hasDotSegment(String path) {
        for (String segment : path.split("/", -1)) {
            if (segment.equals(".") || segment.equals("..")) {
                return true;
            }
        }
        return false;
    }

    /** Percent-encodes a key for a path: every byte of its UTF-8 but unreserved characters and '/'. */
    static String encodePath(String key) {
        StringBuilder out = new StringBuilder(key.length() + 8);
        for (byte b : key.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~/".indexOf(c) >= 0) {
                out.append(c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return out.toString();
    }

    // ---- the console

    private static HttpReply console(String method, String path) {
        String file = path.equals("/") || path.equals("/index.html") ? "index.html"
                : path.startsWith("/console/") ? path.substring("/console/".length()) : null;
        if (file == null || !CONSOLE_FILE.matcher(file).matches()) {
            return HttpReply.error(404, "not_found", ErrorCode.NOT_FOUND, "nothing at " + path + "; the console is at /, the API under /v1");
        }
        if (!method.equals("GET") && !method.equals("HEAD")) {
            return HttpReply.error(405, "method_not_allowed", ErrorCode.INVALID_REQUEST, method + " is not allowed on " + path).header("Allow", "GET");
        }
        try (InputStream in = HttpApi.class.getResourceAsStream("/console/" + file)) {
            if (in == null) {
                return HttpReply.error(404, "not_found", ErrorCode.NOT_FOUND, "no console file " + file);
            }
            String type = switch (file.substring(file.lastIndexOf('.') + 1)) {
                case "html" -> "text/html; charset=utf-8";
                case "js" -> "text/javascript; charset=utf-8";
                case "css" -> "text/css; charset=utf-8";
                default -> "image/svg+xml";
            };
            return new HttpReply(200, new LinkedHashMap<>(), type, in.readAllBytes()).header("Cache-Control", "no-cache");
        } catch (IOException e) {
            return HttpReply.error(500, "internal", ErrorCode.INTERNAL_ERROR, "cannot read console file " + file + ": " + e.getMessage());
        }
    }

    // ---- answers

    /**
     * The answer for a failure: its {@link ErrorCode}'s status and {@code code}, with the {@code error} name
     * docs/HTTP.md gives it and what the failure carries (the holder of a lost lease, the quota's figures);
     * a failure of no known kind is a bug, logged.
     */
    static HttpReply failure(Throwable error) {
        Throwable cause = Failures.unwrap(error);
        if (cause instanceof HttpError e) {
            return HttpReply.error(e.status(), e.error(), e.code(), e.getMessage());
        }
        ErrorCode code = ErrorCode.of(cause);
        if (code == ErrorCode.INTERNAL_ERROR) {
            LOG.error("HTTP request failed", cause);
        }
        String message = code == ErrorCode.INTERNAL_ERROR ? cause.getClass().getSimpleName() + ": " + cause.getMessage()
                : cause.getMessage();
        ObjectNode body = HttpReply.errorBody(errorName(code), code, message);
        if (cause instanceof LeaseLostException e) {
            body.set("holder", e.holder().map(JsonViews::holder).orElse(null));
        } else if (cause instanceof QuotaExceededException e) {
            // The state is full; deletes free it, a retry of this write alone will not.
            body.put("used", e.used());
            body.put("quota", e.quota());
            body.put("needed", e.needed());
        } else if (cause instanceof NotAnIntegerException e) {
            body.set("current", JsonViews.item(e.item())); // what the item holds instead of an integer
        } else if (cause instanceof AddOverflowException e) {
            body.set("current", JsonViews.item(e.item()));
        } else if (cause instanceof DiskFullException e) {
            // The leader's disk is at its floor; deletes and space on the disk mend it.
            body.put("node", e.node());
            body.put("freeBytes", e.freeBytes());
            body.put("floorBytes", e.floorBytes());
        }
        HttpReply reply = HttpReply.json(code.httpStatus(), body);
        return switch (code) {
            case UNAUTHENTICATED -> reply.header("WWW-Authenticate", "Bearer");
            case CLUSTER_UNAVAILABLE -> reply.header("Retry-After", "1");
            default -> reply;
        };
    }

    /** The {@code error} field docs/HTTP.md names each code with over HTTP (the {@code code} field is the code's own). */
    static String errorName(ErrorCode code) {
        return switch (code) {
            case INVALID_REQUEST -> "bad_request";
            case NOT_FOUND -> "not_found";
            case CONDITION_FAILED, LEASE_LOST -> "precondition_failed";
            case RETRY_EXHAUSTED, ADMIN_REFUSED -> "conflict";
            case NOT_AN_INTEGER -> "not_an_integer";
            case OVERFLOW -> "overflow";
            case CLUSTER_UNAVAILABLE, UNSUPPORTED -> "unavailable";
            case UNKNOWN_OUTCOME -> "unknown_outcome";
            case QUOTA_EXCEEDED -> "quota_exceeded";
            case DISK_FULL -> "disk_full";
            case UNAUTHENTICATED -> "unauthenticated";
            case PERMISSION_DENIED -> "forbidden";
            case INTERNAL_ERROR -> "internal";
        };
    }

    private static void write(Response response, Callback callback, HttpReply reply) {
        try {
            closeUnlessConsumed(response);
            response.setStatus(reply.status());
            reply.headers().forEach((name, value) -> response.getHeaders().put(name, value));
            if (reply.contentType() != null) {
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, reply.contentType());
            }
            response.write(true, ByteBuffer.wrap(reply.body()), callback);
        } catch (RuntimeException e) {
            callback.failed(e);
        }
    }
}
