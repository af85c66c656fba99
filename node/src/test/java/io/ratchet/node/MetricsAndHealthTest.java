package io.ratchet.node;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.TransactionResult;
import io.ratchet.client.WatchResult;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Json;
import io.ratchet.recipes.lock.Locks;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What an operator's Prometheus and load balancer see of a real 3-node cluster: {@code /metrics} in
 * Prometheus' text format with the cluster's Raft state, applies, refusals and snapshots, and the
 * health probes, including a node that lost both its peers.
 */
class MetricsAndHealthTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    @Test
    void afterAFewWritesEveryNodeReportsWhatItAppliedRefusedAndSnapshotted() {
        // A snapshot every 20 entries, so that the snapshot series have something to say.
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withSnapshotThreshold(20, 64 << 10))) {
            RatchetClient client = cluster.client();
            long last = 0;
            for (int i = 0; i < 25; i++) {
                last = client.put("metrics/item-" + i, i, 0).index();
            }
            assertFalse(client.put("metrics/item-0", "again", 0).successful(), "create-only on an existing key");
            assertFalse(client.delete("metrics/item-1", last + 1000).successful(), "a delete at an index it never had");
            TransactionResult txn = client.transaction(List.of(new Command.Put("metrics/txn", "1", 0, null),
                    new Command.Check("metrics/item-2", last + 1000)));
            assertFalse(txn.successful());
            assertTrue(new Locks(client).tryAcquire("metrics-printer", Duration.ofMinutes(5)).isPresent());
            CompareExchangeResult lastWrite = client.put("metrics/last", "done", 0);
            long lastIndex = lastWrite.index();

            for (String id : cluster.nodeIds()) {
                await().atMost(PATIENCE).untilAsserted(() -> {
                    Scrape s = scrape(cluster, id);
                    assertTrue(s.value("ratchet_raft_applied_index") >= lastIndex, id + " applied the last write");
                    assertTrue(s.value("ratchet_raft_commit_index") >= lastIndex);
                    assertTrue(s.value("ratchet_raft_term") >= 1);
                    assertTrue(s.value("ratchet_entries_applied_total") >= 25, "one entry per sequential write at least");
                    assertTrue(s.value("ratchet_requests_applied_total", "op", "put") >= 27);
                    assertEquals(1, s.value("ratchet_conditions_refused_total", "op", "put"));
                    assertEquals(1, s.value("ratchet_conditions_refused_total", "op", "delete"));
                    assertEquals(1, s.value("ratchet_conditions_refused_total", "op", "txn"));
                    assertEquals(0, s.value("ratchet_conditions_refused_total", "op", "document"));
                    assertTrue(s.value("ratchet_apply_seconds_count") >= 25);
                    assertTrue(s.value("ratchet_apply_seconds_bucket", "le", "+Inf") >= 25, "apply latency is a histogram");
                    assertTrue(s.value("ratchet_requests_per_entry_count") >= 25);
                    assertTrue(s.value("ratchet_requests_per_entry_sum") >= s.value("ratchet_requests_per_entry_count"),
                            "an entry holds one request or more");
                    // The 25, the lock and the last; the refused writes (the transaction's put too) add nothing.
                    assertEquals(27, s.value("ratchet_items"));
                    assertEquals(1, s.value("ratchet_locks_held"));
                    assertTrue(s.value("ratchet_sessions_open") >= 1, "the client's session");
                    assertTrue(s.value("ratchet_snapshot_index") > 0, "the store flushed after 20 entries");
                    assertTrue(s.value("ratchet_snapshot_index") <= s.value("ratchet_raft_applied_index"));
                    assertTrue(s.value("ratchet_store_files_bytes") > 0, "the flush made a file");
                    assertTrue(s.value("ratchet_store_disk_free_bytes") > 0);
                    assertEquals(0, s.value("ratchet_store_failed"));
                    assertTrue(s.value("ratchet_storage_used_bytes") > 27 * 100, "27 items count 100 bytes each and more");
                    assertEquals(NodeConfig.DEFAULT_QUOTA_BYTES, s.value("ratchet_storage_quota_bytes"), "the node's default");
                    assertEquals(0, s.value("ratchet_storage_alarm"));
                    assertEquals(0, s.value("ratchet_writes_over_quota_total"));
                    assertTrue(s.value("ratchet_ratis_log_appends_total") > 0, "Ratis' own metrics come through");
                    assertTrue(s.value("ratchet_ratis_log_append_latency_seconds", "quantile", "0.99") >= 0);
                    assertTrue(s.has("jvm_memory_used_bytes"), "the JVM's metrics");
                    assertEquals(1, s.value("ratchet_ready"));
                });
            }

            // Asked again until they agree: a scrape in the middle of an election would see no leader.
            List<Scrape> all = await().atMost(PATIENCE).until(
                    () -> cluster.nodeIds().stream().map(id -> scrape(cluster, id)).toList(),
                    scrapes -> scrapes.stream().filter(s -> s.value("ratchet_raft_role", "role", "leader") == 1).count() == 1
                            && scrapes.stream().filter(s -> s.value("ratchet_raft_role", "role", "follower") == 1).count() == 2);
            // Every write the client sent was answered by the leader's front end, each one timed.
            assertTrue(all.stream().mapToDouble(s -> s.value("ratchet_raft_round_seconds_count")).sum() >= 29);
            assertTrue(all.stream().mapToDouble(s -> s.value("ratchet_ratis_elections_total")).sum() >= 1,
                    "the leader stood in an election");
            assertTrue(all.stream().allMatch(s -> s.text.lines().allMatch(l -> l.contains("node=\"") || l.startsWith("#"))),
                    "every series names its node");
            Matcher used = Pattern.compile("ratchet_[a-z_]+").matcher(dashboard());
            while (used.find()) {
                assertTrue(all.get(0).has(used.group()), "docs/grafana-dashboard.json asks for " + used.group());
            }

            // A watch waits on the node that serves it until the key changes.
            CompletableFuture<WatchResult> watch = client.watchAsync("metrics/watched", lastIndex, Duration.ofSeconds(30));
            await().atMost(PATIENCE).until(() -> pendingWatches(cluster) == 1);
            client.put("metrics/watched", 1, 0);
            assertTrue(watch.join().changed());
            await().atMost(PATIENCE).until(() -> pendingWatches(cluster) == 0);
        }
    }

    @Test
    void aConditionNamingAReplacedIndexIsRefusedByTheLeaderWithoutALogEntry() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient client = cluster.client();
            long first = client.put("hot/counter", 0, 0).index();
            long second = client.put("hot/counter", 1, first).index();
            // A loser of the round at `first`: refused in apply, which tracks the key as contended from here.
            assertFalse(client.put("hot/counter", 1, first).successful());
            long third = client.put("hot/counter", 2, second).index();

            // A loser coming back with `second`, replaced by `third` already: the leader answers it, no entry.
            CompareExchangeResult stale = client.put("hot/counter", 3, second);
            assertFalse(stale.successful());
            assertEquals(third, stale.index(), "the refusal carries the current item");
            assertEquals("2", stale.item().value());
            assertFalse(client.delete("hot/counter", first).successful(), "a delete naming a replaced index too");
            // Not every refusal: an index that is current still goes to the log, and lands.
            assertTrue(client.put("hot/counter", 4, third).successful());

            await().atMost(PATIENCE).untilAsserted(() -> {
                List<Scrape> all = cluster.nodeIds().stream().map(id -> scrape(cluster, id)).toList();
                assertEquals(2, all.stream().mapToDouble(s -> s.value("ratchet_conditions_refused_before_log_total")).sum(),
                        "the two writes naming a replaced index, counted by the leader that refused them");
                for (Scrape s : all) {
                    assertEquals(1, s.value("ratchet_conditions_refused_total", "op", "put"), "only the first loser reached the log");
                    assertEquals(0, s.value("ratchet_conditions_refused_total", "op", "delete"));
                    assertTrue(s.value("ratchet_raft_applied_index") >= third + 1, "every node applied the last write");
                }
            });
            assertEquals("4", client.get("hot/counter").orElseThrow().value());
        }
    }

    /** The sample dashboard's text; Maven runs the tests in the module's directory. */
    private static String dashboard() {
        try {
            return Files.readString(Path.of("..", "docs", "grafana-dashboard.json"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static double pendingWatches(LocalCluster cluster) {
        return cluster.nodeIds().stream().mapToDouble(id -> scrape(cluster, id).value("ratchet_watches_pending")).sum();
    }

    @Test
    void aNodeThatLostBothPeersStaysLiveButIsNoLongerReady() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            for (String id : cluster.nodeIds()) {
                await().atMost(PATIENCE).untilAsserted(() -> assertEquals(200, get(cluster, id, "/health/ready").statusCode()));
                JsonNode ready = Json.parse(get(cluster, id, "/health/ready").body());
                assertTrue(ready.get("ready").asBoolean());
                assertTrue(ready.get("member").asBoolean());
                assertFalse(ready.get("leader").isNull(), "a ready node knows the leader");
                assertEquals(0, ready.get("failed").size());
            }

            cluster.stopNode("n2");
            cluster.stopNode("n3");

            // A follower notices the silence after its election timeout; a leader steps down once it has
            // heard from no majority for twice that. Either way it then stands in elections it cannot win.
            await().atMost(PATIENCE).untilAsserted(() -> assertEquals(503, get(cluster, "n1", "/health/ready").statusCode()));
            JsonNode notReady = Json.parse(get(cluster, "n1", "/health/ready").body());
            assertFalse(notReady.get("ready").asBoolean());
            assertTrue(notReady.get("member").asBoolean(), "still a member: only its peers are gone");
            assertTrue(notReady.get("leader").isNull());
            assertEquals("no leader known", notReady.get("failed").get(0).asText(), notReady.toString());

            HttpResponse<String> live = get(cluster, "n1", "/health/live");
            assertEquals(200, live.statusCode());
            assertTrue(Json.parse(live.body()).get("live").asBoolean());
            Scrape s = scrape(cluster, "n1");
            assertEquals(0, s.value("ratchet_ready"));
            assertEquals(0, s.value("ratchet_raft_role", "role", "leader"));
        }
    }

    @Test
    void probesAnswerGetOnlyAndTheApiKeepsItsOwnPaths() {
        try (LocalCluster cluster = LocalCluster.start(1, dir)) {
            HttpResponse<String> post = send(cluster, "n1", "POST", "/metrics");
            assertEquals(405, post.statusCode());
            assertEquals("GET", post.headers().firstValue("Allow").orElseThrow());
            assertEquals(404, get(cluster, "n1", "/health").statusCode(), "only /health/live and /health/ready");
            assertEquals(200, get(cluster, "n1", "/").statusCode(), "the console is still at /");
        }
    }

    // ---- Prometheus' text format, as a scraper reads it

    /** One scrape: each sample line as a name, its labels and its value. */
    private record Scrape(String text, List<Sample> samples) {
        boolean has(String name) {
            return samples.stream().anyMatch(s -> s.name.equals(name));
        }

        /** The value of the one series of {@code name} whose labels include {@code labelValuePairs}. */
        double value(String name, String... labelValuePairs) {
            List<Sample> matching = new ArrayList<>();
            for (Sample s : samples) {
                boolean match = s.name.equals(name);
                for (int i = 0; match && i < labelValuePairs.length; i += 2) {
                    match = labelValuePairs[i + 1].equals(s.labels.get(labelValuePairs[i]));
                }
                if (match) {
                    matching.add(s);
                }
            }
            assertEquals(1, matching.size(), "one series " + name + " " + List.of(labelValuePairs) + " in:\n" + text);
            return matching.get(0).value;
        }
    }

    private record Sample(String name, Map<String, String> labels, double value) {
    }

    private static final Pattern LINE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})? (\\S+)");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");

    private static Scrape scrape(LocalCluster cluster, String id) {
        HttpResponse<String> response = get(cluster, id, "/metrics");
        assertEquals(200, response.statusCode());
        assertTrue(response.headers().firstValue("Content-Type").orElseThrow().startsWith("text/plain; version=0.0.4"));
        List<Sample> samples = new ArrayList<>();
        for (String line : response.body().lines().toList()) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = LINE.matcher(line);
            assertTrue(m.matches(), "a sample line: " + line);
            Map<String, String> labels = new LinkedHashMap<>();
            if (m.group(2) != null) {
                Matcher l = LABEL.matcher(m.group(2));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            samples.add(new Sample(m.group(1), labels, number(m.group(3))));
        }
        return new Scrape(response.body(), samples);
    }

    private static double number(String text) {
        return switch (text) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            default -> Double.parseDouble(text);
        };
    }

    private static HttpResponse<String> get(LocalCluster cluster, String id, String path) {
        return send(cluster, id, "GET", path);
    }

    private static HttpResponse<String> send(LocalCluster cluster, String id, String method, String path) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(cluster.httpUrl(id) + path)).timeout(Duration.ofSeconds(10))
                .method(method, HttpRequest.BodyPublishers.noBody()).build();
        try {
            return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
