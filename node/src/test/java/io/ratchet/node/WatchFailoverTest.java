package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.WatchResult;
import io.ratchet.recipes.lock.Lease;
import io.ratchet.recipes.lock.LockHolder;
import io.ratchet.recipes.lock.Locks;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Watches and waiting lock acquires while the leader they wait on is stopped: the change is reported
 * whether it was committed before, during or after the election, and nothing waits past its time plus
 * {@link RatchetClient#WATCH_SLACK}.
 */
class WatchFailoverTest {
    /** Room for a loaded 2-core machine to schedule the test itself, beyond the promised slack. */
    private static final long TOLERANCE_MILLIS = 2_000;
    private static final Duration WATCH = Duration.ofSeconds(15);

    @TempDir
    Path dir;
    private LocalCluster cluster;

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** A cluster whose client already follows the leader, so the watch goes to the node that is stopped. */
    private RatchetClient start() {
        cluster = LocalCluster.start(3, dir);
        RatchetClient client = cluster.client();
        client.put("failover/warm", 1, 0);
        return client;
    }

    private static long millisSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    private void assertWatchSees(CompletableFuture<WatchResult> watch, long started, long index) {
        WatchResult seen = watch.join();
        assertTrue(seen.changed(), "the watch reports the change: " + seen);
        assertEquals(index, seen.lastChange());
        assertTrue(millisSince(started) <= WATCH.plus(RatchetClient.WATCH_SLACK).toMillis() + TOLERANCE_MILLIS);
    }

    @Test
    void aChangeCommittedJustBeforeTheLeaderStopsIsReported() {
        RatchetClient client = start();
        long index = client.put("failover/k", 1, 0).index();
        long started = System.nanoTime();
        CompletableFuture<WatchResult> watch = client.watchAsync("failover/k", index, WATCH);
        long changed = client.put("failover/k", 2, index).index();
        cluster.stopNode(cluster.awaitLeader());
        assertWatchSees(watch, started, changed);
    }

    @Test
    void aChangeCommittedDuringTheElectionIsReported() {
        RatchetClient client = start();
        RatchetClient writer = cluster.client();
        long index = client.put("failover/k", 1, 0).index();
        long started = System.nanoTime();
        CompletableFuture<WatchResult> watch = client.watchAsync("failover/k", index, WATCH);
        cluster.stopNode(cluster.awaitLeader());
        // Sent while there is no leader: it commits as soon as the new one takes over.
        CompareExchangeResult changed = writer.put("failover/k", 2, index);
        assertTrue(changed.successful());
        assertWatchSees(watch, started, changed.index());
    }

    @Test
    void aChangeCommittedAfterTheElectionIsReported() {
        RatchetClient client = start();
        long index = client.put("failover/k", 1, 0).index();
        long started = System.nanoTime();
        CompletableFuture<WatchResult> watch = client.watchAsync("failover/k", index, WATCH);
        cluster.stopNode(cluster.awaitLeader());
        cluster.awaitLeader();
        CompareExchangeResult changed = cluster.client().put("failover/k", 2, index);
        assertWatchSees(watch, started, changed.index());
    }

    @Test
    void aQuietWatchEndsByItsTimeoutAcrossALeaderStop() {
        RatchetClient client = start();
        long index = client.put("failover/quiet", 1, 0).index();
        Duration timeout = Duration.ofSeconds(4);
        long started = System.nanoTime();
        CompletableFuture<WatchResult> watch = client.watchAsync("failover/quiet", index, timeout);
        cluster.stopNode(cluster.awaitLeader());
        try {
            WatchResult quiet = watch.join();
            assertFalse(quiet.changed(), quiet.toString());
            assertEquals(index, quiet.lastChange());
        } catch (CompletionException e) {
            // No node answered within the slack: said so, on time.
            assertTrue(e.getCause() instanceof ClusterUnavailableException, e.toString());
        }
        long took = millisSince(started);
        assertTrue(took <= timeout.plus(RatchetClient.WATCH_SLACK).toMillis() + TOLERANCE_MILLIS, "took " + took + " ms");
    }

    @Test
    void aWaitingAcquireEndsByItsWaitAcrossALeaderStopAndHoldsNothing() {
        RatchetClient client = start();
        Lease held = new Locks(client).tryAcquire("failover", Duration.ofMinutes(1)).orElseThrow();
        Duration wait = Duration.ofSeconds(4);
        long started = System.nanoTime();
        CompletableFuture<Optional<Lease>> waiting = new Locks(client).acquireAsync("failover", Duration.ofSeconds(30), wait);
        cluster.stopNode(cluster.awaitLeader());
        assertTrue(waiting.join().isEmpty());
        long took = millisSince(started);
        assertTrue(took <= wait.plus(RatchetClient.WATCH_SLACK).toMillis() + TOLERANCE_MILLIS, "took " + took + " ms");
        LockHolder holder = new Locks(cluster.client()).holder("failover").orElseThrow();
        assertEquals(held.fencingToken(), holder.fencingToken());
    }

    @Test
    void aWaitingAcquireGetsALockReleasedAcrossALeaderStop() {
        RatchetClient client = start();
        Lease held = new Locks(client).tryAcquire("failover", Duration.ofMinutes(1)).orElseThrow();
        long started = System.nanoTime();
        Duration wait = Duration.ofSeconds(20);
        CompletableFuture<Optional<Lease>> waiting = new Locks(client).acquireAsync("failover", Duration.ofSeconds(30), wait);
        cluster.stopNode(cluster.awaitLeader());
        new Locks(cluster.client()).release(held);
        Lease next = waiting.join().orElseThrow();
        assertTrue(next.fencingToken() > held.fencingToken());
        assertTrue(millisSince(started) <= wait.toMillis());
    }
}
