package io.ratchet.spring.integration;

import static io.ratchet.testing.InProcessCluster.N1;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.protocol.Item;
import io.ratchet.recipes.lock.Lease;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.testing.InProcessCluster;
import io.ratchet.testing.InProcessClusterExtension;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.dao.CannotAcquireLockException;

/**
 * The lock registry against {@link InProcessCluster}: the real store, leases judged on the cluster's manual
 * clock, so expiry and renewal are tested by advancing that clock, not by sleeping. {@code alice} and
 * {@code bob} are two processes (a registry, a client and an owner id each).
 */
@ExtendWith(InProcessClusterExtension.class)
@Timeout(30)
class RatchetLockRegistryTest {
    private static final Duration TTL = Duration.ofSeconds(10);
    private static final String ITEM = "locks/spring/job";

    private InProcessCluster cluster;
    private RatchetLockRegistry alice;
    private RatchetLockRegistry bob;
    /** Another thread of this test, to hold or wait from (a lock is held by a thread). */
    private ExecutorService other;

    @BeforeEach
    void start(InProcessCluster cluster) {
        this.cluster = cluster;
        alice = registry("alice");
        bob = registry("bob");
        other = Executors.newSingleThreadExecutor();
    }

    @AfterEach
    void stop() {
        other.shutdownNow();
    }

    private RatchetLockRegistry registry(String owner) {
        return new RatchetLockRegistry(new Locks(cluster.client(InProcessCluster.options(N1)),
                new LockOptions(owner, Duration.ofMinutes(1))), TTL);
    }

    private <T> T inOtherThread(Callable<T> call) throws Exception {
        try {
            return other.submit(call).get(20, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        }
    }

    private Item item() {
        return cluster.item(ITEM).orElseThrow(() -> new AssertionError("nobody holds " + ITEM));
    }

    private String holder() {
        return cluster.item(ITEM).map(Item::value).orElse(null);
    }

    // ---- re-entrancy

    @Test
    void aThreadLocksTwiceAndOnlyItsLastUnlockReleasesTheLease() {
        RatchetLock lock = alice.obtain("job");
        lock.lock();
        long token = lock.fencingToken();
        assertEquals(item().createdIndex(), token, "the fencing token is the index of the write that granted the lease");
        assertEquals("{\"owner\":\"alice\"}", item().value());

        assertTrue(lock.tryLock(), "re-entrant");
        assertEquals(2, lock.getHoldCount());

        lock.unlock();
        assertEquals(1, lock.getHoldCount());
        assertEquals(token, item().createdIndex(), "the first unlock of two keeps the lease");
        assertEquals(token, lock.fencingToken());

        lock.unlock();
        assertEquals(0, lock.getHoldCount());
        assertTrue(cluster.item(ITEM).isEmpty(), "the last unlock releases the lease");
        assertFalse(lock.isAcquiredInThisProcess());
    }

    @Test
    void aReentrantLockRenewsTheLeaseSoItOutlivesItsFirstTtl() throws Exception {
        RatchetLock lock = alice.obtain("job");
        lock.lock();
        Lease first = lock.lease().orElseThrow();
        cluster.advance(Duration.ofSeconds(6));

        assertTrue(lock.tryLock(), "re-entry, as LockRegistryLeaderInitiator does on each heartbeat");
        Lease renewed = lock.lease().orElseThrow();
        assertEquals(first.fencingToken(), renewed.fencingToken(), "a renewal keeps the token");
        assertTrue(renewed.currentIndex() > first.currentIndex());
        assertEquals(cluster.now() + TTL.toMillis(), item().expiresAt(), "from the re-entry's cluster time");
        lock.unlock();

        cluster.advance(Duration.ofSeconds(6)); // 12 s after the grant, 6 s after the renewal
        assertFalse(inOtherThread(() -> bob.obtain("job").tryLock()), "still held: the re-entry renewed it");
        assertTrue(lock.isHeldByCurrentThread());
        lock.unlock();
        assertTrue(cluster.item(ITEM).isEmpty());
    }

    // ---- exclusion

    @Test
    void twoThreadsOfOneRegistryExcludeEachOtherLocally() throws Exception {
        RatchetLock lock = alice.obtain("job");
        lock.lock();
        int writes = cluster.writesApplied();

        assertFalse(inOtherThread(() -> alice.obtain("job").tryLock()));
        assertFalse(inOtherThread(() -> alice.obtain("job").tryLock(100, TimeUnit.MILLISECONDS)));
        assertEquals(writes, cluster.writesApplied(), "the local lock turned the other thread away: nothing was sent");
        assertTrue(lock.isAcquiredInThisProcess());

        Future<Long> waiter = other.submit(() -> {
            RatchetLock mine = alice.obtain("job");
            mine.lock();
            try {
                return mine.fencingToken();
            } finally {
                mine.unlock();
            }
        });
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> !waiter.isDone());
        long token = lock.fencingToken();
        lock.unlock();
        assertTrue(waiter.get(10, TimeUnit.SECONDS) > token, "the waiting thread got the lock, with a new lease");
        assertTrue(cluster.item(ITEM).isEmpty());
    }

