package io.ratchet.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.cli.ScriptRunner.Run;
import io.ratchet.client.QuotaExceededException;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Json;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real thing, as a user runs it: {@code scripts/cluster start} launches three node JVMs from the
 * built jar, and {@code scripts/ratchet} drives them. Runs after packaging (failsafe).
 */
class CommandLineIT {
    private static final Path HOME = ScriptRunner.HOME;

    @TempDir
    static Path data;
    private static ScriptRunner scripts;

    @BeforeAll
    static void startCluster() throws Exception {
        scripts = new ScriptRunner(data, 3);
        Run start = run(List.of("scripts/cluster", "start"), 180);
        assertEquals(0, start.code(), start.toString());
        assertTrue(start.out().contains("n1=127.0.0.1:"), "start prints the peers: " + start);
    }

    @AfterAll
    static void stopCluster() throws Exception {
        Run stop = scripts.stopAndKeepLogs("CommandLineIT");
        assertEquals(0, stop.code(), stop.toString());
    }

    @Test
    void aUserReservesAnEmailAndASecondReservationIsRefused() throws Exception {
        JsonNode first = json(0, "put", "emails/ada@example.com", "\"users/1\"", "--index", "0");
        assertTrue(first.get("successful").asBoolean());
        long index = first.get("index").asLong();
        assertTrue(index > 0);

        JsonNode second = json(1, "put", "EMAILS/Ada@Example.com", "\"users/2\"", "--index", "0");
        assertFalse(second.get("successful").asBoolean());
        assertEquals(index, second.get("index").asLong());
        assertEquals("users/1", second.get("value").asText());
        assertEquals("emails/ada@example.com", second.get("key").asText());

        JsonNode got = json(0, "get", "emails/ada@example.com");
        assertEquals(index, got.get("index").asLong());
        assertEquals("users/1", got.get("value").asText());
        assertEquals(0, json(1, "get", "emails/nobody@example.com").get("index").asLong());
    }

    @Test
    void updateDeleteAndListFollowTheIndex() throws Exception {
        long created = json(0, "put", "tour/counter", "{\"n\":1}", "--index", "0", "--metadata", "{\"owner\":\"tour\"}")
                .get("index").asLong();
        JsonNode updated = json(0, "put", "tour/counter", "{\"n\":2}", "--index", String.valueOf(created));
        long current = updated.get("index").asLong();
        assertTrue(current > created);
        assertEquals(current, json(1, "put", "tour/counter", "{\"n\":3}", "--index", String.valueOf(created)).get("index").asLong());
        assertFalse(json(1, "delete", "tour/counter", "--index", String.valueOf(created)).get("successful").asBoolean());

        json(0, "put", "tour/other", "true", "--index", "0");
        JsonNode list = json(0, "list", "--prefix", "TOUR/");
        assertEquals(2, list.get("items").size());
        assertEquals("tour/counter", list.get("items").get(0).get("key").asText());
        assertEquals(2, list.get("items").get(0).get("value").get("n").asInt());

        JsonNode deleted = json(0, "delete", "tour/counter", "--index", String.valueOf(current));
        assertTrue(deleted.get("successful").asBoolean());
        assertEquals(0, deleted.get("index").asLong());
        assertEquals(1, json(0, "list", "--prefix", "tour/").get("items").size());
    }

