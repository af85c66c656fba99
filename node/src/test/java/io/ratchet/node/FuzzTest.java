package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Refusal;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Rpc;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ClientInterceptors;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.MetadataUtils;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Random and mutated requests against a real cluster, from a fixed seed (printed with every failure, so
 * a failure replays): the gRPC front end's write call, then the HTTP API. Whatever comes in, no node goes
 * down, every refusal is a clear error, and what is refused writes nothing. The gRPC part runs first,
 * while nothing else writes: a refused message must leave the leader's commit index where it was.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FuzzTest extends SharedClusterTest {
    private static final long SEED = Long.getLong("ratchet.fuzz.seed", 20261204L);
    private static final AtomicLong AFTER = new AtomicLong();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    @Order(1)
    void theFrontEndRefusesMutatedWritesClearlyAndAppliesNoneOfThem() throws Exception {
        Random random = new Random(SEED);
        String leader = cluster.awaitLeader();
        RatchetNode node = cluster.node(leader);
        AtomicLong committed = new AtomicLong(-1);
        // Settled: the start-up entries (configuration, quota) are all committed.
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(400)).until(() -> {
            long now = commitIndex(node);
            return committed.getAndSet(now) == now;
        });
        String address = cluster.peers().replaceAll(".*" + leader + "=([^,]+).*", "$1");
        ManagedChannel channel = NettyChannelBuilder.forTarget(address).usePlaintext()
                .maxInboundMessageSize(16 << 20).build();
        int refused = 0;
        int applied = 0;
        try {
            for (int i = 0; i < 300; i++) {
                byte[] valid = Codec.encodeBatches(List.of(Batch.untagged(List.of(Request.of(List.of(
                        new Command.Put("fuzz/grpc-" + i, "{\"n\":" + i + "}", 0, null)))))));
                byte[] message = mutate(random, valid);
                boolean decodes = decodes(message);
                long before = commitIndex(node);
                byte[] answer;
                try {
                    answer = ClientCalls.blockingUnaryCall(withHeaders(random, channel), Rpc.WRITE,
                            CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS), message);
                } catch (StatusRuntimeException e) {
                    // Only the transport may refuse so, and only for what it cannot carry (too large).
                    assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode(), what(i, message, e.toString()));
                    assertFalse(decodes && message.length < (4 << 20), what(i, message, "a valid message refused by gRPC"));
                    assertEquals("", writesAfter(node, before), what(i, message, "a message gRPC refused was committed"));
                    refused++;
                    continue;
                }
                if (!decodes) {
                    Refusal refusal = Codec.decodeRefusal(answer);
                    assertEquals(Refusal.Reason.INVALID, refusal.reason(), what(i, message, refusal.toString()));
                    assertFalse(refusal.message() == null || refusal.message().isBlank(), what(i, message, "says why"));
                    assertFalse(refusal.inDoubt(), what(i, message, refusal.toString()));
                    // The sweeper may commit meanwhile (an earlier mutation can be a valid put with an expiry).
                assertEquals("", writesAfter(node, before), what(i, message, "an invalid message was committed"));
                    refused++;
                } else if (Arrays.equals(message, valid)) {
                    assertEquals(1, Codec.decodeResults(answer).size(), what(i, message, "the valid write answered"));
                    applied++;
                }
            }
        } finally {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
        assertTrue(refused >= 150, "most mutations are refused: " + refused);
        assertTrue(applied >= 10, "the unmutated writes went through: " + applied);
        assertEveryNodeServes();
    }

    @Test
    @Order(2)
    void theHttpApiRefusesMutatedRequestsClearlyAndWritesNothingForThem() throws Exception {
        Random random = new Random(SEED + 1);
        int refusals = 0;
        int unsent = 0;
        for (int i = 0; i < 400; i++) {
            String node = "n" + (1 + random.nextInt(3));
            String key = "fuzz/http-" + i;
            Fuzzed f = httpRequest(random, key);
            Answer answer = send(node, f);
            if (answer == null) {
                unsent++;
                continue;
            }
            String context = "seed " + SEED + ", request " + i + ": " + f + " -> " + answer.status() + " "
                    + answer.text().lines().findFirst().orElse("");
            assertTrue(answer.status() < 500, context);
            if (answer.status() >= 400) {
                refusals++;
                JsonNode error;
                try {
                    error = Json.parse(answer.text());
                } catch (RuntimeException e) {
                    throw new AssertionError("a refusal in the API's error shape: " + context, e);
                }
                assertTrue(error.path("error").isTextual() && !error.path("error").asText().isBlank(), context);
                assertTrue(error.path("message").isTextual() && !error.path("message").asText().isBlank(), context);
                if (f.keyIntact && !f.method.equals("GET")) {
                    assertEquals(404, send(node, new Fuzzed("GET", "/v1/items/" + key, null, List.of(), true)).status(),
                            "a refused request wrote nothing: " + context);
                }
            }
        }
        assertTrue(unsent <= 40, "the JDK's client sent nearly all: " + unsent + " not sent");
        assertTrue(refusals >= 200, "most mutations are refused: " + refusals);
        assertEveryNodeServes();
    }

    @Test
    @Order(3)
    void brokenHttpFramingIsRefusedWithAStatusAndTheNodeGoesOn() throws Exception {
        String[] requests = {
                "GET /v1/items/%ZZ HTTP/1.1\r\nHost: x\r\n\r\n",
                "GET /v1/items/a/%2e%2e/b HTTP/1.1\r\nHost: x\r\n\r\n",
                "PUT /v1/items/fuzz/raw-1 HTTP/1.1\r\nHost: x\r\nIf-None-Match: *\r\nContent-Length: -5\r\n\r\n{}",
                "PUT /v1/items/fuzz/raw-2 HTTP/1.1\r\nHost: x\r\nIf-None-Match: *\r\nContent-Length: 99999999999999999999\r\n\r\n{}",
                "PUT /v1/items/fuzz/raw-3 HTTP/1.1\r\nHost: x\r\nIf-None-Match: *\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n",
                "GARBAGE\r\n\r\n",
                "GET /v1/status HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n",
                "GET /v1/status HTTP/1.1\r\nHost: x\r\nX-Big: " + "b".repeat(100_000) + "\r\n\r\n",
                "GET /" + "p".repeat(100_000) + " HTTP/1.1\r\nHost: x\r\n\r\n",
                "GET /v1/status HTTP/9.9\r\nHost: x\r\n\r\n",
        };
        int port = cluster.config("n1").httpPort();
        for (String raw : requests) {
            String shown = raw.length() > 80 ? raw.substring(0, 80) + "..." : raw;
            try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
                socket.setSoTimeout(15_000);
                socket.getOutputStream().write(raw.getBytes(StandardCharsets.ISO_8859_1));
                socket.getOutputStream().flush();
                String statusLine = new java.io.BufferedReader(new java.io.InputStreamReader(socket.getInputStream(),
                        StandardCharsets.ISO_8859_1)).readLine();
                assertTrue(statusLine != null && statusLine.matches("HTTP/1\\.[01] (4\\d\\d|505).*"),
                        "a 4xx status (505 for an unknown version) for " + shown + ": " + statusLine);
            } catch (java.net.SocketException e) {
                // A reset after a request too large to read (the 100 KB header and path) is a refusal too.
                assertTrue(raw.length() > 64 << 10, "an answer, not a reset, for " + shown + ": " + e);
            }
        }
        for (String key : List.of("fuzz/raw-1", "fuzz/raw-2", "fuzz/raw-3")) {
            assertEquals(404, send("n1", new Fuzzed("GET", "/v1/items/" + key, null, List.of(), true)).status(), key);
        }
        assertEveryNodeServes();
    }

    /** One HTTP request: its method, path (with query), body and headers. */
    private record Fuzzed(String method, String path, byte[] body, List<String> headers, boolean keyIntact) {
        @Override
        public String toString() {
            String b = body == null ? "" : body.length > 120 ? " <" + body.length + " bytes>"
                    : " " + new String(body, StandardCharsets.UTF_8);
            return method + " " + (path.length() > 200 ? path.substring(0, 200) + "..." : path) + " " + headers.stream()
                    .map(h -> h.length() > 60 ? h.substring(0, 60) + "..." : h).toList() + b;
        }
    }

    private static Fuzzed httpRequest(Random random, String key) {
        String[] bodies = {"{\"n\":1}", "[1,2,3]", "\"text\"", "{\"lease\":\"30s\",\"wait\":\"0s\",\"owner\":\"w\"}",
                "[{\"op\":\"put\",\"key\":\"" + key + "\",\"value\":1,\"index\":0}]", "{\"user\":7}"};
        String[][] routes = {
                {"PUT", "/v1/items/" + key}, {"DELETE", "/v1/items/" + key}, {"GET", "/v1/items/" + key},
                {"POST", "/v1/txn"}, {"PUT", "/v1/docs/" + key}, {"POST", "/v1/locks/" + key},
                {"PUT", "/v1/locks/" + key}, {"DELETE", "/v1/locks/" + key}, {"POST", "/v1/reservations/" + key},
                {"GET", "/v1/items?prefix=fuzz/&start=0&pageSize=10"}, {"GET", "/v1/watch/" + key + "?after=0&timeout=50ms"},
                {"PATCH", "/v1/items/" + key}, {"GET", "/v1/nothing/here"}};
        String[] route = routes[random.nextInt(routes.length)];
        String method = route[0];
        String path = route[1];
        boolean keyIntact = true;
        byte[] body = method.equals("GET") || method.equals("DELETE") ? null
                : bodies[random.nextInt(bodies.length)].getBytes(StandardCharsets.UTF_8);
        List<String> headers = new ArrayList<>();
        if (random.nextBoolean()) {
            headers.addAll(List.of(random.nextBoolean() ? "If-None-Match" : "If-Match", pick(random,
                    "*", "\"1\"", "1", "W/\"1\"", "\"abc\"", "-5", "\"99999999999999999999\"", "", "\"\"", "\"1\", \"2\"")));
        }
        if (random.nextInt(4) == 0) {
            headers.addAll(List.of("Content-Type", pick(random, "application/json", "text/plain", "application/json; charset=latin1",
                    "x/" + "y".repeat(2000))));
        }
        if (random.nextInt(5) == 0) {
            headers.addAll(List.of("Idempotency-Key", pick(random, "", "k".repeat(5000), "\u00e9t\u00e9", "key-" + random.nextInt())));
        }
        int mutations = 1 + random.nextInt(3);
        for (int m = 0; m < mutations; m++) {
            switch (random.nextInt(9)) {
                case 0, 1, 2 -> body = body == null ? randomBytes(random, random.nextInt(64)) : mutate(random, body);
                case 3 -> path = path + (path.contains("?") ? "&" : "?") + pick(random, "ttl=", "ttl=-1s", "ttl=99999999999h",
                        "expires=yesterday", "expires=2020-01-01T00:00:00Z", "metadata=%7B", "metadata=[1]", "pageSize=-1",
                        "pageSize=1000000000", "start=-3", "stale=maybe", "after=-1", "timeout=-1s", "ttl=5s&expires=2030-01-01T00:00:00Z");
                case 4 -> {
                    path = path.replace(key, key + pick(random, "/%ZZ", "/%C0%AF", "/../x", "/./x", "%00", "/" + "a".repeat(20_000),
                            "%F0%9F", "//", "%2e%2e/x"));
                    keyIntact = false;
                }
                case 5 -> body = ("{\"a\":" + "[".repeat(5_000) + "]".repeat(5_000) + "}").getBytes(StandardCharsets.UTF_8);
                case 6 -> body = method.equals("GET") ? null : huge(random);
                case 7 -> body = new byte[] {(byte) 0xC3, (byte) 0x28, '"', (byte) 0xFF};
                default -> body = "null".getBytes(StandardCharsets.UTF_8);
            }
        }
        return new Fuzzed(method, path, body, headers, keyIntact);
    }

    /** A JSON string value over the 1 MiB value limit, or 8 MiB of no JSON at all. */
    private static byte[] huge(Random random) {
        if (random.nextBoolean()) {
            return ("\"" + "x".repeat((1 << 20) + 10) + "\"").getBytes(StandardCharsets.UTF_8);
        }
        byte[] b = new byte[8 << 20];
        Arrays.fill(b, (byte) '{');
        return b;
    }

    /** The node's answer to {@code f}, or null when the JDK's client will not send it at all. */
    private static Answer send(String node, Fuzzed f) throws IOException, InterruptedException {
        HttpRequest.Builder request;
        try {
            request = HttpRequest.newBuilder(URI.create(cluster.httpUrl(node) + f.path)).timeout(Duration.ofSeconds(30))
                    .method(f.method, f.body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(f.body));
            if (!f.headers.isEmpty()) {
                request.headers(f.headers.toArray(String[]::new));
            }

        } catch (IllegalArgumentException e) {
            // The JDK's client will not send it (a path it cannot parse, a header value it refuses): the
            // raw-socket test covers such requests.
            return null;
        }
        try {
            HttpResponse<byte[]> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            return new Answer(response.statusCode(), response.body());
        } catch (IOException e) {
            throw new IOException("no answer to " + f + ": " + e.getMessage(), e);
        }
    }

    /** What a node answered: its status and body. */
    private record Answer(int status, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** A copy of {@code valid} changed by one or more of: flipped bytes, a cut, inserted bytes, noise, a huge tail. */
    private static byte[] mutate(Random random, byte[] valid) {
        if (valid.length == 0) {
            return randomBytes(random, 1 + random.nextInt(32));
        }
        byte[] b = valid.clone();
        switch (random.nextInt(10)) {
            case 0 -> {
                return b; // unchanged: the control
            }
            case 1, 2, 3 -> {
                for (int n = 1 + random.nextInt(3); n > 0; n--) {
                    b[random.nextInt(b.length)] ^= (byte) (1 << random.nextInt(8));
                }
            }
            case 4 -> b = Arrays.copyOf(b, random.nextInt(b.length));
            case 5 -> {
                int at = random.nextInt(b.length + 1);
                byte[] extra = randomBytes(random, 1 + random.nextInt(16));
                byte[] c = new byte[b.length + extra.length];
                System.arraycopy(b, 0, c, 0, at);
                System.arraycopy(extra, 0, c, at, extra.length);
                System.arraycopy(b, at, c, at + extra.length, b.length - at);
                b = c;
            }
            case 6 -> b = randomBytes(random, random.nextInt(256));
            case 7 -> {
                // A length field claiming far more than is there.
                int at = random.nextInt(b.length);
                for (int k = at; k < Math.min(b.length, at + 4); k++) {
                    b[k] = (byte) 0x7F;
                }
            }
            case 8 -> b = Arrays.copyOf(b, b.length + (5 << 20)); // over gRPC's inbound limit, zeros after
            default -> b = new byte[0];
        }
        return b;
    }

    private static byte[] randomBytes(Random random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    private static String pick(Random random, String... choices) {
        return choices[random.nextInt(choices.length)];
    }

    /** Whether the front end's own rules take {@code message} as one valid batch. */
    private static boolean decodes(byte[] message) {
        try {
            List<Batch> batches = Codec.decodeBatches(message);
            if (batches.size() != 1) {
                return false;
            }
            batches.get(0).validate();
            return true;
        } catch (InvalidCommandException e) {
            return false;
        }
    }

    /** Random metadata on some calls: headers the front end does not know, or a token in no shape. */
    private static org.apache.ratis.thirdparty.io.grpc.Channel withHeaders(Random random, ManagedChannel channel) {
        if (random.nextInt(3) != 0) {
            return channel;
        }
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of(pick(random, "authorization", "ratchet-token", "x-fuzz"), Metadata.ASCII_STRING_MARSHALLER),
                pick(random, "", "Bearer", "Bearer " + "z".repeat(4000), "\u0001\u0002"));
        return ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(headers));
    }

    private static long commitIndex(RatchetNode node) {
        try {
            return node.raftServer().getDivision(node.groupId()).getRaftLog().getLastCommittedIndex();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The committed entries after {@code index} that hold anything but sweeps ("" when none), as the log holds them. */
    private static String writesAfter(RatchetNode node, long index) {
        StringBuilder b = new StringBuilder();
        try {
            var log = node.raftServer().getDivision(node.groupId()).getRaftLog();
            for (long i = index + 1; i <= log.getLastCommittedIndex(); i++) {
                var e = log.get(i);
                if (!e.hasStateMachineLogEntry()) {
                    continue;
                }
                var entry = Codec.decodeEntry(e.getStateMachineLogEntry().getLogData().toByteArray());
                boolean sweepsOnly = entry.batches().stream().flatMap(batch -> batch.requests().stream())
                        .flatMap(r -> r.commands().stream()).allMatch(c -> c instanceof Command.Sweep);
                if (!sweepsOnly) {
                    b.append(i).append(": ").append(entry).append("; ");
                }
            }
        } catch (IOException | RuntimeException e) {
            b.append(e);
        }
        return b.length() > 2000 ? b.substring(0, 2000) : b.toString();
    }

    private static String what(int i, byte[] message, String detail) {
        return "seed " + SEED + ", message " + i + " (" + message.length + " bytes): " + detail;
    }

    /** Every node up and answering: a write through the client, and a read of it on every node. */
    private static void assertEveryNodeServes() throws Exception {
        for (String id : List.of("n1", "n2", "n3")) {
            assertEquals(200, send(id, new Fuzzed("GET", "/v1/status", null, List.of(), true)).status(), id + " answers status");
        }
        String key = "fuzz/after-" + AFTER.incrementAndGet();
        assertTrue(cluster.client().put(key, java.util.Map.of("ok", true), 0).successful(), "a write after the fuzz commits");
        for (String id : List.of("n1", "n2", "n3")) {
            await().atMost(Duration.ofSeconds(10)).until(() ->
                    send(id, new Fuzzed("GET", "/v1/items/" + key + "?stale=true", null, List.of(), true)).status() == 200);
        }
    }
}