    @Test
    void twoRegistriesExcludeEachOtherThroughTheCluster() throws Exception {
        RatchetLock lock = alice.obtain("job");
        lock.lock();
        long aliceToken = lock.fencingToken();

        assertFalse(bob.obtain("job").tryLock(), "bob's own thread, bob's own local lock: only the lease refuses him");
        assertFalse(bob.obtain("job").isAcquiredInThisProcess(), "a failed tryLock leaves nothing held");
        assertTrue(holder().contains("alice"));

        lock.unlock();
        RatchetLock bobs = bob.obtain("job");
        assertTrue(bobs.tryLock());
        assertTrue(bobs.fencingToken() > aliceToken, "every later grant has a greater token");
        assertTrue(holder().contains("bob"));
        assertFalse(inOtherThread(() -> alice.obtain("job").tryLock()));
        bobs.unlock();
    }

    @Test
    void unlockFromAThreadThatDoesNotHoldTheLockIsRefused() throws Exception {
        RatchetLock lock = alice.obtain("job");
        assertThrows(IllegalMonitorStateException.class, lock::unlock, "never locked");
        lock.lock();

        assertThrows(IllegalMonitorStateException.class, () -> inOtherThread(() -> {
            alice.obtain("job").unlock();
            return null;
        }));
        assertThrows(IllegalMonitorStateException.class, () -> inOtherThread(() -> alice.obtain("job").fencingToken()));
        assertTrue(inOtherThread(() -> alice.obtain("job").lease().isEmpty()));
        assertThrows(IllegalMonitorStateException.class, () -> inOtherThread(() -> {
            alice.renewLock("job");
            return null;
        }), "renewLock needs the holding thread, as JdbcLockRegistry's");

        assertTrue(lock.isHeldByCurrentThread(), "the refused unlock changed nothing");
        assertTrue(cluster.item(ITEM).isPresent());
        lock.unlock();
    }

    // ---- waiting

    @Test
    void tryLockWithAWaitGetsTheLockWhenTheHolderReleasesMidWait() throws Exception {
        RatchetLock lock = alice.obtain("job");
        lock.lock();
        long started = System.nanoTime();
        Future<Boolean> waiting = other.submit(() -> bob.obtain("job").tryLock(15, TimeUnit.SECONDS));
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> !waiting.isDone());

        lock.unlock();