    @Test
    void badInputExitsTwoWithAClearMessageAndWritesNothing() throws Exception {
        List<List<String>> bad = List.of(
                List.of("put", "", "1", "--index", "0"),
                List.of("put", "bad/" + "k".repeat(600), "1", "--index", "0"),
                List.of("put", "bad/null", "null", "--index", "0"),
                List.of("put", "bad/json", "{nope", "--index", "0"),
                List.of("put", "bad/index", "1", "--index", "-5"),
                List.of("put", "bad/index", "1", "--index", "seven"),
                List.of("put", "rvn-atomic/users/1", "{}", "--index", "0"),
                List.of("delete", "bad/zero", "--index", "0"),
                List.of("txn", "[{\"op\":\"put\",\"key\":\"bad/txn\",\"value\":1}]"),
                List.of("doc", "put", "bad/doc", "[1]"),
                List.of("put", "bad/ttl", "1", "--index", "0", "--ttl", "2s", "--expires", "2030-01-01T00:00:00Z"),
                List.of("put", "bad/expires", "1", "--index", "0", "--expires", "tomorrow"),
                List.of("put", "bad/ttl", "1", "--index", "0", "--ttl", "soon"),
                List.of("frobnicate"));
        for (List<String> args : bad) {
            Run r = ratchet(args);
            assertEquals(ExitCode.INVALID, r.code(), r.toString());
            assertFalse(r.err().isBlank(), "a message says what is wrong: " + r);
        }
        Run withJson = ratchet(List.of("put", "bad/null", "null", "--index", "0", "--json"));
        assertEquals("invalid_request", Json.parse(withJson.out()).get("error").asText());
        assertEquals(0, json(0, "list", "--prefix", "bad/").get("items").size());
    }

    @Test
    void aUserEditsADocumentUnderItsAtomicGuard() throws Exception {
        JsonNode created = json(0, "doc", "put", "customers/7", "{\"name\":\"Ada\",\"tier\":\"silver\"}");
        assertTrue(created.get("successful").asBoolean());
        long guard = created.get("guardIndex").asLong();

        JsonNode createAgain = json(1, "doc", "put", "customers/7", "{\"name\":\"Eve\"}");
        assertEquals(guard, createAgain.get("guardIndex").asLong(), "without --guard-index a put is create-only");
        assertEquals("Ada", createAgain.get("document").get("name").asText(), "the refusal shows the document as it is");

        JsonNode changed = json(0, "doc", "put", "customers/7", "{\"name\":\"Ada\",\"tier\":\"gold\"}",
                "--guard-index", String.valueOf(guard));
        long moved = changed.get("guardIndex").asLong();
        assertTrue(moved > guard, "every change moves the guard");
        assertEquals(moved, json(0, "get", "rvn-atomic/customers/7").get("index").asLong(), "the guard is an item, listed like any");

        JsonNode staleDelete = json(1, "doc", "delete", "customers/7", "--guard-index", String.valueOf(guard));
        assertEquals(moved, staleDelete.get("guardIndex").asLong());
        assertEquals("gold", staleDelete.get("document").get("tier").asText());

        JsonNode deleted = json(0, "doc", "delete", "customers/7", "--guard-index", String.valueOf(moved));
        assertTrue(deleted.get("document").isNull());
        JsonNode gone = json(1, "doc", "get", "customers/7");
        assertEquals(0, gone.get("guardIndex").asLong());
        assertEquals(1, ratchet(List.of("get", "rvn-atomic/customers/7")).code(), "the guard went with the document");
    }

    @Test
    void aTransactionAppliesAllOrNothingAndAKeyedResendAppliesOnce() throws Exception {
        String both = "[{\"op\":\"put\",\"key\":\"cart/a\",\"value\":1,\"index\":0},"
                + "{\"op\":\"put\",\"key\":\"cart/b\",\"value\":2,\"index\":0}]";
        JsonNode first = json(0, "txn", both, "--idempotency-key", "cart-1");
        long index = first.get("index").asLong();
        assertTrue(first.get("successful").asBoolean());
        assertEquals(index, json(0, "txn", both, "--idempotency-key", "cart-1").get("index").asLong(),
                "the resend returns the first outcome instead of a conflict");

        JsonNode refused = json(1, "txn", "[{\"op\":\"check\",\"key\":\"cart/a\",\"index\":" + (index - 1) + "},"
                + "{\"op\":\"put\",\"key\":\"cart/c\",\"value\":3,\"index\":0}]");
        assertFalse(refused.get("successful").asBoolean());
        JsonNode conflict = refused.get("conflicts").get(0);
        assertEquals("cart/a", conflict.get("key").asText());
        assertEquals(index - 1, conflict.get("expected").asLong());
        assertEquals(index, conflict.get("actual").asLong());

        JsonNode items = json(0, "list", "--prefix", "cart/").get("items");
        assertEquals(2, items.size(), "cart/c was not written");
        items.forEach(item -> assertEquals(index, item.get("index").asLong(), "both writes at one index, once"));
    }

