package io.ratchet.spring.integration;

import static io.ratchet.testing.InProcessCluster.N1;
import static io.ratchet.testing.InProcessCluster.N2;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.testing.InProcessCluster;
import io.ratchet.testing.InProcessClusterExtension;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Spring's {@code LockRegistryLeaderInitiator} over two registries (two processes) on {@link InProcessCluster}:
 * cluster time is the test's to move, so a leader that stops renewing loses leadership only when the test
 * says its lease ran out.
 */
@ExtendWith(InProcessClusterExtension.class)
@Timeout(60)
class LeaderInitiatorTest {
    private static final Duration TTL = Duration.ofSeconds(2);
    private static final Duration HEART_BEAT = Duration.ofMillis(100);
    private static final String ITEM = "locks/spring/" + Election.ROLE;

    private InProcessCluster cluster;
    private Election election;

    @BeforeEach
    void start(InProcessCluster cluster) {
        this.cluster = cluster;
        election = new Election();
    }

    @AfterEach
    void stop() {
        election.close();
        assertTrue(election.mostAtOnce() <= 1, "two leaders at once");
    }

    private RatchetLockRegistry registry(String owner, RatchetClient client) {
        return new RatchetLockRegistry(new Locks(client, new LockOptions(owner, Duration.ofMinutes(1))), TTL);
    }

    private Item item() {
        return cluster.item(ITEM).orElseThrow(() -> new AssertionError("nobody holds " + ITEM));
    }

    @Test
    void exactlyOneOfTwoInitiatorsIsGrantedAndTheOtherTakesOverWhenItStops() {
        Election.Member a = election.join("a", registry("a", cluster.client()), HEART_BEAT);
        Election.Member b = election.join("b", registry("b", cluster.client()), HEART_BEAT);

        Election.Member leader = election.awaitOneLeader(Duration.ofSeconds(10));
        Election.Member follower = leader == a ? b : a;
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> election.leading().equals(List.of(leader)));
        assertEquals(1, leader.granted.get());
        assertEquals(1, leader.grantedEvents(), "an OnGrantedEvent from the leader's initiator");
        assertEquals(0, follower.granted.get());
        assertEquals(0, follower.grantedEvents());
        assertTrue(leader.initiator.getContext().isLeader());
        assertFalse(follower.initiator.getContext().isLeader());
        assertTrue(item().value().contains("\"" + leader.id + "\""));

        leader.stop();

        await().atMost(Duration.ofSeconds(10)).until(() -> election.leading().equals(List.of(follower)));
        assertEquals(1, leader.revoked.get());
        assertEquals(1, leader.revokedEvents(), "an OnRevokedEvent from the stopped initiator");
        assertEquals(1, follower.grantedEvents());
        assertTrue(item().value().contains("\"" + follower.id + "\""));
        assertEquals(1, election.mostAtOnce());
    }

    @Test
    void theLeadersHeartbeatRenewsItsLeaseSoItLeadsLongPastTheTtl() {
        Election.Member a = election.join("a", registry("a", cluster.client()), HEART_BEAT);
        election.awaitOneLeader(Duration.ofSeconds(10));
        Election.Member b = election.join("b", registry("b", cluster.client()), HEART_BEAT);
        Election.Member leader = election.leading().get(0);
        long token = item().createdIndex();

        for (int i = 0; i < 5; i++) { // 7.5 s of cluster time: over three times the ttl
            cluster.advance(Duration.ofMillis(1500));
            // The next heartbeat's re-entrant tryLock renews the lease from the new cluster time.
            await().atMost(Duration.ofSeconds(5)).until(() -> item().expiresAt() >= cluster.now() + TTL.toMillis());
        }

        assertEquals(List.of(leader), election.leading());
        assertEquals(a, leader);
        assertEquals(token, item().createdIndex(), "one lease all along, renewed");
        assertEquals(0, b.granted.get());
        assertEquals(1, leader.granted.get());
    }

    @Test
    void aLeaderCutOffFromTheClusterRevokesOnItsOwnClockBeforeTheOtherIsGranted() {
        // a reaches only N1; b all three. N1 leads until a is cut off.
        Election.Member a = election.join("a", registry("a", cluster.client(InProcessCluster.options(N1))), HEART_BEAT);
        election.awaitOneLeader(Duration.ofSeconds(10));
        Election.Member b = election.join("b", registry("b", cluster.client()), HEART_BEAT);
        assertEquals(List.of(a), election.leading());

        cluster.down(N1); // first: a's client never hears of another node
        cluster.leader(N2);

        // a cannot renew: once its lease's time is up on its own clock, it gives up leadership.
        await().atMost(Duration.ofSeconds(10)).until(() -> !a.isLeading());
        assertEquals(1, a.revoked.get());
        // b cannot have it while the lease runs in cluster time, which the test holds still.
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> !b.isLeading());

        cluster.advance(TTL.plusMillis(1));

        await().atMost(Duration.ofSeconds(10)).until(b::isLeading);
        assertTrue(item().value().contains("\"b\""));
        assertEquals(1, election.mostAtOnce());
        cluster.up(N1);
        Election.Member leader = election.awaitOneLeader(Duration.ofSeconds(10));
        assertNotSame(a, leader);
    }
}