        assertTrue(waiting.get(10, TimeUnit.SECONDS));
        assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(10), "woken by the release, not by the end of the wait");
        assertTrue(holder().contains("bob"));
        inOtherThread(() -> {
            bob.obtain("job").unlock();
            return null;
        });
    }

    @Test
    void tryLockWithAWaitFailsAfterTheWaitWhenTheHolderKeepsIt() throws Exception {
        RatchetLock lock = alice.obtain("job");
        lock.lock();
        long started = System.nanoTime();

        assertFalse(inOtherThread(() -> bob.obtain("job").tryLock(400, TimeUnit.MILLISECONDS)));

        long waited = System.nanoTime() - started;
        assertTrue(waited >= TimeUnit.MILLISECONDS.toNanos(400), "waited " + waited + " ns");
        assertTrue(holder().contains("alice"));
        assertFalse(bob.obtain("job").isAcquiredInThisProcess());
        lock.unlock();
    }

    @Test
    void anInterruptedWaiterGivesUpAndLeavesNothingBehind() throws Exception {
        RatchetLock lock = alice.obtain("job");
        lock.lock();
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            try {
                bob.obtain("job").lockInterruptibly();
                outcome.complete(null);
            } catch (Throwable t) {
                outcome.complete(t);
            }
        });
        waiter.start();
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> !outcome.isDone());

        waiter.interrupt();

        assertTrue(outcome.get(5, TimeUnit.SECONDS) instanceof InterruptedException, "got " + outcome.join());
        assertFalse(bob.obtain("job").isAcquiredInThisProcess());
        long token = lock.fencingToken();
        lock.unlock();
        // The abandoned wait may still be granted the lock once alice releases it: it is given back at once.
        assertTrue(inOtherThread(() -> alice.obtain("job").tryLock(5, TimeUnit.SECONDS)));
        assertTrue(inOtherThread(() -> alice.obtain("job").fencingToken()) > token);
        inOtherThread(() -> {
            alice.obtain("job").unlock();
            return null;
        });
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.item(ITEM).isEmpty());
    }

    // ---- expiry and renewal, on cluster time

    @Test
    void aLeaseThatRanOutInClusterTimeIsTakenAndItsHolderLearnsOnRenewAndUnlock() throws Exception {
        RatchetLock lock = alice.obtain("job");
        lock.lock();
        long aliceToken = lock.fencingToken();
        assertFalse(bob.obtain("job").tryLock());

        cluster.advance(TTL.plusSeconds(1));

        RatchetLock bobs = bob.obtain("job");
        assertTrue(bobs.tryLock(), "the lease ran out in cluster time: an expired lock counts as free");
        assertTrue(bobs.fencingToken() > aliceToken);

        IllegalStateException renew = assertThrows(IllegalStateException.class, () -> alice.renewLock("job"));
        assertTrue(renew.getMessage().contains("lost"), renew.getMessage());
        assertThrows(ConcurrentModificationException.class, lock::unlock, "as JdbcLockRegistry on a lock lost to expiry");
        assertFalse(lock.isHeldByCurrentThread(), "the failed unlock still ends the hold");
        assertTrue(holder().contains("bob"), "alice's late unlock did not touch bob's lease");
        bobs.unlock();
    }

    @Test
    void renewLockKeepsTheLockPastItsTtl() throws Exception {
        RatchetLock lock = alice.obtain("job");
        lock.lock();
        cluster.advance(Duration.ofSeconds(8));
        alice.renewLock("job");
        assertEquals(cluster.now() + TTL.toMillis(), item().expiresAt());

        cluster.advance(Duration.ofSeconds(8)); // 16 s after the grant
        assertFalse(bob.obtain("job").tryLock());
        alice.renewLock("job", Duration.ofSeconds(30));
        assertEquals(cluster.now() + 30_000, item().expiresAt(), "renewed for the ttl it names");
        assertEquals(Duration.ofSeconds(30), lock.lease().orElseThrow().duration());

        cluster.advance(Duration.ofSeconds(25));
        assertFalse(bob.obtain("job").tryLock());
        lock.unlock();
        assertTrue(bob.obtain("job").tryLock());
        bob.obtain("job").unlock();
    }

    @Test
    void aReentryThatFindsTheLeaseLostAnswersFalseAndTheNextTakesANewLease() throws Exception {
        RatchetLock lock = alice.obtain("job");
        lock.lock();
        long first = lock.fencingToken();
        cluster.advance(TTL.plusSeconds(1));
        assertTrue(inOtherThread(() -> bob.obtain("job").tryLock()));

        assertFalse(lock.tryLock(), "the re-entry could not renew: the lease is lost");
        assertEquals(1, lock.getHoldCount(), "the hold count is as before the call");
        assertTrue(lock.lease().isEmpty());
        assertThrows(IllegalStateException.class, lock::fencingToken);

        inOtherThread(() -> {
            bob.obtain("job").unlock();
            return null;
        });
        assertTrue(lock.tryLock(), "the next re-entry acquires anew");
        assertEquals(2, lock.getHoldCount());
        assertTrue(lock.fencingToken() > first, "a new lease, a new token");
        lock.unlock();
        assertTrue(cluster.item(ITEM).isPresent());
        lock.unlock();
        assertTrue(cluster.item(ITEM).isEmpty());
    }

    @Test
    void lockAndTryLockTakeTheLeaseForTheTtlTheyName() throws Exception {
        RatchetLock lock = alice.obtain("job");
        lock.lock(Duration.ofSeconds(30));
        assertEquals(cluster.now() + 30_000, item().expiresAt());
        lock.unlock();

        assertTrue(lock.tryLock(Duration.ofSeconds(1), Duration.ofSeconds(3)));
        assertEquals(cluster.now() + 3_000, item().expiresAt());
        assertEquals(Duration.ofSeconds(3), lock.lease().orElseThrow().duration());
        lock.unlock();

        assertThrows(IllegalArgumentException.class, () -> lock.lock(Duration.ofHours(2)), "above the maximum lease");
        assertThrows(IllegalArgumentException.class, () -> lock.lock(Duration.ZERO));
        assertFalse(lock.isAcquiredInThisProcess());
    }

    @Test
    void whenNoNodeAnswersAnAcquireFailsWithCannotAcquireLockExceptionAndHoldsNothing() throws Exception {
        cluster.down(N1); // alice's client knows only N1
        RatchetLock lock = alice.obtain("job");

        CannotAcquireLockException e = assertThrows(CannotAcquireLockException.class, lock::tryLock);
        assertTrue(e.getCause() instanceof ClusterUnavailableException, "the Ratchet error is the cause: " + e.getCause());
        assertFalse(lock.isAcquiredInThisProcess());

        cluster.up(N1);
        assertTrue(lock.tryLock(5, TimeUnit.SECONDS));
        lock.unlock();
    }

    // ---- the registry

    @Test
    void expireUnusedOlderThanDropsIdleLockObjectsButNeverAHeldOne() {
        RatchetLock held = alice.obtain("held");
        held.lock();
        RatchetLock idle = alice.obtain("idle");
        idle.lock();
        idle.unlock();

        alice.expireUnusedOlderThan(60_000);
        assertSame(idle, alice.obtain("idle"), "used within the minute");

        await().atMost(Duration.ofSeconds(5)).until(() -> {
            alice.expireUnusedOlderThan(50);
            return alice.obtain("idle") != idle;
        });
        assertSame(held, alice.obtain("held"), "held: kept however old");
        held.unlock();
        await().atMost(Duration.ofSeconds(5)).until(() -> {
            alice.expireUnusedOlderThan(50);
            return alice.obtain("held") != held;
        });
    }

    @Test
    void lockKeysMapToRatchetLockNamesUnderThePrefix() {
        RatchetLock lock = alice.obtain(42);
        assertEquals("spring/42", lock.name());
        lock.lock();
        assertTrue(cluster.item("locks/spring/42").isPresent());
        lock.unlock();

        assertSame(alice.obtain("Job"), alice.obtain("job"), "Ratchet keys compare without case: one lock");
        RatchetLockRegistry plain = new RatchetLockRegistry(alice.getLocks(), "app/", TTL);
        RatchetLock app = plain.obtain("job");
        app.lock();
        assertTrue(cluster.item("locks/app/job").isPresent());
        app.unlock();

        assertThrows(IllegalArgumentException.class, () -> alice.obtain(null));
        IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class, () -> alice.obtain("x".repeat(600)));
        assertTrue(tooLong.getMessage().contains("does not make a valid Ratchet lock name"), tooLong.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new RatchetLockRegistry(alice.getLocks(), "", TTL).obtain(""));
    }

    @Test
    void executeLockedRunsUnderTheLockAndConditionsAreNotSupported() throws Exception {
        alice.executeLocked("job", () -> assertTrue(holder().contains("alice")));
        assertTrue(cluster.item(ITEM).isEmpty());
        assertThrows(UnsupportedOperationException.class, () -> alice.obtain("job").newCondition());
        assertEquals(RatchetLockRegistry.DEFAULT_TTL, new RatchetLockRegistry(cluster.client()).getTtl());
    }
}