    @Test
    void aLockIsAcquiredRefusedRenewedAndReleasedByIndex() throws Exception {
        JsonNode alice = json(0, "lock", "acquire", "printer", "--lease", "30s", "--owner", "alice");
        assertTrue(alice.get("acquired").asBoolean());
        long token = alice.get("token").asLong();
        long index = alice.get("index").asLong();
        assertEquals(token, index, "the acquiring index is the fencing token");
        assertTrue(Instant.parse(alice.get("expiresAt").asText()).isAfter(Instant.now().plusSeconds(20)));

        JsonNode bob = json(1, "lock", "acquire", "printer", "--lease", "30s", "--owner", "bob");
        assertFalse(bob.get("acquired").asBoolean());
        assertEquals("alice", bob.get("holder").get("owner").asText());
        assertEquals(token, bob.get("holder").get("token").asLong());

        JsonNode renewed = json(0, "lock", "renew", "printer", "--index", String.valueOf(index), "--lease", "30s");
        assertEquals(token, renewed.get("token").asLong(), "renewal keeps the token");
        long current = renewed.get("index").asLong();
        assertTrue(current > index);
        assertEquals("alice", renewed.get("owner").asText());

        JsonNode stale = json(1, "lock", "release", "printer", "--index", String.valueOf(index));
        assertFalse(stale.get("released").asBoolean());
        assertEquals(current, stale.get("holder").get("index").asLong());
        assertTrue(json(0, "lock", "release", "printer", "--index", String.valueOf(current)).get("released").asBoolean());

        Run zero = ratchet(List.of("lock", "acquire", "printer", "--lease", "0s"));
        assertEquals(ExitCode.INVALID, zero.code(), zero.toString());
        assertEquals(0, json(0, "list", "--prefix", "locks/printer").get("items").size(), "released, and nothing else written");
    }

    @Test
    void anItemPutWithATtlIsSweptAndAWatcherSeesItGoWhileAReservationStays() throws Exception {
        JsonNode put = json(0, "put", "tour/session", "\"ada\"", "--index", "0", "--ttl", "2s");
        long index = put.get("index").asLong();
        assertTrue(put.get("metadata").has("@expires"));

        JsonNode gone = json(0, "watch", "tour/session", "--after", String.valueOf(index), "--timeout", "20s");
        assertTrue(gone.get("changed").asBoolean());
        assertTrue(gone.get("lastChange").asLong() > index);
        assertTrue(gone.get("value").isNull(), "the sweep deleted it: " + gone);

        JsonNode lin = json(0, "reserve", "emails/lin@example.com", "users/7");
        assertTrue(lin.get("reserved").asBoolean());
        JsonNode taken = json(1, "reserve", "EMAILS/Lin@Example.com", "users/8");
        assertEquals("users/7", taken.get("owner").asText());
        JsonNode quiet = json(1, "watch", "emails/lin@example.com", "--after", lin.get("index").asText(), "--timeout", "2s");
        assertFalse(quiet.get("changed").asBoolean());
        assertEquals("users/7", quiet.get("value").asText());
    }

