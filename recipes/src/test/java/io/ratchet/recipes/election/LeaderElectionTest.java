package io.ratchet.recipes.election;

import static io.ratchet.testing.InProcessCluster.N1;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.testing.InProcessCluster;
import io.ratchet.testing.InProcessClusterExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Leader election against {@link InProcessCluster}: leases judged on its manual clock, so a leader's lease
 * runs out when the test advances that clock, while each candidate judges its own leadership on the real
 * monotonic clock, as it would in production.
 */
@Timeout(30)
@ExtendWith(InProcessClusterExtension.class)
class LeaderElectionTest {
    /** Long enough that no leader renews (a third of it) during a test that does not mean it to. */
    private static final Duration LEASE = Duration.ofSeconds(60);

    private InProcessCluster cluster;
    private final List<LeaderElection> candidates = new ArrayList<>();

    @BeforeEach
    void start(InProcessCluster cluster) {
        this.cluster = cluster;
    }

    @AfterEach
    void stop() {
        candidates.forEach(LeaderElection::close);
    }

    /** A candidate of its own owner, over a client (and so a session) of its own. */
    private LeaderElection candidate(String owner, Duration lease, RatchetClient client) {
        LeaderElection c = new LeaderElection(client, "scheduler", lease, new LockOptions(owner, Duration.ofMinutes(5)));
        candidates.add(c);
        return c;
    }

    private LeaderElection candidate(String owner, Duration lease) {
        return candidate(owner, lease, cluster.client(InProcessCluster.options(N1)));
    }

    /** The listener's events, as "+term" for a gain and "-term" for a loss. */
    private static List<String> events(LeaderElection candidate) {
        List<String> events = new CopyOnWriteArrayList<>();
        candidate.addListener(new LeadershipListener() {
            @Override
            public void isLeader(long term) {
                events.add("+" + term);
            }

            @Override
            public void notLeader(long term) {
                events.add("-" + term);
            }
        });
        return events;
    }

    private long leaders() {
        return candidates.stream().filter(LeaderElection::isLeader).count();
    }

    @Test
    void oneOfThreeCandidatesLeadsAndEveryoneSeesWhich() {
        List<LeaderElection> three = List.of(candidate("a", LEASE), candidate("b", LEASE), candidate("c", LEASE));
        three.forEach(LeaderElection::start);

        await().atMost(Duration.ofSeconds(5)).until(() -> leaders() == 1);
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> leaders() == 1);

        LeaderElection leader = three.stream().filter(LeaderElection::isLeader).findFirst().orElseThrow();
        long term = leader.term();
        assertTrue(term > 0);
        assertEquals(term, leader.leadershipAsync().join(), "the future of a leading candidate has its term");
        for (LeaderElection c : three) {
            assertEquals(Optional.of(new Leader("scheduler", leader.owner(), term)), c.leader(), c.owner() + "'s view");
            if (c != leader) {
                assertEquals(0, c.term());
                assertFalse(c.leadershipAsync().isDone());
            }
        }
    }

    @Test
    void aResigningLeaderHandsOverAtOnceToTheNextWithAHigherTerm() throws InterruptedException {
        LeaderElection first = candidate("first", LEASE);
        List<String> firstEvents = events(first);
        first.start();
        assertTrue(first.await(Duration.ofSeconds(5)));
        long term = first.term();
        LeaderElection second = candidate("second", LEASE);
        List<String> secondEvents = events(second);
        second.start();
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.pendingWatches() >= 1);
        assertFalse(second.isLeader(), "one leader at a time");

        first.resign();

        assertFalse(first.isLeader());
        assertTrue(second.await(Duration.ofSeconds(5)), "the lock was released: nobody waits for the lease");
        assertTrue(second.term() > term, "terms rise: " + second.term() + " after " + term);
        await().atMost(Duration.ofSeconds(2)).until(() -> firstEvents.size() == 2 && secondEvents.size() == 1);
        assertEquals(List.of("+" + term, "-" + term), firstEvents);
        assertEquals(List.of("+" + second.term()), secondEvents);
        assertEquals("second", second.leader().orElseThrow().owner());
        assertFalse(first.isLeader(), "a resigned candidate campaigns no more");
    }

    @Test
    void aLeaderThatCannotRenewStopsClaimingLeadershipBeforeItsLeaseEndsAndAnotherTakesOver() {
        Duration lease = Duration.ofMillis(900);
        RatchetClient stalled = cluster.client(InProcessCluster.options(N1));
        LeaderElection leader = candidate("stalled", lease, stalled);
        List<String> events = events(leader);
        leader.start();
        await().atMost(Duration.ofSeconds(5)).until(leader::isLeader);
        long term = leader.term();
        LeaderElection next = candidate("next", lease);
        next.start();

        long cutOff = System.nanoTime();
        stalled.close(); // from here on no renewal of the leader's gets through
        AtomicLong lastClaimed = new AtomicLong(cutOff);
        await().pollInterval(Duration.ofMillis(2)).atMost(Duration.ofSeconds(5)).until(() -> {
            if (leader.isLeader()) {
                lastClaimed.set(System.nanoTime());
            }
            return events.contains("-" + term);
        });

        assertTrue(lastClaimed.get() - cutOff < lease.toNanos(), "claimed leadership "
                + (lastClaimed.get() - cutOff) / 1_000_000 + " ms after its last renewal could have been sent");
        assertFalse(leader.isLeader());
        assertFalse(next.isLeader(), "the cluster still counts the old lease");

        cluster.advance(lease); // on cluster time, the stalled leader's lease ends now

        await().atMost(Duration.ofSeconds(10)).until(next::isLeader);
        assertTrue(next.term() > term, "terms rise: " + next.term() + " after " + term);
    }
}
