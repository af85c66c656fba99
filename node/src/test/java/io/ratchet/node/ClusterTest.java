package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.PutOptions;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.RatchetException;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Item;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Three real Ratis servers in this JVM, talking gRPC on loopback; clients as users have them. */
class ClusterTest {
    @TempDir
    Path dir;

    @Test
    void sixteenRacersCreateTheSameKeyAndExactlyOneWins() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            List<RatchetClient> clients = List.of(cluster.client(), cluster.client(), cluster.client(), cluster.client());
            CountDownLatch go = new CountDownLatch(1);
            ExecutorService pool = Executors.newFixedThreadPool(16);
            try {
                List<Future<CompareExchangeResult>> attempts = new ArrayList<>();
                for (int i = 0; i < 16; i++) {
                    RatchetClient client = clients.get(i % clients.size());
                    String racer = "racer-" + i;
                    attempts.add(pool.submit(() -> {
                        go.await();
                        return client.put("printers/floor-3", racer, 0);
                    }));
                }
                go.countDown();
                List<CompareExchangeResult> results = new ArrayList<>();
                for (Future<CompareExchangeResult> f : attempts) {
                    results.add(f.get());
                }
                List<CompareExchangeResult> winners = results.stream().filter(CompareExchangeResult::successful).toList();
                assertEquals(1, winners.size(), "exactly one create-only put wins: " + results);
                CompareExchangeResult winner = winners.get(0);
                for (CompareExchangeResult loser : results) {
                    assertEquals(winner.index(), loser.index(), "every loser is told the winner's index");
                    assertEquals(winner.value(), loser.value(), "every loser is told the winner's value");
                }
                Item stored = clients.get(0).get("printers/floor-3").orElseThrow();
                assertEquals(winner.index(), stored.index());
                assertEquals(winner.value(), stored.value());
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void twoWritersFromTheSameReadTheSecondIsRefusedAndItsRetryFromTheReturnedStateSucceeds() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient alice = cluster.client();
            RatchetClient bob = cluster.client();
            long created = alice.put("stock/widgets", 10, 0).index();

            Item aliceRead = alice.get("stock/widgets").orElseThrow();
            Item bobRead = bob.get("stock/widgets").orElseThrow();
            assertEquals(created, aliceRead.index());
            assertEquals(created, bobRead.index());

            CompareExchangeResult aliceSold = alice.put("stock/widgets", aliceRead.valueNode().asInt() - 3, aliceRead.index());
            assertTrue(aliceSold.successful());

            CompareExchangeResult bobSold = bob.put("stock/widgets", bobRead.valueNode().asInt() - 2, bobRead.index());
            assertFalse(bobSold.successful(), "a lost update is turned into a detected conflict");
            assertEquals(aliceSold.index(), bobSold.index(), "the refusal carries the current index");
            assertEquals(7, bobSold.valueNode().asInt(), "and the current value, so no extra read is needed");

            CompareExchangeResult retried = bob.put("stock/widgets", bobSold.valueNode().asInt() - 2, bobSold.index());
            assertTrue(retried.successful());
            assertEquals(5, alice.get("stock/widgets").orElseThrow().valueNode().asInt(), "both sales count");
        }
    }

    @Test
    void abaTheSameValueComingBackDoesNotRestoreAStaleIndex() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient client = cluster.client();
            long first = client.put("cells/a1", "A", 0).index();
            assertTrue(client.delete("cells/a1", first).successful());
            long second = client.put("cells/a1", "A", 0).index();
            assertTrue(second > first);
            CompareExchangeResult stale = client.put("cells/a1", "B", first);
            assertFalse(stale.successful());
            assertEquals(second, stale.index());
        }
    }

    @Test
    void whenTheLeaderStopsWritesSucceedOnTheNewLeaderAndTheOldOneCatchesUp() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient client = cluster.client();
            for (int i = 0; i < 20; i++) {
                assertTrue(client.put("before/" + i, i, 0).successful());
            }
            String oldLeader = cluster.awaitLeader();
            cluster.stopNode(oldLeader);

            for (int i = 0; i < 20; i++) {
                assertTrue(client.put("after/" + i, i, 0).successful());
            }
            String newLeader = cluster.awaitLeader();
            assertFalse(newLeader.equals(oldLeader));
            assertEquals(20, client.list("before/", 0, 100).size());
            assertEquals(20, client.list("after/", 0, 100).size());

            cluster.startNode(oldLeader);
            long target = cluster.appliedIndex(newLeader);
            await().atMost(Duration.ofSeconds(30)).until(() -> cluster.appliedIndex(oldLeader) >= target);
            assertEquals(cluster.itemsOn(newLeader), cluster.itemsOn(oldLeader));
        }
    }

    @Test
    void everyAcknowledgedWriteIsReadableAfterAllNodesRestartFromSnapshotPlusLog() {
        // A low threshold so the restart loads a snapshot and replays the log after it. Group commit puts
        // what is in flight together into one entry, so the writes go in waves of 10 to make many entries.
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withSnapshotThreshold(20, 64 << 10))) {
            RatchetClient client = cluster.client();
            Map<String, Long> acknowledged = new ConcurrentHashMap<>();
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int i = 0; i < 400; i++) {
                String key = "orders/" + i;
                writes.add(client.putAsync(key, Map.of("n", i), 0)
                        .thenAccept(r -> {
                            if (r.successful()) {
                                acknowledged.put(key, r.index());
                            }
                        }));
                if (i % 10 == 9) {
                    writes.get(i).join();
                }
            }
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).join();
            assertEquals(400, acknowledged.size());
            String leader = cluster.awaitLeader();
            assertTrue(cluster.division(leader).getStateMachine().getLatestSnapshot() != null, "a snapshot was taken");

            cluster.stopAll();
            cluster.startAll();
            cluster.awaitLeader();

            RatchetClient after = cluster.client();
            List<Item> items = new ArrayList<>();
            for (int start = 0; start < 400; start += 100) {
                items.addAll(after.list("orders/", start, 100));
            }
            assertEquals(400, items.size());
            for (Item item : items) {
                assertEquals(acknowledged.get(item.key()), item.index(), item.key());
            }
            assertTrue(after.put("orders/new", 1, 0).successful(), "the restarted cluster takes writes");
        }
    }

    @Test
    void aNodeThatWasDownCatchesUpThroughASnapshotWhenTheLogItMissedIsPurged() {
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withSnapshotThreshold(20, 16 << 10))) {
            RatchetClient client = cluster.client();
            String leader = cluster.awaitLeader();
            String lagging = cluster.nodeIds().stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
            cluster.stopNode(lagging);
            long missedFrom = cluster.appliedIndex(leader);

            List<CompletableFuture<CompareExchangeResult>> writes = new ArrayList<>();
            for (int i = 0; i < 600; i++) {
                writes.add(client.putAsync("sessions/" + i, "token-" + i, 0));
                if (i % 10 == 9) {
                    writes.get(i).join(); // in waves: many log entries, despite group commit
                }
            }
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).join();
            String current = cluster.awaitLeader();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> cluster.division(current).getRaftLog().getStartIndex() > missedFrom + 1);

            cluster.startNode(lagging);
            await().atMost(Duration.ofSeconds(60)).until(() -> cluster.appliedIndex(lagging) >= cluster.appliedIndex(current));
            var installed = cluster.division(lagging).getStateMachine().getLatestSnapshot();
            assertTrue(installed != null && installed.getIndex() > missedFrom, "the lagging node got a snapshot");
            assertEquals(cluster.itemsOn(current), cluster.itemsOn(lagging));
            assertEquals(600, cluster.itemsOn(lagging).size());
        }
    }

    @Test
    void badInputIsRefusedClearlyWritesNothingAndTheClusterKeepsServing() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient client = cluster.client();
            assertEquals("key must not be empty",
                    assertThrows(InvalidRequestException.class, () -> client.put("", 1, 0)).getMessage());
            assertThrows(InvalidRequestException.class, () -> client.put("k".repeat(513), 1, 0));
            assertThrows(InvalidRequestException.class, () -> client.put("k", "x".repeat(1 << 20), 0));
            assertThrows(InvalidRequestException.class, () -> client.put("k", 1, -1));
            assertThrows(InvalidRequestException.class, () -> client.delete("k", 0));
            assertThrows(InvalidRequestException.class, () -> client.put("rvn-atomic/users/1", 1, 0));
            assertThrows(InvalidRequestException.class, () -> client.put("k", 1, 0, PutOptions.none().metadata(List.of("not an object"))));
            assertThrows(InvalidRequestException.class, () -> client.get(""));
            assertThrows(InvalidRequestException.class, () -> client.list("", 0, 0));
            assertEquals(List.of(), client.list("", 0, 100));

            // Garbage straight onto the Raft stream, past the client's own checks: the leader refuses it.
            RawSender.send(cluster.peers(), new byte[] {1, 1, 0, 0, 0, 1, 9});
            RawSender.send(cluster.peers(), new byte[] {42});

            assertTrue(client.put("still/serving", true, 0).successful());
            assertEquals(1, client.list("", 0, 100).size());
        }
    }

    @Test
    void aWriteRightAfterStatusAndAStaleReadIsNotHeldUp() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            // A stall here would end in UnknownOutcomeException after the 5 s operation timeout.
            RatchetClient client = cluster.client(ClientOptions.parse(cluster.peers())
                    .withTimeouts(Duration.ofSeconds(2), 6, Duration.ofSeconds(5)));
            assertTrue(client.put("k", 1, 0).successful());
            assertEquals(3, client.status().stream().filter(n -> n.error() == null).count());
            // A stale read answers at once, though the node that answers may not have applied "k" yet (a
            // follower learns the commit index with the leader's next message); it converges.
            assertTrue(cluster.peers().contains(client.getStale("k").servedBy()), "served by one of the nodes");
            await().atMost(Duration.ofSeconds(5)).until(() -> client.getStale("k").value().isPresent());
            assertTrue(client.put("k2", 2, 0).successful());
            assertEquals(2, client.get("k2").orElseThrow().valueNode().asInt());

            // One node down: status still reports the other two, and the down one as unreachable.
            String leader = cluster.awaitLeader();
            String follower = cluster.nodeIds().stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
            cluster.stopNode(follower);
            var statuses = client.status();
            assertEquals(List.of(follower), statuses.stream().filter(n -> n.error() != null).map(n -> n.id()).toList());
            assertEquals(leader, statuses.stream().filter(n -> "LEADER".equals(n.role())).findFirst().orElseThrow().id());
            cluster.startNode(follower);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> client.status().stream().allMatch(n -> n.error() == null));
        }
    }

    @Test
    void withoutAMajorityAWriteIsRefusedOrInDoubtAndARefusedOneIsNeverAppliedLater() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient client = cluster.client(ClientOptions.parse(cluster.peers())
                    .withTimeouts(Duration.ofMillis(500), 3, Duration.ofSeconds(2)));
            assertTrue(client.put("k", 1, 0).successful());
            String leader = cluster.awaitLeader();
            cluster.nodeIds().stream().filter(id -> !id.equals(leader)).forEach(cluster::stopNode);

            // Refused before it reached the log (the leader had stepped down): certainly not applied. Or
            // appended by a leader that could not commit it: in doubt. Never a success.
            RatchetException write = assertThrows(RatchetException.class, () -> client.put("k2", 2, 0));
            assertTrue(write instanceof ClusterUnavailableException || write instanceof UnknownOutcomeException, write.toString());
            assertThrows(ClusterUnavailableException.class, () -> client.get("k"));

            cluster.startAll();
            cluster.awaitLeader();
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
                    .until(() -> client.get("k").orElseThrow().valueNode().asInt() == 1);
            if (write instanceof ClusterUnavailableException) {
                assertTrue(client.get("k2").isEmpty(), "a write reported unavailable was not applied, then or later");
            }
        }
    }

    @Test
    void aLeaderToldToStopHandsLeadershipToAnotherVoterFirst() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            String leader = cluster.awaitLeader();
            RatchetClient client = cluster.client();
            assertTrue(client.put("stop/before", "1", 0).successful());
            String follower = cluster.nodeIds().stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
            assertFalse(cluster.node(follower).handOverLeadership(Duration.ofSeconds(5)), "a follower has nothing to hand");
            assertTrue(cluster.node(leader).handOverLeadership(Duration.ofSeconds(5)));
            assertFalse(cluster.division(leader).getInfo().isLeader(), "it stepped down before it returned");
            String next = cluster.awaitLeader();
            assertFalse(next.equals(leader), next);
            cluster.stopNode(leader);
            assertEquals(1, client.get("stop/before").orElseThrow().valueNode().asInt(), "what it acknowledged is kept");
            assertTrue(client.put("stop/after", "2", 0).successful(), "the others serve on");
        }
    }
}