    @Test
    void statusNamesTheLeaderAndKillingItLeavesTheClusterWritable() throws Exception {
        JsonNode status = json(0, "status");
        String leader = status.get("leader").asText();
        assertEquals(3, status.get("nodes").size());

        json(0, "put", "chaos/before", "1", "--index", "0");
        Run killed = run(List.of("scripts/cluster", "kill-leader"), 60);
        assertEquals(0, killed.code(), killed.toString());
        assertEquals(leader, killed.out().trim());

        assertTrue(json(0, "put", "chaos/after", "2", "--index", "0").get("successful").asBoolean());
        assertEquals(1, json(0, "get", "chaos/before").get("value").asInt());
        assertNotEquals(leader, json(0, "status").get("leader").asText());

        Run restarted = run(List.of("scripts/cluster", "start-node", leader), 60);
        assertEquals(0, restarted.code(), restarted.toString());
    }

    @Test
    void anUnreachableClusterExitsThreeForReadsAndForWritesThatCertainlyWereNotApplied() throws Exception {
        String nowhere = "127.0.0.1:" + freePort();
        assertEquals(ExitCode.UNAVAILABLE, ratchet(List.of("get", "k", "--peers", nowhere, "--timeout", "2s")).code());
        // No connection could be made, so the write never left the client: not an unknown outcome.
        Run write = ratchet(List.of("put", "k", "1", "--index", "0", "--peers", nowhere, "--timeout", "2s", "--json"));
        assertEquals(ExitCode.UNAVAILABLE, write.code(), write.toString());
        assertEquals("cluster_unavailable", Json.parse(write.out()).get("error").asText());
    }

