package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.WatchResult;
import io.ratchet.recipes.lock.Lease;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Item;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Leased locks, watches and expiry on a real three-node cluster. Every node runs in this JVM, so the
 * leaders' clocks (cluster time) and the test's clock are one clock: the bounds below check the
 * recipe and the sweeper, not clock skew. Tests that do not stop nodes share one cluster; each uses
 * its own keys.
 */
class LockClusterTest extends SharedClusterTest {

    /** One hold of the lock, on the test's clock: from the moment acquire returned to the moment release was sent. */
    record Hold(String owner, long token, long startNanos, long endNanos) {
    }

    @Test
    void twelveContendersTakeTurnsWithoutOverlapAndWithRisingFencingTokens() throws Exception {
        int contenders = 12;
        int rounds = 4;
        // Long enough that no holder (each holds for a couple of round trips) is ever taken over by expiry.
        Duration lease = Duration.ofSeconds(30);
        List<RatchetClient> clients = List.of(cluster.client(), cluster.client(), cluster.client());
        FencedResource printer = new FencedResource();
        List<Hold> holds = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(contenders);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int i = 0; i < contenders; i++) {
                Locks locks = new Locks(clients.get(i % clients.size()));
                workers.add(pool.submit(() -> {
                    go.await();
                    for (int round = 0; round < rounds; round++) {
                        Lease held = locks.acquire("printer-3", lease, Duration.ofSeconds(90))
                                .orElseThrow(() -> new AssertionError(locks.owner() + " waited 90 s in vain"));
                        long start = System.nanoTime();
                        assertTrue(printer.enter(locks.owner(), held.fencingToken()), "a current holder is never refused");
                        Lease renewed = locks.renew(held);
                        assertEquals(held.fencingToken(), renewed.fencingToken(), "renewal keeps the token");
                        assertTrue(printer.write(locks.owner(), renewed.fencingToken()), "a current holder is never refused");
                        printer.leave(locks.owner());
                        holds.add(new Hold(locks.owner(), held.fencingToken(), start, System.nanoTime()));
                        locks.release(renewed);
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> worker : workers) {
                worker.get(3, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }

        assertEquals(contenders * rounds, holds.size());
        assertEquals(List.of(), printer.overlaps(), "no two holders inside the resource at once");
        assertEquals(List.of(), printer.rejected(), "no write of a current holder was refused");
        List<Hold> inOrder = new ArrayList<>(holds);
        inOrder.sort(Comparator.comparingLong(Hold::startNanos));
        for (int i = 1; i < inOrder.size(); i++) {
            Hold before = inOrder.get(i - 1);
            Hold after = inOrder.get(i);
            assertTrue(after.startNanos() > before.endNanos(), "holds overlap on the test's clock: " + before + " and " + after);
            assertTrue(after.token() > before.token(), "tokens strictly increase from holder to holder: " + before + " then " + after);
        }
        assertTrue(cluster.client().get(Locks.key("printer-3")).isEmpty(), "the last holder released it");
    }

    @Test
    void aStalledHolderLosesTheLockToAWaiterWithinLeasePlusTwoSecondsAndItsLateWriteIsFenced() {
        Duration lease = Duration.ofSeconds(3);
        Locks stalled = new Locks(cluster.client());
        Locks waiter = new Locks(cluster.client());
        FencedResource printer = new FencedResource();

        Lease first = stalled.tryAcquire("printer-9", lease).orElseThrow();
        assertTrue(printer.write(stalled.owner(), first.fencingToken()));
        long lastRenewalSent = System.nanoTime();
        Lease renewed = stalled.renew(first);
        assertEquals(first.fencingToken(), renewed.fencingToken());
        assertTrue(renewed.currentIndex() > first.currentIndex());
        assertTrue(renewed.expiresAt().isAfter(first.expiresAt()));
        // Now the holder stalls (a long GC pause, say) and renews no more.

        Lease taken = waiter.acquire("printer-9", lease, Duration.ofSeconds(20)).orElseThrow();
        long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastRenewalSent);
        assertTrue(waitedMillis <= lease.toMillis() + 2_000, "the waiter got the lock " + waitedMillis + " ms after the last renewal");
        assertFalse(taken.expiresAt().minus(lease).isBefore(renewed.expiresAt()),
                "not before the stalled lease ran out, on cluster time: " + taken + " after " + renewed);
        assertTrue(taken.fencingToken() > renewed.fencingToken());
        assertTrue(printer.write(waiter.owner(), taken.fencingToken()));

        // The stalled holder wakes up, still believing it holds the lock.
        assertFalse(printer.write(stalled.owner(), renewed.fencingToken()), "its outdated token is refused");
        LeaseLostException lost = assertThrows(LeaseLostException.class, () -> stalled.renew(renewed));
        assertEquals(waiter.owner(), lost.holder().orElseThrow().owner());
        assertThrows(LeaseLostException.class, () -> stalled.release(renewed));
        waiter.release(taken);
    }

    @Test
    void aLeaseHeldAcrossALeaderChangeIsNeitherLostEarlyNorKeptPastItsExpiry(@TempDir Path ownDir) {
        // Its own cluster, not the shared one: it stops the leader.
        try (LocalCluster own = LocalCluster.start(3, ownDir)) {
            Duration lease = Duration.ofSeconds(10);
            Locks holder = new Locks(own.client());
            Locks rival = new Locks(own.client());
            Lease held = holder.tryAcquire("printer-7", lease).orElseThrow();
            long expiresAt = held.expiresAt().toEpochMilli();

            String oldLeader = own.awaitLeader();
            own.stopNode(oldLeader);
            assertNotEquals(oldLeader, own.awaitLeader());

            // Up to a second before expiry (the slack covers a request in flight at the boundary), the
            // new leader refuses every rival.
            long checkUntil = expiresAt - 1_000;
            assertTrue(checkUntil - System.currentTimeMillis() > 1_000, "the election left time to check");
            List<Lease> stolen = new ArrayList<>();
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).until(() -> {
                rival.tryAcquire("printer-7", lease).ifPresent(stolen::add);
                return System.currentTimeMillis() >= checkUntil;
            });
            assertEquals(List.of(), stolen, "the lease was lost early");

            Lease taken = rival.acquire("printer-7", lease, Duration.ofSeconds(30)).orElseThrow();
            long takenAt = System.currentTimeMillis();
            assertTrue(takenAt <= expiresAt + 2_000, "the expired lease was kept " + (takenAt - expiresAt) + " ms past its expiry");
            assertFalse(taken.expiresAt().minus(lease).isBefore(held.expiresAt()), "granted before the old lease ran out");
            assertTrue(taken.fencingToken() > held.fencingToken());
            assertThrows(LeaseLostException.class, () -> holder.renew(held));
        }
    }

    @Test
    void aWatcherSeesAPutAndADeleteAndTimesOutWhenNothingChanges() throws Exception {
        RatchetClient client = cluster.client();
        CompareExchangeResult created = client.put("config/flag", "on", 0);

        WatchResult quiet = client.watch("config/flag", created.index(), Duration.ofMillis(500));
        assertFalse(quiet.changed(), "nothing changed after the index: the watch times out");
        assertEquals(created.index(), quiet.lastChange());

        CompletableFuture<WatchResult> onPut = client.watchAsync("config/flag", created.index(), Duration.ofSeconds(30));
        CompareExchangeResult updated = client.put("config/flag", "off", created.index());
        WatchResult put = onPut.get(30, TimeUnit.SECONDS);
        assertTrue(put.changed());
        assertEquals(updated.index(), put.lastChange());
        assertEquals("\"off\"", put.item().orElseThrow().value());

        CompletableFuture<WatchResult> onDelete = client.watchAsync("config/flag", updated.index(), Duration.ofSeconds(30));
        assertTrue(client.delete("config/flag", updated.index()).successful());
        WatchResult deleted = onDelete.get(30, TimeUnit.SECONDS);
        assertTrue(deleted.changed(), "a delete wakes the watcher too");
        assertTrue(deleted.lastChange() > updated.index());
        assertEquals(Optional.empty(), deleted.item());
    }

    @Test
    void anExpiredItemIsGoneFromEveryNodeWithinTheSweepIntervalPlusOneSecond() {
        RatchetClient client = cluster.client();
        CompareExchangeResult brief = client.write(new Command.Put("sessions/brief", "\"ada\"", 0, null, 1_000, false));
        CompareExchangeResult lasting = client.put("sessions/lasting", "grace", 0);
        long bound = brief.expiresAt() + cluster.config("n1").sweepInterval().toMillis() + 1_000;

        WatchResult gone = client.watch("sessions/brief", brief.index(), Duration.ofSeconds(30));
        long goneAt = System.currentTimeMillis();
        assertTrue(gone.changed() && gone.item().isEmpty(), "the sweep's delete is a change: " + gone);
        assertTrue(goneAt <= bound, "swept " + (goneAt - brief.expiresAt()) + " ms after expiry");
        assertTrue(goneAt >= brief.expiresAt(), "not swept before it expired");
        for (String node : cluster.nodeIds()) {
            await().atMost(Duration.ofSeconds(10)).until(() ->
                    cluster.itemsOn(node).stream().map(Item::key).noneMatch("sessions/brief"::equals));
        }
        assertEquals(lasting.index(), client.get("sessions/lasting").orElseThrow().index(), "an item without expiry stays");
    }

    @Test
    void badLockInputIsRefusedBeforeAnythingIsWritten() {
        RatchetClient client = cluster.client();
        Locks locks = new Locks(client, LockOptions.defaults().withMaxLease(Duration.ofMinutes(5)));
        Duration lease = Duration.ofSeconds(30);
        assertThrows(InvalidRequestException.class, () -> locks.tryAcquire("bad-zero", Duration.ZERO));
        assertThrows(InvalidRequestException.class, () -> locks.tryAcquire("bad-negative", Duration.ofSeconds(-1)));
        assertThrows(InvalidRequestException.class, () -> locks.tryAcquire("bad-long", Duration.ofMinutes(6)));
        assertThrows(InvalidRequestException.class, () -> new Locks(client).tryAcquire("bad-default-max", Duration.ofHours(2)));
        assertThrows(InvalidRequestException.class, () -> locks.tryAcquire("", lease));
        assertThrows(InvalidRequestException.class, () -> locks.tryAcquire("bad-" + "x".repeat(600), lease));
        assertThrows(InvalidRequestException.class, () -> locks.acquire("bad-wait", lease, Duration.ofSeconds(-1)));
        assertThrows(IllegalArgumentException.class, () -> LockOptions.defaults().withMaxLease(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> LockOptions.defaults().withOwner(" "));

        Lease held = locks.tryAcquire("bad-input", lease).orElseThrow();
        long stale = held.currentIndex() + 1_000;
        LeaseLostException lost = assertThrows(LeaseLostException.class, () -> locks.renew("bad-input", stale, lease));
        assertEquals(held.currentIndex(), lost.holder().orElseThrow().index(), "the error names where the lock really is");
        assertThrows(LeaseLostException.class, () -> locks.release("bad-input", stale));
        assertThrows(InvalidRequestException.class, () -> locks.release("bad-input", 0));
        assertThrows(InvalidRequestException.class, () -> locks.renew(held, Duration.ofMinutes(6)));

        assertEquals(List.of(Locks.key("bad-input")), client.list("locks/bad", 0, 100).stream().map(Item::key).toList(),
                "only the one good acquire wrote anything");
        assertTrue(client.get("locks/").isEmpty());
        assertEquals(held.currentIndex(), client.get(Locks.key("bad-input")).orElseThrow().index());
        locks.release(locks.renew(held));
    }
}
