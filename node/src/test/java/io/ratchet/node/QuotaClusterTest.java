package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.client.ClientOptions;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.DiskFullException;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.QuotaExceededException;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Result;
import io.ratchet.statemachine.RatchetStateMachine;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The storage quota on a real cluster: filled by many clients at once, it refuses growth and nothing
 * else; the leader stays; every replica counts the same; the quota survives a restart.
 */
class QuotaClusterTest {
    /** A 400-character string: about 500 bytes of state with its key and overhead. */
    private static final String PAYLOAD = "v".repeat(400);
    private static final String VALUE = Json.write(PAYLOAD);

    @TempDir
    Path dir;

    private static RatchetStateMachine machine(LocalCluster cluster, String id) {
        return (RatchetStateMachine) cluster.division(id).getStateMachine();
    }

    @Test
    void aClusterFilledToItsQuotaByManyClientsRefusesGrowthOnlyAndAcceptsWritesAgainOnceHalfIsDeleted()
            throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient admin = cluster.client();
            assertEquals(Limits.MIN_QUOTA_BYTES, admin.setQuota(Limits.MIN_QUOTA_BYTES).quota());
            String leader = cluster.awaitLeader();
            long term = cluster.division(leader).getInfo().getCurrentTerm();

            // Eight clients, each its own connections and session (as eight processes), create until refused.
            int writers = 8;
            AtomicInteger next = new AtomicInteger();
            AtomicBoolean full = new AtomicBoolean();
            List<String> written = java.util.Collections.synchronizedList(new ArrayList<>());
            List<QuotaExceededException> refusals = java.util.Collections.synchronizedList(new ArrayList<>());
            ExecutorService pool = Executors.newFixedThreadPool(writers);
            try {
                List<CompletableFuture<Void>> running = new ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    RatchetClient client = cluster.client(ClientOptions.parse(cluster.peers()));
                    running.add(CompletableFuture.runAsync(() -> {
                        int refusedHere = 0;
                        while (refusedHere < 3) {
                            String key = "fill/" + next.getAndIncrement();
                            try {
                                client.put(key, PAYLOAD, 0);
                                written.add(key);
                            } catch (QuotaExceededException e) {
                                refusals.add(e);
                                full.set(true);
                                refusedHere++;
                            }
                        }
                    }, pool));
                }
                CompletableFuture.allOf(running.toArray(CompletableFuture[]::new)).get();
            } finally {
                pool.shutdownNow();
            }
            assertTrue(full.get());
            QuotaExceededException refused = refusals.get(0);
            assertEquals(Limits.MIN_QUOTA_BYTES, refused.quota());
            assertTrue(refused.used() + refused.needed() > refused.quota(), refused.getMessage());
            assertTrue(written.size() > 1_000, "about 1 MiB of 500-byte items went in, not " + written.size());

            // Nothing refused was written, everything acknowledged was.
            List<Item> stored = cluster.itemsOn(leader);
            assertEquals(written.size(), stored.size());

            // Reads go on, and the leader stayed.
            assertTrue(admin.get(written.get(0)).isPresent());
            assertEquals(Limits.MAX_PAGE_SIZE, admin.list("fill/", 0, Limits.MAX_PAGE_SIZE).size());
            assertEquals(term, cluster.division(leader).getInfo().getCurrentTerm(), "no election while full");

            // Every replica counts the same and refuses the same.
            await().atMost(Duration.ofSeconds(10)).until(() -> cluster.nodeIds().stream()
                    .map(id -> machine(cluster, id).quota()).distinct().count() == 1);
            Result.Quota counted = machine(cluster, leader).quota();
            assertTrue(counted.alarm());

            // A write that does not grow the state is accepted; a delete of half frees room for new ones.
            Item first = admin.get(written.get(0)).orElseThrow();
            assertTrue(admin.put(first.key(), 1, first.index()).successful());
            List<CompletableFuture<Boolean>> deletes = new ArrayList<>();
            for (int i = 1; i < stored.size(); i += 2) {
                Item item = stored.get(i);
                if (item.key().equals(first.key())) {
                    continue; // rewritten above: its index moved
                }
                deletes.add(admin.deleteAsync(item.key(), item.index()).thenApply(r -> r.successful()));
            }
            for (CompletableFuture<Boolean> delete : deletes) {
                assertTrue(delete.join());
            }
            assertTrue(admin.put("after/half", PAYLOAD, 0).successful());
            assertTrue(admin.transaction(List.of(new Command.Put("after/txn", VALUE, 0, null))).successful());
            assertTrue(admin.quota().used() < counted.used());
        }
    }

    @Test
    void theHttpApiAnswersAWriteOverTheQuotaWith507AndTheUsage() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient admin = cluster.client();
            admin.setQuota(Limits.MIN_QUOTA_BYTES);
            String bigValue = "b".repeat(200_000);
            String big = Json.write(bigValue);
            // A few 200 KB values fit 1 MiB (how many depends on whether the client's session holds the
            // last one's result too), then one is refused.
            int written = 0;
            try {
                while (written < 10) {
                    admin.put("big/" + written, bigValue, 0);
                    written++;
                }
            } catch (QuotaExceededException expected) {
                assertTrue(admin.get("big/" + written).isEmpty());
            }
            assertTrue(written >= 3 && written < 10, "refused after " + written);

            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                            URI.create(cluster.httpUrl(cluster.nodeIds().get(0)) + "/v1/items/big/6"))
                    .header("If-None-Match", "*").PUT(HttpRequest.BodyPublishers.ofString(big)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(507, response.statusCode(), response.body());
            JsonNode body = Json.parse(response.body());
            assertEquals("quota_exceeded", body.get("error").asText());
            assertEquals(Limits.MIN_QUOTA_BYTES, body.get("quota").asLong());
            assertTrue(body.get("used").asLong() > 0);
            assertTrue(admin.get("big/6").isEmpty());
        }
    }

    @Test
    void theQuotaIsReplicatedStateThatSurvivesARestartFromSnapshotAndLog() {
        // A snapshot every 64 entries, so the restart reads the quota from a snapshot and the rest from the log.
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withSnapshotThreshold(64, 1L << 20))) {
            RatchetClient admin = cluster.client();
            admin.setQuota(3L << 20);
            for (int i = 0; i < 200; i++) {
                admin.put("k/" + i, PAYLOAD, 0);
            }
            Result.Quota before = admin.quota();
            assertEquals(3L << 20, before.quota());

            cluster.stopAll();
            cluster.startAll();
            cluster.awaitLeader();
            RatchetClient after = cluster.client();
            assertEquals(before, after.quota());
            for (String id : cluster.nodeIds()) {
                await().atMost(Duration.ofSeconds(10)).until(() -> machine(cluster, id).quota().equals(before));
            }
        }
    }

    @Test
    void aNodesConfiguredQuotaIsProposedOnceAndNeverOverridesAnOperatorsChange() {
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withQuota(64L << 20))) {
            RatchetClient admin = cluster.client();
            await().atMost(Duration.ofSeconds(10)).until(() -> admin.quota().quota() == 64L << 20);
            admin.setQuota(32L << 20);
            // a restart makes a leader again, which must not propose its configured quota over the operator's
            cluster.stopAll();
            cluster.startAll();
            cluster.awaitLeader();
            RatchetClient after = cluster.client();
            assertEquals(32L << 20, after.quota().quota());
            for (String id : cluster.nodeIds()) {
                assertTrue(machine(cluster, id).quotaSet());
            }
        }
    }

    @Test
    void theLeaderRefusesAQuotaItsDiskCannotHold() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient admin = cluster.client();
            // The first ready leader proposes the nodes' configured quota (QuotaBootstrap); until that lands
            // the state answers with its default, so a quota read before it would change under the test.
            for (String id : cluster.nodeIds()) {
                await().atMost(Duration.ofSeconds(10)).until(() -> machine(cluster, id).quotaSet());
            }
            long disk = dir.toFile().getTotalSpace();
            if (disk < Limits.MAX_QUOTA_BYTES) {
                long before = admin.quota().quota();
                InvalidRequestException refused = assertThrows(InvalidRequestException.class,
                        () -> admin.setQuota(Limits.MAX_QUOTA_BYTES));
                assertTrue(refused.getMessage().contains("larger than the disk that holds its store"), refused.getMessage());
                assertEquals(before, admin.quota().quota());
            }
            long larger = 4L << 30; // far beyond any test heap: the state is on disk
            if (disk > larger) {
                assertEquals(larger, admin.setQuota(larger).quota());
            }
            assertTrue(assertThrows(InvalidRequestException.class, () -> admin.setQuota(1)).getMessage()
                    .contains("quota must be"), "below the minimum");
        }
    }

    /**
     * A leader whose disk has less free space than its floor refuses, before the log, the writes that would
     * add to the state, with their own error; deletes and writes that keep the state's size go through, and
     * nothing it refused is anywhere. (The floor is set above any disk's free space, so the disk is "full".)
     */
    @Test
    void aLeaderWhoseDiskIsUnderItsFloorRefusesGrowthAndTakesDeletes() {
        long floor = Long.MAX_VALUE / 4;
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            CompareExchangeResult kept = cluster.client().put("keep/a", "1", 0);
            // Restarted with the floor above what any disk has free.
            cluster.stopAll();
            for (String id : cluster.nodeIds()) {
                cluster.reconfigure(id, c -> c.withStore(LocalCluster.TEST_STORE, floor));
            }
            cluster.startAll();
            cluster.awaitLeader();
            RatchetClient client = cluster.client();
            DiskFullException refused = assertThrows(DiskFullException.class, () -> client.put("new/b", "2", 0));
            assertEquals(cluster.awaitLeader(), refused.node());
            assertEquals(floor, refused.floorBytes());
            assertTrue(refused.freeBytes() < floor);
            assertTrue(refused.getMessage().contains("nothing was written"), refused.getMessage());
            assertTrue(client.get("new/b").isEmpty(), "refused before the log: on no node");
            assertTrue(client.put("keep/a", "2", kept.index()).successful(), "a write that keeps the size goes through");
            assertTrue(assertThrows(DiskFullException.class,
                    () -> client.put("keep/a", "\"a much longer value than one digit\"", client.get("keep/a").get().index()))
                    .getMessage().contains("under its floor"), "one that grows the item is refused");
            assertTrue(client.delete("keep/a", client.get("keep/a").get().index()).successful(), "deletes free space");
        }
    }
}