    @Test
    void everyNodeServesTheHttpApiAndConsoleAtTheUrlsTheScriptPrints() throws Exception {
        Run urls = run(List.of("scripts/cluster", "urls", "--api"), 30);
        assertEquals(0, urls.code(), urls.toString());
        List<String> each = urls.out().lines().toList();
        assertEquals(3, each.size(), urls.toString());
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> created = http.send(HttpRequest.newBuilder(URI.create(each.get(0) + "v1/items/tour/http"))
                .header("If-None-Match", "*").PUT(HttpRequest.BodyPublishers.ofString("{\"n\":1}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(201, created.statusCode(), created.body());
        String etag = created.headers().firstValue("ETag").orElseThrow();
        HttpResponse<String> read = http.send(HttpRequest.newBuilder(URI.create(each.get(2) + "v1/items/TOUR/http")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, read.statusCode(), read.body());
        assertEquals(etag, read.headers().firstValue("ETag").orElseThrow());
        HttpResponse<String> blind = http.send(HttpRequest.newBuilder(URI.create(each.get(1) + "v1/items/tour/http"))
                .PUT(HttpRequest.BodyPublishers.ofString("2")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(428, blind.statusCode(), blind.body());
        HttpResponse<String> console = http.send(HttpRequest.newBuilder(URI.create(each.get(1))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, console.statusCode());
        assertTrue(console.headers().firstValue("Content-Type").orElseThrow().startsWith("text/html"));
    }

    @Test
    void theScriptListsEachNodesMetricsAndHealthUrlsAndEachAnswers() throws Exception {
        Run urls = run(List.of("scripts/cluster", "urls"), 30);
        assertEquals(0, urls.code(), urls.toString());
        HttpClient http = HttpClient.newHttpClient();
        int metrics = 0;
        int ready = 0;
        for (String line : urls.out().lines().toList()) {
            String url = line.split(" +")[1];
            // Another test restarts a node; it is ready again once it has caught up.
            HttpResponse<String> answer = await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(
                    () -> http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString()),
                    r -> r.statusCode() == 200);
            if (url.endsWith("/metrics")) {
                metrics++;
                assertTrue(answer.body().contains("ratchet_raft_applied_index{"), answer.body());
            } else if (url.endsWith("/health/ready")) {
                ready++;
            }
        }
        assertEquals(3, metrics, urls.toString());
        assertEquals(3, ready, urls.toString());
    }

    @Test
    void sharedOptionsGoBeforeOrAfterTheCommandAndLaterCallsMapTheLaunchersClassArchive() throws Exception {
        json(0, "put", "shared-options/k", "7", "--index", "0");
        Run before = ratchet(List.of("--json", "get", "shared-options/k"));
        Run after = ratchet(List.of("get", "shared-options/k", "--json"));
        assertEquals(0, before.code(), before.toString());
        assertEquals(7, Json.parse(before.out()).get("value").asInt());
        assertEquals(before.out(), after.out(), "--json before the command means what it means after it");

        // The first call that reached the cluster recorded its classes; the archive is dumped behind it.
        Path archives = HOME.resolve("cli/target/cds");
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            try (Stream<Path> files = Files.list(archives)) {
                return files.anyMatch(f -> f.getFileName().toString().endsWith(".jsa"));
            }
        });
        Run mapped = ratchet(List.of("--json", "get", "shared-options/k"));
        assertEquals(0, mapped.code(), mapped.toString());
        assertEquals(before.out(), mapped.out());
        assertFalse(mapped.err().contains("cds"), "the archive is used silently: " + mapped.err());
    }

    @Test
    void statsNamesAKeyWhoseConditionWasRefused() throws Exception {
        json(0, "put", "contended/counter", "1", "--index", "0");
        json(1, "put", "contended/counter", "2", "--index", "0");
        JsonNode stats = json(0, "stats", "--top", "50");
        JsonNode row = null;
        for (JsonNode k : stats.get("cluster")) {
            if (k.get("key").asText().equals("contended/counter")) {
                row = k;
            }
        }
        assertTrue(row != null, "the refused key is listed: " + stats);
        assertTrue(row.get("refused").asLong() >= 1, row.toString());
        assertTrue(stats.get("servedBy").asText().startsWith("127.0.0.1:"), stats.toString());
        assertEquals(0, stats.get("client").size(), "a fresh command line ran no retry loop");
    }

    @Test
    void aFullQuotaRefusesGrowthWithExitSixAndAnOperatorRaisesIt() throws Exception {
        JsonNode before = json(0, "quota");
        assertTrue(before.get("used").asLong() >= 0 && before.get("quota").asLong() > 0, before.toString());
        // 100 KB: one command-line argument may not pass 128 KiB.
        String big = "\"" + "q".repeat(100_000) + "\"";
        try {
            JsonNode set = json(0, "quota", "set", "1MiB");
            assertEquals(1L << 20, set.get("quota").asLong());
            // The quota is filled through the Java client (a command line per 100 KB value cost about two
            // seconds each), then the command line's own put is the one refused.
            int written = 0;
            try (RatchetClient client = scripts.client()) {
                for (; written < 20; written++) {
                    try {
                        assertTrue(client.put("quota/" + written, Json.parse(big), 0).successful());
                    } catch (QuotaExceededException e) {
                        break;
                    }
                }
            }
            assertTrue(written >= 2 && written < 20, "1 MiB takes a few 100 KB values, then refuses: " + written);
            Run refused = ratchet(List.of("put", "quota/next", big, "--index", "0"));
            assertEquals(ExitCode.QUOTA_EXCEEDED, refused.code(), refused.toString());
            assertEquals(1, ratchet(List.of("get", "quota/next")).code(), "nothing was written");
            assertTrue(refused.err().contains("storage quota exceeded") && refused.err().contains("of 1048576 bytes"),
                    refused.err());
            JsonNode full = json(0, "quota");
            assertTrue(full.get("alarm").asBoolean(), full.toString());
            assertEquals(2, ratchet(List.of("quota", "set", "lots")).code(), "a size that is no size is refused");
        } finally {
            json(0, "quota", "set", "256MiB");
        }
        json(0, "put", "quota/after", big, "--index", "0");
    }

    // ---- helpers

    private static JsonNode json(int expectedCode, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args));
        all.add("--json");
        Run r = ratchet(all);
        assertEquals(expectedCode, r.code(), r.toString());
        return Json.parse(r.out());
    }

    private static Run ratchet(List<String> args) throws Exception {
        return scripts.ratchet(args);
    }

    private static Run run(List<String> command, int timeoutSeconds) throws IOException, InterruptedException {
        return scripts.run(command, timeoutSeconds);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
