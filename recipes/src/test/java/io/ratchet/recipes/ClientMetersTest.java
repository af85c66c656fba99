package io.ratchet.recipes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.micrometer.RatchetClientMetrics;
import io.ratchet.recipes.lock.Lease;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.testing.InProcessCluster;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A service's view of its client in Micrometer: what it did, how it ended, what it holds. */
@Timeout(10)
class ClientMetersTest extends OnInProcessCluster {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @BeforeEach
    void bind() {
        new RatchetClientMetrics(client).bindTo(registry);
    }

    @Test
    void aReservationAndItsLosingTwinAreTimedAsAppliedAndConditionFailed() {
        client.put("emails/ada@example.com", "user-1", 0);
        client.put("emails/ada@example.com", "user-2", 0);
        client.get("emails/ada@example.com");

        assertEquals(1, timer("put", "applied"));
        assertEquals(1, timer("put", "condition_failed"));
        assertEquals(1, timer("get", "ok"));
        assertEquals(1.0, registry.get("ratchet.client.sessions.opened").functionCounter().count(), "one session for every write");
    }

    @Test
    void aLeaderChangeIsFollowedAndCountedWithTheResendItTook() {
        RatchetClient roaming = cluster.client(InProcessCluster.options(InProcessCluster.N1, InProcessCluster.N2,
                InProcessCluster.N3));
        SimpleMeterRegistry own = new SimpleMeterRegistry();
        new RatchetClientMetrics(roaming).bindTo(own);
        roaming.put("k", 1, 0);
        cluster.leader(InProcessCluster.N2);
        roaming.put("k2", 1, 0);

        assertTrue(own.get("ratchet.client.leader.changes").functionCounter().count() >= 1, "the new leader was followed");
        assertTrue(own.get("ratchet.client.resends").functionCounter().count() >= 1, "the refused write went again");
        assertEquals(2, own.get("ratchet.client.requests").tags("operation", "put", "outcome", "applied").timer().count());
    }

    @Test
    void aLockIsHeldFromItsGrantToItsReleaseAndItsWaitIsTimed() {
        Locks alice = new Locks(client, new LockOptions("alice", Duration.ofMinutes(1)));
        Locks bob = new Locks(client, new LockOptions("bob", Duration.ofMinutes(1)));
        Lease lease = alice.tryAcquire("report", Duration.ofSeconds(30)).orElseThrow();
        assertEquals(1.0, registry.get("ratchet.client.locks.held").gauge().value());
        assertTrue(bob.tryAcquire("report", Duration.ofSeconds(30)).isEmpty());

        alice.release(lease);
        assertEquals(0.0, registry.get("ratchet.client.locks.held").gauge().value());
        assertEquals(1, registry.get("ratchet.client.lock.wait").tags("kind", "lock", "outcome", "acquired").timer().count());
        assertEquals(1, registry.get("ratchet.client.lock.wait").tags("kind", "lock", "outcome", "timeout").timer().count());
    }

    private long timer(String operation, String outcome) {
        return registry.get("ratchet.client.requests").tags("operation", operation, "outcome", outcome).timer().count();
    }
}
