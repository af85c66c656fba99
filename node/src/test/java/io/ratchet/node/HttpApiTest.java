package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/**
 * The HTTP API against a real 3-node cluster: every status code docs/HTTP.md promises, bad input
 * writing nothing, and HTTP writes sharing log entries with other clients' writes.
 */
class HttpApiTest extends SharedClusterTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private record Answer(int status, HttpResponse<String> response) {
        JsonNode json() {
            return Json.parse(response.body());
        }

        Optional<String> header(String name) {
            return response.headers().firstValue(name);
        }

        String etag() {
            return header("ETag").orElseThrow();
        }
    }

    private static String url(String path) {
        return url("n2", path);
    }

    /** A follower's HTTP API as often as the leader's: n2 is whatever the election made it. */
    private static String url(String node, String path) {
        return cluster.httpUrl(node) + path;
    }

    private static Answer send(String method, String path, String body, String... headers) {
        return sendTo("n2", method, path, body, headers);
    }

    private static Answer sendTo(String node, String method, String path, String body, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url(node, path))).timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (headers.length > 0) {
            request.headers(headers);
        }
        try {
            HttpResponse<String> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
            return new Answer(response.statusCode(), response);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static Answer get(String path) {
        return send("GET", path, null);
    }

    // ---- items

    @Test
    void createReadUpdateDeleteWithETags() {
        Answer created = send("PUT", "/v1/items/http/crud/ada%40example.com", "{\"user\":7}", "If-None-Match", "*");
        assertEquals(201, created.status());
        long index = created.json().get("index").asLong();
        assertEquals("\"" + index + "\"", created.etag());
        assertEquals(Optional.of("/v1/items/http/crud/ada%40example.com"), created.header("Location"));
        assertEquals(7, created.json().get("value").get("user").asInt());

        Answer read = get("/v1/items/HTTP/crud/ADA@example.com");
        assertEquals(200, read.status());
        assertEquals("\"" + index + "\"", read.etag());
        assertEquals("http/crud/ada@example.com", read.json().get("key").asText());
        assertEquals(index, read.json().get("createdIndex").asLong());
        assertTrue(read.json().get("expiresAt").isNull());

        Answer updated = send("PUT", "/v1/items/http/crud/ada@example.com?ttl=1h&metadata=%7B%22by%22%3A%22test%22%7D",
                "{\"user\":8}", "If-Match", "\"" + index + "\"");
        assertEquals(200, updated.status());
        long next = updated.json().get("index").asLong();
        assertTrue(next > index);
        assertEquals(index, updated.json().get("createdIndex").asLong());
        assertTrue(updated.json().get("expiresAt").asLong() > 0);
        assertEquals("test", updated.json().get("metadata").get("by").asText());

        Answer deleted = send("DELETE", "/v1/items/http/crud/ada@example.com", null, "If-Match", "\"" + next + "\"");
        assertEquals(204, deleted.status());
        assertEquals(404, get("/v1/items/http/crud/ada@example.com").status());
    }

    @Test
    void aMovedItemAnswers412WithTheCurrentItem() {
        long index = send("PUT", "/v1/items/http/412", "1", "If-None-Match", "*").json().get("index").asLong();
        Answer exists = send("PUT", "/v1/items/http/412", "2", "If-None-Match", "*");
        assertEquals(412, exists.status());
        assertEquals("precondition_failed", exists.json().get("error").asText());
        assertEquals("condition_failed", exists.json().get("code").asText(), "the code the CLI reports for it too");
        assertEquals(1, exists.json().get("current").get("value").asInt());
        assertEquals("\"" + index + "\"", exists.etag());

        long moved = send("PUT", "/v1/items/http/412", "3", "If-Match", "\"" + index + "\"").json().get("index").asLong();
        Answer stale = send("PUT", "/v1/items/http/412", "4", "If-Match", "\"" + index + "\"");
        assertEquals(412, stale.status());
        assertEquals(moved, stale.json().get("current").get("index").asLong());
        assertEquals(3, stale.json().get("current").get("value").asInt());
        Answer staleDelete = send("DELETE", "/v1/items/http/412", null, "If-Match", "\"" + index + "\"");
        assertEquals(412, staleDelete.status());
        assertEquals("3", cluster.client().get("http/412").orElseThrow().value());

        Answer absent = send("PUT", "/v1/items/http/412-absent", "1", "If-Match", "\"5\"");
        assertEquals(412, absent.status());
        assertTrue(absent.json().get("current").isNull());
        assertTrue(absent.header("ETag").isEmpty());
    }

    @Test
    void aWriteWithoutAConditionIs428AndWritesNothing() {
        assertEquals(428, send("PUT", "/v1/items/http/blind", "1").status());
        assertEquals(428, send("DELETE", "/v1/items/http/blind", null).status());
        assertEquals(400, send("PUT", "/v1/items/http/blind", "1", "If-Match", "*").status());
        assertTrue(cluster.client().get("http/blind").isEmpty());
    }

    @Test
    void staleReadsSayWhoAnsweredAndFromWhichIndex() {
        long index = send("PUT", "/v1/items/http/stale", "\"s\"", "If-None-Match", "*").json().get("index").asLong();
        // The node applies the write soon after the leader answered; a stale read then shows it.
        await().atMost(Duration.ofSeconds(10))
                .until(() -> get("/v1/items/http/stale?stale=true").status() == 200);
        Answer stale = get("/v1/items/http/stale?stale=true");
        assertEquals(Optional.of("true"), stale.header("Ratchet-Stale"));
        assertEquals(Optional.of("n2"), stale.header("Ratchet-Node"));
        assertTrue(Long.parseLong(stale.header("Ratchet-Applied-Index").orElseThrow()) >= index);
        assertTrue(get("/v1/items/http/stale").header("Ratchet-Stale").isEmpty());
    }

    @Test
    void listingPagesThroughKeysInOrder() {
        for (String k : List.of("c", "a", "b")) {
            send("PUT", "/v1/items/http/list/" + k, "1", "If-None-Match", "*");
        }
        JsonNode first = get("/v1/items?prefix=http/list/&pageSize=2").json();
        assertEquals(List.of("http/list/a", "http/list/b"), keys(first));
        assertEquals(2, first.get("next").asInt());
        JsonNode second = get("/v1/items?prefix=http/list/&pageSize=2&start=2").json();
        assertEquals(List.of("http/list/c"), keys(second));
        assertTrue(second.get("next").isNull());
    }

    private static List<String> keys(JsonNode page) {
        List<String> keys = new ArrayList<>();
        page.get("items").forEach(i -> keys.add(i.get("key").asText()));
        return keys;
    }

    // ---- bad input

    @Test
    void badInputIs400NamingTheProblemAndWritesNothing() {
        // Open this node's HTTP client session first, so the log would only move for a write. The answer
        // comes once the leader applied it; n2, when a follower, applies it a round later.
        long warm = Long.parseLong(send("PUT", "/v1/items/http/bad/warm", "1", "If-None-Match", "*").etag().replace("\"", ""));
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.appliedIndex("n2") >= warm);
        long before = cluster.appliedIndex("n2");
        List<Answer> answers = List.of(
                send("PUT", "/v1/items/http/bad/a", "{\"a\":", "If-None-Match", "*"),
                send("PUT", "/v1/items/http/bad/a", "1 2", "If-None-Match", "*"),
                send("PUT", "/v1/items/http/bad/a", "null", "If-None-Match", "*"),
                send("PUT", "/v1/items/http/bad/a", "", "If-None-Match", "*"),
                send("PUT", "/v1/items/http/bad/a?ttl=soon", "1", "If-None-Match", "*"),
                send("PUT", "/v1/items/http/bad/a?ttl=1s&expires=2030-01-01T00:00:00Z", "1", "If-None-Match", "*"),
                send("PUT", "/v1/items/http/bad/a?expires=tomorrow", "1", "If-None-Match", "*"),
                send("PUT", "/v1/items/http/bad/a?metadata=%5B1%5D", "1", "If-None-Match", "*"),
                send("PUT", "/v1/items/http/bad/a", "1", "If-Match", "\"-3\""),
                send("PUT", "/v1/items/http/bad/a", "1", "If-Match", "\"x\""),
                send("PUT", "/v1/items/http/bad/a", "1", "If-None-Match", "\"4\""),
                send("PUT", "/v1/items/http/bad/a", "1", "If-None-Match", "*", "If-Match", "\"4\""),
                send("PUT", "/v1/items/" + "k".repeat(600), "1", "If-None-Match", "*"),
                send("PUT", "/v1/items/rvn-atomic/users/1", "1", "If-None-Match", "*"),
                send("PUT", "/v1/items/http/bad/%C3%28", "1", "If-None-Match", "*"),
                send("DELETE", "/v1/items/http/bad/a", null, "If-Match", "\"0\""),
                send("PUT", "/v1/items/http/bad/../a", "1", "If-None-Match", "*"),
                send("PUT", "/v1/items/http/bad/./a", "1", "If-None-Match", "*"),
                send("POST", "/v1/txn", "{\"ops\":[]}"),
                send("POST", "/v1/txn", "[1]"),
                send("POST", "/v1/txn", "{\"ops\":[{\"op\":\"put\",\"key\":\"a\",\"value\":1}]}"),
                send("POST", "/v1/txn", "{\"ops\":[{\"op\":\"put\",\"key\":\"a\",\"value\":1,\"index\":0,\"idx\":1}]}"),
                send("POST", "/v1/txn", "{\"ops\":[{\"op\":\"check\",\"key\":\"a\",\"index\":0},{\"op\":\"check\",\"key\":\"A\",\"index\":0}]}"),
                send("PUT", "/v1/docs/http/doc", "[1]", "If-None-Match", "*"),
                send("POST", "/v1/locks/http/lock", "{}"),
                send("POST", "/v1/locks/http/lock", "{\"lease\":\"forever\"}"),
                send("POST", "/v1/locks/http/lock", "{\"lease\":\"10s\",\"wait\":\"2h\"}"),
                send("POST", "/v1/reservations/http/r", "{\"ttl\":\"1m\"}"),
                send("GET", "/v1/items?pageSize=0", null),
                send("GET", "/v1/items?start=-1", null),
                send("GET", "/v1/watch/http/bad/a?timeout=2h", null),
                send("GET", "/v1/watch/http/bad/a?after=x", null),
                send("GET", "/v1/items/http/bad/a?stale=maybe", null),
                send("PUT", "/v1/items/http/bad/a", "1", "Idempotency-Key", "k".repeat(200), "If-None-Match", "*"));
        for (Answer a : answers) {
            assertEquals(400, a.status(), a.response().request().method() + " " + a.response().request().uri() + ": "
                    + a.response().body());
            assertEquals("bad_request", a.json().get("error").asText());
            assertEquals("invalid_request", a.json().get("code").asText());
            assertFalse(a.json().get("message").asText().isBlank());
        }
        assertEquals(before, cluster.appliedIndex("n2"));
        assertTrue(cluster.client().list("http/bad/a", 0, 10).isEmpty());
    }

    @Test
    void aBodyOverTheLimitIs413() {
        String big = "\"" + "x".repeat(io.ratchet.protocol.Limits.MAX_VALUE_BYTES) + "\"";
        Answer tooBig = send("PUT", "/v1/items/http/big", big, "If-None-Match", "*");
        assertEquals(413, tooBig.status());
        assertEquals("payload_too_large", tooBig.json().get("error").asText());
        assertEquals("invalid_request", tooBig.json().get("code").asText());
        // Without a Content-Length (chunked), the limit holds as the body arrives.
        HttpRequest chunked = HttpRequest.newBuilder(URI.create(url("/v1/items/http/big")))
                .header("If-None-Match", "*")
                .PUT(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(
                        big.getBytes(java.nio.charset.StandardCharsets.UTF_8))))
                .build();
        try {
            assertEquals(413, HTTP.send(chunked, HttpResponse.BodyHandlers.ofString()).statusCode());
        } catch (IOException e) {
            // The server may close the connection as soon as it has answered 413: refused either way.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        assertTrue(cluster.client().get("http/big").isEmpty());
    }

    @Test
    void unknownRoutesAre404AndWrongMethods405() {
        Answer unknown = get("/v1/nothing-here");
        assertEquals(404, unknown.status());
        assertEquals("not_found", unknown.json().get("error").asText());
        assertEquals("not_found", unknown.json().get("code").asText());
        assertEquals(404, get("/elsewhere").status());
        Answer wrong = send("PATCH", "/v1/items/a", "1");
        assertEquals(405, wrong.status());
        assertEquals(Optional.of("GET, PUT, DELETE"), wrong.header("Allow"));
        assertEquals(405, send("DELETE", "/v1/status", null).status());
    }

    /**
     * A connection a client may keep is one the node keeps: a refusal that left no body unread keeps the
     * connection open for the next request, and every other says {@code Connection: close} (a client that
     * reused a connection the node then ended would get no answer at all, as the fuzz test's JDK client did).
     */
    @Test
    void aRefusedRequestLeavesTheConnectionUsableOrSaysItCloses() throws IOException {
        // Refused by the API (an unknown route, a bad condition), each with a body: the connection stays.
        try (RawConnection connection = new RawConnection(cluster.config("n2").httpPort())) {
            RawAnswer unknown = connection.exchange("POST /v1/nothing-here HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
            assertEquals(404, unknown.status(), unknown.toString());
            assertFalse(unknown.closes(), unknown.toString());
            RawAnswer badCondition = connection.exchange(
                    "PUT /v1/items/http/raw HTTP/1.1\r\nHost: x\r\nIf-Match: \"x\"\r\nContent-Length: 4\r\n\r\nnull");
            assertEquals(400, badCondition.status(), badCondition.toString());
            assertFalse(badCondition.closes(), badCondition.toString());
            assertEquals(404, connection.exchange("GET /v1/items/http/raw HTTP/1.1\r\nHost: x\r\n\r\n").status());
        }
        // Refused by Jetty itself (a NUL in the path): the answer says the connection ends, and it does.
        try (RawConnection connection = new RawConnection(cluster.config("n2").httpPort())) {
            RawAnswer nul = connection.exchange(
                    "PUT /v1/items/http/nul%00 HTTP/1.1\r\nHost: x\r\nIf-None-Match: *\r\nContent-Length: 4\r\n\r\nnull");
            assertEquals(400, nul.status(), nul.toString());
            assertTrue(nul.closes(), nul.toString());
            assertEquals(-1, connection.in.read(), "ended after the answer");
        }
        // A body far over the limit is refused before it is sent: the answer says the connection ends.
        try (RawConnection connection = new RawConnection(cluster.config("n2").httpPort())) {
            RawAnswer huge = connection.exchange(
                    "PUT /v1/items/http/huge HTTP/1.1\r\nHost: x\r\nIf-None-Match: *\r\nContent-Length: 40000000\r\n\r\n");
            assertEquals(413, huge.status(), huge.toString());
            assertTrue(huge.closes(), "the body is left unread: " + huge);
        }
        assertTrue(cluster.client().get("http/huge").isEmpty());
    }

    /** One HTTP/1.1 connection written and read by hand. */
    private static final class RawConnection implements AutoCloseable {
        private final java.net.Socket socket;
        final java.io.DataInputStream in;

        RawConnection(int port) throws IOException {
            socket = new java.net.Socket("127.0.0.1", port);
            socket.setSoTimeout(15_000);
            in = new java.io.DataInputStream(new java.io.BufferedInputStream(socket.getInputStream()));
        }

        RawAnswer exchange(String request) throws IOException {
            socket.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            return RawAnswer.read(in);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** An HTTP/1.1 answer read off a socket: its status, its headers (names in lower case), its body. */
    private record RawAnswer(int status, java.util.Map<String, String> headers, String body) {
        static RawAnswer read(java.io.DataInputStream in) throws IOException {
            String statusLine = line(in);
            java.util.Map<String, String> headers = new java.util.LinkedHashMap<>();
            for (String header = line(in); !header.isEmpty(); header = line(in)) {
                int colon = header.indexOf(':');
                headers.put(header.substring(0, colon).trim().toLowerCase(java.util.Locale.ROOT), header.substring(colon + 1).trim());
            }
            byte[] body = new byte[Integer.parseInt(headers.getOrDefault("content-length", "0"))];
            in.readFully(body);
            return new RawAnswer(Integer.parseInt(statusLine.split(" ")[1]), headers,
                    new String(body, java.nio.charset.StandardCharsets.UTF_8));
        }

        boolean closes() {
            return "close".equalsIgnoreCase(headers.get("connection"));
        }

        private static String line(java.io.DataInputStream in) throws IOException {
            StringBuilder line = new StringBuilder();
            for (int c = in.read(); c != '\n'; c = in.read()) {
                if (c < 0) {
                    throw new java.io.EOFException("the connection ended mid-answer after: " + line);
                }
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        }
    }

    // ---- idempotency, transactions, watches, documents

    @Test
    void anIdempotencyKeyAppliesAWriteOnceAndAnswersTheResendAlike() {
        Answer first = send("PUT", "/v1/items/http/idem", "1", "If-None-Match", "*", "Idempotency-Key", "http-idem-1");
        Answer again = send("PUT", "/v1/items/http/idem", "1", "If-None-Match", "*", "Idempotency-Key", "http-idem-1");
        assertEquals(201, first.status());
        assertEquals(201, again.status());
        assertEquals(first.etag(), again.etag());
        Answer reused = send("PUT", "/v1/items/http/idem", "2", "If-None-Match", "*", "Idempotency-Key", "http-idem-1");
        assertEquals(400, reused.status());
        assertTrue(reused.json().get("message").asText().contains("already used"), reused.response().body());
    }

    @Test
    void aTransactionAppliesWholeOrAnswers409ListingConflicts() {
        Answer ok = send("POST", "/v1/txn", "{\"ops\":[{\"op\":\"put\",\"key\":\"http/txn/a\",\"value\":1,\"index\":0},"
                + "{\"op\":\"put-document\",\"id\":\"http/txn/doc\",\"document\":{\"n\":1},\"index\":0}]}");
        assertEquals(200, ok.status());
        long index = ok.json().get("index").asLong();
        assertEquals(index, cluster.client().get("http/txn/a").orElseThrow().index());

        Answer conflict = send("POST", "/v1/txn", "{\"ops\":[{\"op\":\"put\",\"key\":\"http/txn/b\",\"value\":1,\"index\":0},"
                + "{\"op\":\"check\",\"key\":\"http/txn/a\",\"index\":0}]}");
        assertEquals(409, conflict.status());
        assertEquals("condition_failed", conflict.json().get("code").asText());
        assertEquals("http/txn/a", conflict.json().get("conflicts").get(0).get("key").asText());
        assertEquals(index, conflict.json().get("conflicts").get(0).get("actual").asLong());
        assertTrue(cluster.client().get("http/txn/b").isEmpty());
    }

    @Test
    void aWatchAnswersOnTheChangeOrAtItsTimeout() {
        long index = send("PUT", "/v1/items/http/watch", "1", "If-None-Match", "*").json().get("index").asLong();
        JsonNode quiet = get("/v1/watch/http/watch?after=" + index + "&timeout=300ms").json();
        assertFalse(quiet.get("changed").asBoolean());

        CompletableFuture<Answer> waiting = CompletableFuture.supplyAsync(
                () -> get("/v1/watch/http/watch?after=" + index + "&timeout=20s"));
        // Whether the watch reaches the leader before or after the put, it reports the change: it asks
        // for changes after an index, not for events from now on.
        long next = send("PUT", "/v1/items/http/watch", "2", "If-Match", "\"" + index + "\"").json().get("index").asLong();
        JsonNode changed = waiting.join().json();
        assertTrue(changed.get("changed").asBoolean());
        assertEquals(next, changed.get("lastChange").asLong());
        assertEquals(2, changed.get("item").get("value").asInt());
    }

    @Test
    void aDocumentThatMovedSinceItWasLoadedIs412() {
        Answer created = send("PUT", "/v1/docs/http/users/1", "{\"name\":\"Ada\"}", "If-None-Match", "*");
        assertEquals(201, created.status());
        String loaded = get("/v1/docs/http/users/1").etag();
        assertEquals(created.etag(), loaded);
        assertEquals(200, send("PUT", "/v1/docs/http/users/1", "{\"name\":\"Ada L.\"}", "If-Match", loaded).status());
        Answer second = send("PUT", "/v1/docs/http/users/1", "{\"name\":\"Ada K.\"}", "If-Match", loaded);
        assertEquals(412, second.status());
        assertEquals("Ada L.", second.json().get("current").get("document").get("name").asText());
        assertEquals(204, send("DELETE", "/v1/docs/http/users/1", null, "If-Match", second.etag()).status());
        assertEquals(404, get("/v1/docs/http/users/1").status());
    }

    // ---- locks, reservations

    @Test
    void locksAreGrantedWithAFencingTokenRenewedAndReleasedByIndex() {
        Answer granted = send("POST", "/v1/locks/http/nightly", "{\"lease\":\"30s\",\"owner\":\"w1\"}");
        assertEquals(200, granted.status());
        long token = granted.json().get("fencingToken").asLong();
        Answer busy = send("POST", "/v1/locks/http/nightly", "{\"lease\":\"30s\",\"owner\":\"w2\"}");
        assertEquals(409, busy.status());
        assertEquals("w1", busy.json().get("holder").get("owner").asText());
        List<Long> tokens = new ArrayList<>();
        get("/v1/locks").json().get("locks").forEach(l -> tokens.add(l.get("fencingToken").asLong()));
        assertTrue(tokens.contains(token), tokens.toString());

        Answer renewed = send("PUT", "/v1/locks/http/nightly", "{\"lease\":\"30s\"}", "If-Match", granted.etag());
        assertEquals(200, renewed.status());
        assertEquals(token, renewed.json().get("fencingToken").asLong());
        Answer lost = send("DELETE", "/v1/locks/http/nightly", null, "If-Match", granted.etag());
        assertEquals(412, lost.status());
        assertEquals(renewed.json().get("index").asLong(), lost.json().get("holder").get("index").asLong());
        assertEquals(204, send("DELETE", "/v1/locks/http/nightly", null, "If-Match", renewed.etag()).status());
        assertEquals(404, get("/v1/locks/http/nightly").status());
    }

    @Test
    void aReservationGoesToOneOwner() {
        Answer mine = send("POST", "/v1/reservations/http/emails/bob@example.com", "{\"owner\":\"user-7\"}");
        assertEquals(200, mine.status());
        assertEquals(200, send("POST", "/v1/reservations/http/emails/BOB@example.com", "{\"owner\":\"user-7\"}").status());
        Answer theirs = send("POST", "/v1/reservations/http/emails/bob@example.com", "{\"owner\":\"user-8\"}");
        assertEquals(409, theirs.status());
        assertEquals("user-7", theirs.json().get("reservation").get("owner").asText());
    }

    @Test
    void anAddCountsFromZeroOnceUnderItsKeyAndAnswers409ForAValueThatIsNoInteger() {
        Answer first = send("POST", "/v1/add/http/counters/views", "{\"delta\": 5}", "Idempotency-Key", "http-add-1");
        assertEquals(200, first.status(), first.response().body());
        assertEquals(5, first.json().get("value").asLong());
        assertEquals("\"" + first.json().get("index").asLong() + "\"", first.etag());
        Answer again = send("POST", "/v1/add/http/counters/views", "{\"delta\": 5}", "Idempotency-Key", "http-add-1");
        assertEquals(first.json(), again.json(), "the resend answers the first outcome");
        assertEquals(3, send("POST", "/v1/add/http/counters/views", "{\"delta\": -2}").json().get("value").asLong());

        assertEquals(400, send("POST", "/v1/add/http/counters/views", "{\"delta\": 1.5}").status());
        assertEquals(400, send("POST", "/v1/add/http/counters/views", "{\"delta\": 9223372036854775808}").status());
        send("PUT", "/v1/items/http/counters/text", "\"ten\"", "If-None-Match", "*");
        Answer text = send("POST", "/v1/add/http/counters/text", "{\"delta\": 1}");
        assertEquals(409, text.status());
        assertEquals("not_an_integer", text.json().get("code").asText());
        assertEquals("ten", text.json().get("current").get("value").asText());
        assertEquals("\"ten\"", get("/v1/items/http/counters/text").json().get("value").toString(), "nothing written");
    }

    // ---- the cluster

    @Test
    void statusShowsEveryNodeAndHotKeysCountRefusals() {
        JsonNode status = get("/v1/status").json();
        assertEquals(3, status.get("nodes").size());
        assertEquals(cluster.awaitLeader(), status.get("leader").asText());
        assertTrue(status.get("sessions").asInt() > 0);

        long index = send("PUT", "/v1/items/http/hot", "0", "If-None-Match", "*").json().get("index").asLong();
        for (int i = 0; i < 3; i++) {
            assertEquals(412, send("PUT", "/v1/items/http/hot", "1", "If-None-Match", "*").status());
        }
        send("PUT", "/v1/items/http/hot", "1", "If-Match", "\"" + index + "\"");
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            JsonNode hot = null;
            for (JsonNode k : get("/v1/hotkeys?limit=1000").json().get("keys")) {
                if (k.get("key").asText().equals("http/hot")) {
                    hot = k;
                }
            }
            assertNotNull(hot);
            // Counted from the first refusal: three refused, then the update at the index.
            assertEquals(3, hot.get("refused").asLong());
            assertEquals(1, hot.get("commits").asLong());
            assertEquals(4.0, hot.get("attemptsPerCommit").asDouble());
        });
    }

    @Test
    void httpWritesShareLogEntriesWithOtherClientsWrites() {
        // The leader joins what arrives while an entry is in flight: with two sources each waiting for
        // its own answer nothing ever queues beside another, so the writes come from four: each node's
        // HTTP API (each its own client) and a Java client.
        RatchetClient other = cluster.client();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            Set<Long> viaHttp = ConcurrentHashMap.newKeySet();
            Set<Long> viaClient = ConcurrentHashMap.newKeySet();
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                List<CompletableFuture<?>> round = new ArrayList<>();
                String r = Long.toString(System.nanoTime());
                for (int t = 0; t < 12; t++) {
                    String k = r + "-" + t;
                    String node = cluster.nodeIds().get(t % 3);
                    round.add(CompletableFuture.runAsync(() -> viaHttp.add(sendTo(node, "PUT", "/v1/items/http/share/h" + k,
                            "1", "If-None-Match", "*").json().get("index").asLong()), pool));
                    round.add(other.putAsync("http/share/c" + k, 1, 0).thenAccept(w -> viaClient.add(w.index())));
                }
                CompletableFuture.allOf(round.toArray(CompletableFuture[]::new)).join();
                Set<Long> shared = new HashSet<>(viaHttp);
                shared.retainAll(viaClient);
                return !shared.isEmpty();
            });
        } finally {
            pool.shutdownNow();
        }
    }

    // ---- the OpenAPI document

    /** Each (method, path template) the OpenAPI document lists. */
    private static Set<String> documented() {
        JsonNode paths = get("/v1/openapi.json").json().get("paths");
        Set<String> routes = new HashSet<>();
        paths.fieldNames().forEachRemaining(path -> paths.get(path).fieldNames()
                .forEachRemaining(method -> routes.add(method.toUpperCase(java.util.Locale.ROOT) + " " + path)));
        return routes;
    }

    @Test
    void theOpenApiDocumentListsEveryRouteTheNodeServes() {
        Set<String> served = new HashSet<>();
        cluster.node("n2").http().routes().forEach(r -> served.add(r.method() + " " + r.template()));
        assertEquals(served, documented());
    }

    @Test
    void everyRouteTheOpenApiDocumentListsAnswers() {
        for (String route : documented()) {
            String method = route.substring(0, route.indexOf(' '));
            String path = route.substring(route.indexOf(' ') + 1).replaceAll("\\{[^}]+}", "openapi-probe")
                    + "?timeout=10ms"; // a watch probe answers at once; other routes ignore the parameter
            Answer answer = send(method, path, method.equals("GET") || method.equals("DELETE") ? null : "{}");
            String body = answer.response().body();
            assertTrue(answer.status() != 405 && !body.contains("no route"), route + " answered " + answer.status() + " " + body);
            assertTrue(answer.status() < 500, route + " answered " + answer.status() + " " + body);
        }
    }
}
