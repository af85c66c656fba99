package io.ratchet.recipes.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.RatchetClient;
import io.ratchet.node.LocalCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An acquire or renewal whose answer comes back after the lease it asked for may carry a lease that is
 * already over (after a leader change a retried request can bring back an answer committed seconds
 * earlier, when a later holder may have the lock). {@link Locks} must give such a grant back instead of
 * returning it. The answers here are real, from a real cluster; only the clock that times them runs
 * fast, so that "late" is certain rather than a race.
 */
class LateAnswerTest {
    private static final Duration LEASE = Duration.ofSeconds(30);

    @TempDir
    static Path dir;
    static LocalCluster cluster;
    static RatchetClient client;

    @BeforeAll
    static void start() {
        cluster = LocalCluster.start(3, dir);
        client = cluster.client();
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** A clock that moves {@code step} on every reading: each answer is read {@code step} after its request was sent. */
    private static LongSupplier answersTaking(Duration step) {
        AtomicLong now = new AtomicLong();
        return () -> now.addAndGet(step.toNanos());
    }

    @Test
    void aGrantAnsweredAfterItsLeaseIsGivenBackAndNotReturned() {
        Locks late = new Locks(client, LockOptions.defaults(), answersTaking(LEASE));

        assertEquals(Optional.empty(), late.tryAcquire("late-grant", LEASE));
        assertEquals(Optional.empty(), new Locks(client).holder("late-grant"), "the grant was given back");
        assertTrue(new Locks(client).tryAcquire("late-grant", LEASE).isPresent(), "the next owner gets the lock at once");
    }

    @Test
    void aGrantAnsweredJustWithinItsLeaseIsReturned() {
        Locks slow = new Locks(client, LockOptions.defaults(), answersTaking(LEASE.minusMillis(1)));

        Lease held = slow.tryAcquire("in-time-grant", LEASE).orElseThrow();
        assertEquals(slow.owner(), new Locks(client).holder("in-time-grant").orElseThrow().owner());
        slow.release(held);
    }

    @Test
    void aWaitingAcquireWhoseOnlyGrantCameLateGivesUpAtItsDeadlineWithTheLockFree() {
        Locks late = new Locks(client, LockOptions.defaults(), answersTaking(LEASE));

        assertEquals(Optional.empty(), late.acquire("late-waiter", LEASE, Duration.ofSeconds(1)));
        assertEquals(Optional.empty(), new Locks(client).holder("late-waiter"));
    }

    @Test
    void aRenewalAnsweredAfterTheLeaseItAskedForThrowsAndGivesTheLockBack() {
        // Every answer is read one second after its request: in time for a 30 s lease, late for a 1 s one.
        Locks holder = new Locks(client, LockOptions.defaults(), answersTaking(Duration.ofSeconds(1)));
        Lease held = holder.tryAcquire("late-renewal", LEASE).orElseThrow();

        LeaseLostException lost = assertThrows(LeaseLostException.class, () -> holder.renew(held, Duration.ofSeconds(1)));
        assertEquals(held.currentIndex(), lost.index());
        assertTrue(lost.getMessage().contains("not answered within the 1000 ms lease"), lost.getMessage());
        assertEquals(Optional.empty(), new Locks(client).holder("late-renewal"), "the renewed lease was given back");
    }
}
