package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.RatchetClient;
import io.ratchet.client.TransactionResult;
import io.ratchet.protocol.Command;
import io.ratchet.recipes.session.ClusterSession;
import io.ratchet.protocol.Command.Settle.Step;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import io.ratchet.protocol.Result.TxnState.Record;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transactions across the groups of a real 3-node cluster of four groups: all or nothing with conflicts
 * from every group, concurrent transfers that keep a total, and a coordinator that stops after its commit
 * or before it, which the cluster's recovery finishes (commits, or aborts once the lease runs out) while
 * a reader and a writer of its keys wait instead of seeing half of it.
 */
class CrossGroupTransactionClusterTest {
    private static final int GROUPS = 4;

    @TempDir
    Path dir;

    @Test
    void allOrNothingAcrossGroupsAndConcurrentTransfersKeepTheirTotal() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withGroups(GROUPS))) {
            RatchetClient client = cluster.client();
            String a = keyInGroup("acct/", 0);
            String b = keyInGroup("acct/", 2);
            String c = keyInGroup("acct/", 3);
            TransactionResult opened = client.transaction(List.of(new Command.Put(a, "100", 0, null),
                    new Command.Put(b, "100", 0, null), new Command.Put(c, "100", 0, null)));
            assertTrue(opened.successful());
            for (String key : List.of(a, b, c)) {
                assertEquals(opened.indexOf(key), client.get(key).orElseThrow().index(), key + ": its group's index");
            }

            // A stale condition in one group: conflicts named, nothing written in any group.
            long bIndex = client.get(b).orElseThrow().index();
            TransactionResult refused = client.transaction(List.of(new Command.Put(a, "0", opened.indexOf(a), null),
                    new Command.Put(b, "0", bIndex + 1, null), new Command.Check(c, 1)));
            assertFalse(refused.successful());
            assertEquals(List.of(b, c).stream().sorted().toList(), refused.conflicts().stream().map(Result.Conflict::key).sorted().toList());
            assertEquals("100", client.get(a).orElseThrow().value(), "the group whose condition held wrote nothing");

            // Transfers between the three accounts from four threads: each reads, then moves 1 across groups.
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<Integer>> moved = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    int seed = t;
                    moved.add(pool.submit(() -> transfers(client, List.of(a, b, c), seed, 15)));
                }
                int committed = 0;
                for (Future<Integer> f : moved) {
                    committed += f.get();
                }
                assertTrue(committed > 0, "some transfers committed");
                long total = client.getAll(List.of(a, b, c)).stream().mapToLong(i -> Long.parseLong(i.value())).sum();
                assertEquals(300, total, "no transfer half-applied or lost");
            } finally {
                pool.shutdownNow();
            }
            // A document session whose documents are in two groups: one save across them, then a second save
            // on the indexes the first gave each group's document (a wrong index would be a conflict).
            String d1 = keyInGroup("orders/", 1);
            String d2 = keyInGroup("orders/", 2);
            ClusterSession session = ClusterSession.open(client);
            session.store(d1, Map.of("n", 1));
            session.store(d2, Map.of("n", 2));
            session.saveChanges();
            assertEquals(client.getDocument(d1).orElseThrow().index(), session.guardIndex(d1));
            assertEquals(client.getDocument(d2).orElseThrow().index(), session.guardIndex(d2));
            session.store(d1, Map.of("n", 11));
            session.store(d2, Map.of("n", 22));
            session.saveChanges();
            assertEquals("{\"n\":22}", client.getDocument(d2).orElseThrow().json());

            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                for (int g = 0; g < GROUPS; g++) {
                    assertFalse(cluster.machineOn(cluster.awaitLeader(g), g).transactionWork(Long.MAX_VALUE / 2, 0, 0)
                            .stream().anyMatch(w -> w.kind() != io.ratchet.statemachine.TxnWork.Kind.FORGET),
                            "no intent left behind in group " + g);
                }
            });
        }
    }

    private static int transfers(RatchetClient client, List<String> accounts, int seed, int count) {
        int committed = 0;
        for (int i = 0; i < count; i++) {
            String from = accounts.get((seed + i) % accounts.size());
            String to = accounts.get((seed + i + 1) % accounts.size());
            Item source = client.get(from).orElseThrow();
            Item target = client.get(to).orElseThrow();
            TransactionResult r = client.transaction(List.of(
                    new Command.Put(from, Long.toString(Long.parseLong(source.value()) - 1), source.index(), null),
                    new Command.Put(to, Long.toString(Long.parseLong(target.value()) + 1), target.index(), null)));
            committed += r.successful() ? 1 : 0;
        }
        return committed;
    }

    @Test
    void aCoordinatorGoneAfterItsCommitIsFinishedAndReadersNeverSeeHalf() {
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withGroups(GROUPS))) {
            RatchetClient client = cluster.client();
            assertEquals(GROUPS, client.groups());
            String primaryKey = keyInGroup("gone/", 0);
            String other = keyInGroup("gone/", 1);
            // The coordinator's steps by hand, stopping after the commit in the primary (group 0).
            Result.TxnState p = prepare(client, "t-committed", primaryKey, List.of(0, 1));
            prepare(client, "t-committed", other, List.of(0, 1));
            Result decided = RatchetClient.await(client.submitAsync(Request.of(List.of(new Command.Settle("t-committed", Step.COMMIT))))).get(0);
            assertEquals(Record.COMMITTED, ((Result.TxnState) decided).record());
            assertEquals(p.index(), client.get(primaryKey).orElseThrow().index(), "the primary applied with its decision");

            // The other group still holds its intent: a read waits for recovery to settle it, and sees the write.
            Item read = client.get(other).orElseThrow();
            assertEquals("\"t-committed\"", read.value());
            assertEquals(2, client.getAll(List.of(primaryKey, other)).size());
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertEquals(new Result.TxnState("t-committed", Record.NONE, 0, 0),
                    cluster.txnOn(cluster.awaitLeader(0), 0, "t-committed"), "the record is forgotten once settled everywhere"));
            assertEquals(new Result.TxnState("t-committed", Record.NONE, 0, 0), cluster.txnOn(cluster.awaitLeader(1), 1, "t-committed"));
        }
    }

    @Test
    void aCoordinatorGoneBeforeItsCommitIsAbortedWhenItsLeaseRunsOutAndAWriterThenGoesAhead() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withGroups(GROUPS))) {
            RatchetClient client = cluster.client();
            assertEquals(GROUPS, client.groups());
            String primaryKey = keyInGroup("stuck/", 0);
            String other = keyInGroup("stuck/", 3);
            String unrelated = keyInGroup("free/", 3);
            assertTrue(client.put(unrelated, 1, 0).successful());
            prepare(client, "t-pending", primaryKey, List.of(0, 3));
            prepare(client, "t-pending", other, List.of(0, 3));
            long started = System.nanoTime();
            // A get of the held key waits; a get of a free key of the same group, by the same client and so on
            // the same batched path, does not wait behind it (a batch answers a held key's get as locked, and
            // that get is asked again alone, where it waits).
            CompletableFuture<Boolean> heldRead = client.getAsync(other).thenApply(Optional::isPresent);
            assertEquals("1", client.get(unrelated).orElseThrow().value());
            assertFalse(heldRead.isDone(), "the held key's read still waits for the transaction to be settled");
            // A create-only put of a held key waits (refused as held, sent again) until the abort frees it.
            CompletableFuture<Boolean> writer = client.putAsync(other, "writer", 0).thenApply(r -> r.successful());
            assertTrue(writer.get(), "the writer's create-only put applied once the aborted intent was dropped");
            long waitedMillis = (System.nanoTime() - started) / 1_000_000;
            assertTrue(waitedMillis >= 3_000, "held until the 5 s lease ran out, not dropped early: " + waitedMillis + " ms");
            heldRead.get(); // answered once the key was settled (its value then depends on the writer's race)
            assertTrue(client.get(primaryKey).isEmpty(), "the aborted transaction wrote nothing in its primary");
            assertEquals("\"writer\"", client.get(other).orElseThrow().value());
        }
    }

    /** A coordinator's prepare by hand: {@code key} (put to the transaction's id) in its group, primary group 0. */
    private static Result.TxnState prepare(RatchetClient client, String txn, String key, List<Integer> groups) {
        boolean primary = Groups.of(key, GROUPS) == 0;
        Command.Prepare p = new Command.Prepare(txn, 0, groups, 5_000, primary,
                List.of(new Command.Put(key, "\"" + txn + "\"", 0, null)));
        return assertInstanceOf(Result.TxnState.class, RatchetClient.await(client.submitAsync(Request.of(List.of(p)))).get(0));
    }

    private static String keyInGroup(String prefix, int group) {
        return LocalCluster.keyInGroup(prefix, group, GROUPS);
    }
}
