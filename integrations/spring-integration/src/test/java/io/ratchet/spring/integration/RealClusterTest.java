package io.ratchet.spring.integration;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.node.LocalCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The registry, the metadata store and Spring's leader initiator on a real three-node cluster in this JVM
 * (Ratis nodes on disk), one cluster for the class: each test uses keys of its own, and the test that stops
 * a node starts it again. Cluster time is the nodes' clocks, the test's clock too.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class RealClusterTest {
    /** Short, so that a lapsed lease frees the lock quickly; well above the heartbeat and an election. */
    private static final Duration TTL = Duration.ofSeconds(3);
    private static final Duration HEART_BEAT = Duration.ofMillis(200);

    private LocalCluster cluster;

    @BeforeAll
    void start(@TempDir Path dir) {
        cluster = LocalCluster.start(3, dir);
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void leadershipOutlivesAKillOfTheRatisLeaderWithNeverTwoLeadersAtOnceAndPassesWhenTheLeaderStops() {
        Election election = new Election();
        String stopped = null;
        try {
            Election.Member a = election.join("a", new RatchetLockRegistry(cluster.client(), TTL), HEART_BEAT);
            Election.Member b = election.join("b", new RatchetLockRegistry(cluster.client(), TTL), HEART_BEAT);
            Election.Member first = election.awaitOneLeader(Duration.ofSeconds(20));
            // The heartbeat's re-entrant tryLock renews the lease: one leader all along, past the ttl.
            await().during(TTL.plusMillis(500)).atMost(TTL.plusSeconds(5)).until(() -> election.leading().equals(List.of(first)));
            assertEquals(1, first.granted.get());

            stopped = cluster.awaitLeader();
            cluster.stopNode(stopped);
            cluster.awaitLeader();

            // The leader kept its lease through the election, or lost it and one of the two took it after its ttl.
            Election.Member leader = election.awaitOneLeader(Duration.ofSeconds(30));
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10)).until(() -> election.leading().equals(List.of(leader)));
            assertEquals(1, election.mostAtOnce(), "never two leaders at once: " + a + "; " + b);

            Election.Member follower = leader == a ? b : a;
            int grantedBefore = follower.granted.get();
            long revokedEventsBefore = leader.revokedEvents();
            leader.stop();
            await().atMost(Duration.ofSeconds(15)).until(() -> election.leading().equals(List.of(follower)));
            assertEquals(grantedBefore + 1, follower.granted.get(), "the other initiator is granted leadership");
            assertEquals(revokedEventsBefore + 1, leader.revokedEvents(), "the stopped one's leadership is revoked");
            assertEquals(1, election.mostAtOnce(), "never two leaders at once: " + a + "; " + b);
        } finally {
            election.close();
            if (stopped != null) {
                cluster.startNode(stopped);
            }
        }
        assertTrue(election.mostAtOnce() <= 1);
    }

    @Test
    void twoRegistriesExcludeEachOtherAndEachGrantHasAGreaterToken() throws Exception {
        RatchetLockRegistry alice = new RatchetLockRegistry(cluster.client(), TTL);
        RatchetLockRegistry bob = new RatchetLockRegistry(cluster.client(), TTL);
        ExecutorService bobs = Executors.newSingleThreadExecutor();
        try {
            RatchetLock lock = alice.obtain("printer");
            lock.lock();
            long token = lock.fencingToken();
            assertFalse(bobs.submit(() -> bob.obtain("printer").tryLock(300, TimeUnit.MILLISECONDS)).get(10, TimeUnit.SECONDS));

            var waiting = bobs.submit(() -> {
                RatchetLock mine = bob.obtain("printer");
                if (!mine.tryLock(10, TimeUnit.SECONDS)) {
                    return -1L;
                }
                try {
                    return mine.fencingToken();
                } finally {
                    mine.unlock();
                }
            });
            lock.unlock();
            assertTrue(waiting.get(15, TimeUnit.SECONDS) > token, "bob got it after alice released, with a greater token");
        } finally {
            bobs.shutdownNow();
        }
    }

    @Test
    void ofConcurrentReplacesFromOneValueExactlyOneWins() throws Exception {
        RatchetMetadataStoreTest.replaceRace(new RatchetMetadataStore(cluster.client()),
                () -> new RatchetMetadataStore(cluster.client()), 6);
    }
}
