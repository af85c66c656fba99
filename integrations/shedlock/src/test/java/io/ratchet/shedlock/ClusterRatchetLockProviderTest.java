package io.ratchet.shedlock;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.RatchetClient;
import io.ratchet.node.LocalCluster;
import io.ratchet.recipes.lock.Lease;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The provider contract on a real three-node cluster in this JVM (one for the whole class; each test uses
 * its own lock names), and a leader kill while a lock is held. Cluster time is the leaders' wall clock,
 * which here is this JVM's, so leases are short and tests wait for them to run out.
 */
@Timeout(120)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterRatchetLockProviderTest extends RatchetLockProviderContract {
    private static final Duration SHORT = Duration.ofSeconds(2);
    /** Covers a request in flight at the lease's end, and a sweep. */
    private static final Duration SLACK = Duration.ofMillis(300);

    private LocalCluster cluster;

    @BeforeAll
    void startCluster(@TempDir Path dir) {
        cluster = LocalCluster.start(3, dir);
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Override
    RatchetClient newClient() {
        return cluster.client();
    }

    @Override
    Duration shortLease() {
        return SHORT;
    }

    @Override
    int winsPerThread() {
        return 2;
    }

    @Override
    RatchetSimpleLock assertHeldForThenTaken(String name, long sinceNanos, Duration held) {
        long heldUntil = sinceNanos + held.toNanos();
        long checkUntil = heldUntil - SLACK.toNanos();
        List<SimpleLock> stolen = Collections.synchronizedList(new ArrayList<>());
        await().atMost(held.plusSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() -> {
            tryLock(other, name).ifPresent(stolen::add);
            return System.nanoTime() - checkUntil >= 0;
        });
        assertEquals(List.of(), stolen, "taken before " + held + " had passed");
        RatchetSimpleLock taken = (RatchetSimpleLock) await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                .until(() -> tryLock(other, name), Optional::isPresent).orElseThrow();
        long lateMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - heldUntil);
        assertTrue(lateMillis < 3_000, "still held " + lateMillis + " ms after " + held + " had passed");
        return taken;
    }

    @Override
    void letRunOut(Lease lease) {
        long after = lease.expiresAt().toEpochMilli() + SLACK.toMillis();
        await().atMost(lease.duration().plusSeconds(10)).pollInterval(Duration.ofMillis(50))
                .until(() -> System.currentTimeMillis() > after);
    }

    @Test
    void aLockSurvivesALeaderKillAndIsUnlockedOnTheNewLeader() {
        String name = name();
        RatchetSimpleLock held = lock(provider, name, LONG, Duration.ZERO);
        String leader = cluster.awaitLeader();
        cluster.stopNode(leader);
        try {
            assertNotEquals(leader, cluster.awaitLeader());

            assertEquals(Optional.empty(), tryLock(other, name), "still held after the failover");
            held.unlock();
            assertTrue(provider.locks().holder(name).isEmpty(), "released on the new leader");
            RatchetSimpleLock next = lock(other, name, LONG, Duration.ZERO);
            assertTrue(next.fencingToken() > held.fencingToken(), "the next holder's token is greater");
            next.unlock();
        } finally {
            cluster.startNode(leader);
            cluster.awaitLeader();
        }
    }
}
