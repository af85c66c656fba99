package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.AddResult;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.client.UnsupportedCommandException;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import io.ratchet.recipes.counter.ShardedCounter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The commutative add on a real cluster: a hot counter without a retry loop, and the rolling upgrade's gate. */
class AddClusterTest {
    @TempDir
    Path dir;

    @Test
    void eightThreadsAdding500EachSumTo4000ExactlyThoughTheLeaderIsKilledHalfWay() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            // Every node has heard which commands the others apply before one is killed: a node that leads
            // without having heard from a member that is down refuses adds, as it should (it cannot know that
            // member's release), and that is not this test's story.
            for (String id : List.of("n1", "n2", "n3")) {
                RatchetNode node = cluster.node(id);
                await().atMost(Duration.ofSeconds(30)).until(() ->
                        node.commandSupport().lackingNow(Command.Kind.ADD, node.groupId()) == null);
            }
            RatchetClient client = cluster.client();
            int threads = 8;
            int adds = 500;
            CountDownLatch halfWay = new CountDownLatch(threads * adds / 2);
            ConcurrentHashMap<Long, Boolean> indexes = new ConcurrentHashMap<>();
            AtomicInteger resent = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int thread = t;
                    done.add(pool.submit(() -> {
                        for (int i = 0; i < adds; i++) {
                            // Each add carries a key of its own: an add whose answer was lost in the kill is sent
                            // again under it, and the cluster answers the first outcome instead of adding twice.
                            String once = "hits-" + thread + "-" + i;
                            while (true) {
                                try {
                                    AddResult r = client.add("counters/hits", 1, once, Duration.ofMinutes(5));
                                    indexes.putIfAbsent(r.index(), true);
                                    break;
                                } catch (UnknownOutcomeException | ClusterUnavailableException e) {
                                    resent.incrementAndGet();
                                }
                            }
                            halfWay.countDown();
                        }
                        return null;
                    }));
                }
                while (!halfWay.await(100, TimeUnit.MILLISECONDS)) {
                    for (Future<?> f : done) {
                        if (f.isDone()) {
                            f.get(); // a thread that ended early: its failure
                        }
                    }
                }
                cluster.stopNode(cluster.awaitLeader());
                for (Future<?> f : done) {
                    f.get(120, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            assertEquals("4000", client.get("counters/hits").orElseThrow().value(),
                    "every add counted once (" + resent.get() + " sent again after a lost answer)");
            assertTrue(indexes.size() > 1, "adds landed at many indexes, none refused for a moved one");
        }
    }

    @Test
    void aShardedCounterOverTwoGroupsSumsEveryAddOfFourThreads() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withGroups(2))) {
            RatchetClient client = cluster.client();
            ShardedCounter likes = new ShardedCounter(client, "counters/likes", 8);
            assertEquals(2, Groups.byGroup(likes.keys(), client.groups()).size(), "the shards are in both groups");
            List<CompletableFuture<AddResult>> adds = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                adds.add(likes.addAsync(1));
            }
            adds.forEach(CompletableFuture::join);
            assertEquals(200, likes.sum());
            likes.add(5, "like-batch-1", Duration.ofMinutes(1));
            likes.add(5, "like-batch-1", Duration.ofMinutes(1));
            assertEquals(205, likes.sum(), "a keyed add sent twice counted once");
        }
    }

    @Test
    void anAddIsRefusedWhileAMemberRunsAReleaseWithoutItAndAppliesOnceEveryMemberHasIt() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient client = cluster.client();
            String leader = cluster.awaitLeader();
            String old = cluster.nodeIds().stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
            assertEquals(1, client.add("counters/upgrade", 1).value(), "every member runs this release");

            // A member of the release before: it does not know the question (UNIMPLEMENTED), nor the add.
            cluster.node(old).commandSupport().answerAsEarlierRelease(true);
            awaitTheLeaderKnows(cluster, false);
            UnsupportedCommandException refused = assertThrows(UnsupportedCommandException.class,
                    () -> client.add("counters/upgrade", 1));
            assertTrue(refused.getMessage().contains("member " + old), refused.getMessage());
            assertTrue(refused.code().retrySafe() && refused.code().didNotApply());
            assertEquals("1", client.get("counters/upgrade").orElseThrow().value(), "nothing was written");

            // A request carrying an add and a put is refused whole, before the log: neither applied.
            List<Result> both = client.submitAsync(Request.of(List.of(new Command.Add("counters/mixed", 1),
                    new Command.Put("mixed/put", "1", 0, null)))).join();
            assertEquals(2, both.size());
            both.forEach(r -> assertInstanceOf(Result.Unsupported.class, r));
            assertTrue(client.get("mixed/put").isEmpty());

            // Puts that share a message with another thread's add are sent again alone, and apply.
            List<CompletableFuture<?>> calls = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                calls.add(client.putAsync("shared/" + i, i, 0));
                calls.add(client.addAsync("counters/upgrade", 1).handle((r, e) -> {
                    assertInstanceOf(UnsupportedCommandException.class, e.getCause() == null ? e : e.getCause());
                    return null;
                }));
            }
            CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            assertEquals(40, client.list("shared/", 0, 100).size());

            // Over Ratis' own client protocol the leader's state machine refuses it too.
            RawSender.send(cluster.peers(), Codec.encodeRequests(List.of(Request.of(List.of(new Command.Add("counters/raw", 1))))));
            assertTrue(client.get("counters/raw").isEmpty());

            cluster.node(old).commandSupport().answerAsEarlierRelease(false); // upgraded
            awaitTheLeaderKnows(cluster, true);
            assertEquals(2, client.add("counters/upgrade", 1).value());
        }
    }

    /** Has every node ask the others again (not waiting for its next round) until the leader lets adds pass, or not. */
    private static void awaitTheLeaderKnows(LocalCluster cluster, boolean addsPass) {
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            for (String id : cluster.nodeIds()) {
                cluster.node(id).commandSupport().askAll().get(10, TimeUnit.SECONDS);
            }
            RatchetNode leader = cluster.node(cluster.awaitLeader());
            return (leader.commandSupport().lackingNow(Command.Kind.ADD, leader.groupId()) == null) == addsPass;
        });
    }
}
