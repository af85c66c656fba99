package io.ratchet.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.Lease;
import io.ratchet.recipes.lock.LockHolder;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockingTaskExecutor.TaskResult;
import net.javacrumbs.shedlock.core.LockingTaskExecutor.TaskWithResult;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.KeepAliveLockProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * What ShedLock documents for a lock provider, and what {@link RatchetLockProvider} adds (fencing tokens), run
 * against a cluster a subclass provides: exclusion, independent names, relock after unlock, a lock running out
 * at {@code lockAtMostFor} on cluster time, {@code lockAtLeastFor} kept on unlock, extension before and after
 * expiry, spent locks refusing reuse, racing threads, {@link KeepAliveLockProvider}, and the fencing token of a
 * task that ShedLock's executor runs. ShedLock publishes no provider test base, so this is its own.
 *
 * <p>{@link #provider} is this process; {@link #other} another process (its own client and owner id).
 */
abstract class RatchetLockProviderContract {
    /** Never runs out during a test unless the test makes it. */
    static final Duration LONG = Duration.ofMinutes(1);
    private static final AtomicInteger SERIAL = new AtomicInteger();

    RatchetLockProvider provider;
    RatchetLockProvider other;
    private String testName;

    /** A client of its own (a process of its own). */
    abstract RatchetClient newClient();

    /** A lease short enough to watch run out on this cluster's clock. */
    abstract Duration shortLease();

    /** How many times each of the racing threads must win the lock. */
    abstract int winsPerThread();

    /**
     * Asserts that {@link #other} cannot take lock {@code name} until {@code held} of cluster time has passed
     * since {@code sinceNanos} (this process's monotonic clock, before the lock or renewal was asked for),
     * and returns the lock it takes soon after.
     */
    abstract RatchetSimpleLock assertHeldForThenTaken(String name, long sinceNanos, Duration held);

    /** Lets cluster time pass {@code lease}'s expiry. */
    abstract void letRunOut(Lease lease);

    RatchetLockProvider newProvider() {
        return new RatchetLockProvider(newClient());
    }

    @BeforeEach
    void providers(TestInfo info) {
        provider = newProvider();
        other = newProvider();
        testName = info.getTestMethod().map(Method::getName).orElse("test");
    }

    /** A test that failed half way may leave locks current on this thread; the next test starts with none. */
    @AfterEach
    void forgetCurrentLeases() {
        for (LeaseChain chain = LeaseChain.innermost(); chain != null; chain = LeaseChain.innermost()) {
            chain.end();
        }
    }

    // ---- helpers

    String name() {
        return testName + "-" + SERIAL.incrementAndGet();
    }

    static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(ClockProvider.now(), name, atMost, atLeast);
    }

    static RatchetSimpleLock lock(RatchetLockProvider p, String name, Duration atMost, Duration atLeast) {
        return (RatchetSimpleLock) p.lock(config(name, atMost, atLeast))
                .orElseThrow(() -> new AssertionError("lock '" + name + "' is free, yet " + p + " did not get it"));
    }

    static Optional<SimpleLock> tryLock(RatchetLockProvider p, String name) {
        return p.lock(config(name, LONG, Duration.ZERO));
    }

    static <T> T onAnotherThread(Supplier<T> call) throws Exception {
        return CompletableFuture.supplyAsync(call).get(30, TimeUnit.SECONDS);
    }

    // ---- exclusion

    @Test
    void aHeldLockIsRefusedToEveryOtherLockCallIncludingTheHoldersOwn() {
        String name = name();
        RatchetSimpleLock held = lock(provider, name, LONG, Duration.ZERO);

        assertEquals(Optional.empty(), tryLock(other, name), "another process is refused");
        assertEquals(Optional.empty(), tryLock(provider, name), "not re-entrant: the holder's provider is refused too");

        LockHolder holder = provider.locks().holder(name).orElseThrow();
        assertEquals(provider.locks().owner(), holder.owner());
        assertEquals(held.fencingToken(), holder.fencingToken());
        assertEquals(held.lease().currentIndex(), holder.index(), "the refused calls wrote nothing");
        held.unlock();
    }

    @Test
    void locksOfDifferentNamesAreIndependent() {
        String a = name();
        String b = name();
        RatchetSimpleLock first = lock(provider, a, LONG, Duration.ZERO);
        RatchetSimpleLock second = lock(other, b, LONG, Duration.ZERO);

        assertNotEquals(first.fencingToken(), second.fencingToken());
        first.unlock();
        assertEquals(second.lease().currentIndex(), other.locks().holder(b).orElseThrow().index(), "unlocking one leaves the other");
        assertTrue(provider.locks().holder(a).isEmpty());
        second.unlock();
        assertTrue(provider.locks().holder(b).isEmpty());
    }

    @Test
    void anUnlockedLockIsFreeAtOnceAndItsNextHolderGetsAGreaterToken() {
        String name = name();
        RatchetSimpleLock first = lock(provider, name, LONG, Duration.ZERO);
        first.unlock();

        assertTrue(provider.locks().holder(name).isEmpty(), "released, not left to run out");
        RatchetSimpleLock second = lock(other, name, LONG, Duration.ZERO);
        assertTrue(second.fencingToken() > first.fencingToken());
        second.unlock();
        RatchetSimpleLock third = lock(provider, name, LONG, Duration.ZERO);
        assertTrue(third.fencingToken() > second.fencingToken());
        third.unlock();
    }

    @Test
    void aNameTheClusterRefusesOrALeaseAboveTheMaximumIsAnError() {
        assertThrows(InvalidRequestException.class, () -> tryLock(provider, "x".repeat(600)));
        RatchetLockProvider capped = new RatchetLockProvider(new Locks(newClient(), new LockOptions("capped", LONG)));
        assertThrows(InvalidRequestException.class, () -> capped.lock(config(name(), LONG.plusMillis(1), Duration.ZERO)));
        assertThrows(InvalidRequestException.class, () -> new RatchetLockProvider(capped.locks(), "x".repeat(600)));
        assertEquals(Optional.empty(), RatchetLockProvider.currentLease(), "nothing was locked");
    }

    @Test
    void aPrefixKeepsShedLockNamesApartAndTheOwnerIsTheLocksOwner() {
        String name = name();
        RatchetLockProvider prefixed = new RatchetLockProvider(new Locks(newClient(), new LockOptions("shed-owner", LONG)), "shedlock/");
        RatchetSimpleLock held = lock(prefixed, name, LONG, Duration.ZERO);

        assertEquals("shedlock/" + name, held.lease().name());
        assertEquals("locks/shedlock/" + name, Locks.key(prefixed.lockName(name)));
        assertEquals("shed-owner", provider.locks().holder("shedlock/" + name).orElseThrow().owner());
        RatchetSimpleLock unprefixed = lock(other, name, LONG, Duration.ZERO);
        unprefixed.unlock();
        held.unlock();
        assertTrue(provider.locks().holder("shedlock/" + name).isEmpty());
    }

    // ---- lockAtMostFor, lockAtLeastFor

    @Test
    void aLockRunsOutAtLockAtMostForOnClusterTimeAndItsLateUnlockHarmsNobody() {
        String name = name();
        long since = System.nanoTime();
        RatchetSimpleLock held = lock(provider, name, shortLease(), Duration.ZERO);

        RatchetSimpleLock taken = assertHeldForThenTaken(name, since, shortLease());

        assertTrue(taken.fencingToken() > held.fencingToken());
        held.unlock(); // the lease is lost: logged, not thrown
        assertEquals(taken.lease().currentIndex(), provider.locks().holder(name).orElseThrow().index(),
                "the late unlock left the new holder's lock alone");
        taken.unlock();
    }

    @Test
    void unlockKeepsTheLockUntilLockAtLeastForHasPassed() {
        String name = name();
        long since = System.nanoTime();
        RatchetSimpleLock held = lock(provider, name, LONG, shortLease());
        held.unlock();

        LockHolder kept = provider.locks().holder(name).orElseThrow(() -> new AssertionError("released before lockAtLeastFor"));
        assertEquals(held.fencingToken(), kept.fencingToken());
        assertTrue(kept.index() > held.lease().currentIndex(), "kept by a renewal");
        assertTrue(kept.expiresAt().orElseThrow().isBefore(held.lease().expiresAt()),
                "the lease now ends at lockAtLeastFor, before lockAtMostFor");
        assertEquals(Optional.empty(), RatchetLockProvider.currentLease(), "the task is over: no current lease");

        RatchetSimpleLock next = assertHeldForThenTaken(name, since, shortLease());
        assertTrue(next.fencingToken() > held.fencingToken());
        next.unlock();
    }

    // ---- extend

    @Test
    void anExtensionBeforeExpiryKeepsTheLockPastTheOriginalLockAtMostFor() {
        String name = name();
        RatchetSimpleLock held = lock(provider, name, shortLease(), Duration.ZERO);
        Duration longer = shortLease().plus(shortLease().dividedBy(2));
        long since = System.nanoTime();

        RatchetSimpleLock extended = (RatchetSimpleLock) held.extend(longer, Duration.ZERO).orElseThrow();

        assertEquals(held.fencingToken(), extended.fencingToken(), "an extension keeps the token");
        assertTrue(extended.lease().currentIndex() > held.lease().currentIndex());
        assertEquals(longer, extended.configuration().getLockAtMostFor());
        assertEquals(Optional.of(extended.lease()), RatchetLockProvider.currentLease(), "the current lease follows the extension");
        RatchetSimpleLock next = assertHeldForThenTaken(name, since, longer);
        assertTrue(next.fencingToken() > extended.fencingToken());
        next.unlock();
    }

    @Test
    void anExtensionAfterExpiryFindsTheLeaseGone() {
        String name = name();
        RatchetSimpleLock held = lock(provider, name, shortLease(), Duration.ZERO);
        letRunOut(held.lease());

        assertEquals(Optional.empty(), held.extend(LONG, Duration.ZERO));

        assertEquals(Optional.empty(), RatchetLockProvider.currentLease(), "a lost lease is no current lease");
        assertThrows(IllegalStateException.class, RatchetLockProvider::currentFencingToken);
        Optional<LockHolder> holder = provider.locks().holder(name);
        assertTrue(holder.isEmpty() || holder.get().index() == held.lease().currentIndex(), "the refused extension wrote nothing");
        assertThrows(IllegalStateException.class, held::unlock, "ShedLock's contract: spent by the extension");
        assertEquals(null, LeaseChain.innermost(), "the unlock ShedLock makes after an empty extension ends the chain");
        lock(other, name, LONG, Duration.ZERO).unlock();
    }

    @Test
    void aSpentLockRefusesEveryFurtherCall() {
        String name = name();
        RatchetSimpleLock first = lock(provider, name, LONG, Duration.ZERO);
        SimpleLock extended = first.extend(LONG, Duration.ZERO).orElseThrow();

        assertThrows(IllegalStateException.class, first::unlock);
        assertThrows(IllegalStateException.class, () -> first.extend(LONG, Duration.ZERO));
        assertTrue(provider.locks().holder(name).isPresent(), "using the spent lock changed nothing");
        extended.unlock();
        assertTrue(provider.locks().holder(name).isEmpty());
        assertThrows(IllegalStateException.class, extended::unlock);
        assertThrows(IllegalStateException.class, () -> extended.extend(LONG, Duration.ZERO));
        assertEquals(Optional.empty(), RatchetLockProvider.currentLease());
    }

    // ---- many at once

    @Test
    void sixteenRacingThreadsNeverHoldTheLockTogetherAndTokensRise() throws Exception {
        String name = name();
        int threads = 16;
        int wins = winsPerThread();
        // Four processes of four threads each: threads share a provider as a scheduler's threads do.
        List<RatchetLockProvider> processes = List.of(newProvider(), newProvider(), newProvider(), newProvider());
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        List<String> wrongCurrent = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> racers = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                RatchetLockProvider process = processes.get(i % processes.size());
                racers.add(pool.submit(() -> {
                    go.await();
                    for (int won = 0; won < wins; ) {
                        Optional<SimpleLock> lock = tryLock(process, name);
                        if (lock.isEmpty()) {
                            continue;
                        }
                        RatchetSimpleLock held = (RatchetSimpleLock) lock.get();
                        most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        tokens.add(held.fencingToken());
                        if (RatchetLockProvider.currentFencingToken() != held.fencingToken()) {
                            wrongCurrent.add(Thread.currentThread().getName());
                        }
                        inside.decrementAndGet(); // before the release: after it, the next holder may enter
                        held.unlock();
                        won++;
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> racer : racers) {
                racer.get(90, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        assertEquals(1, most.get(), "at most one holder at any moment");
        assertEquals(threads * wins, tokens.size());
        for (int i = 1; i < tokens.size(); i++) {
            assertTrue(tokens.get(i) > tokens.get(i - 1), "tokens rise from holder to holder: " + tokens);
        }
        assertEquals(List.of(), wrongCurrent, "each thread's current token is its own lock's");
        assertTrue(provider.locks().holder(name).isEmpty(), "the last holder released it");
    }

    // ---- ShedLock's own machinery

    @Test
    void keepAliveLockProviderExtendsTheLeaseAndUnlocksIt() {
        String name = name();
        ManualScheduler scheduler = new ManualScheduler();
        try {
            KeepAliveLockProvider keepAlive = new KeepAliveLockProvider(provider, scheduler);
            Duration atMost = Duration.ofSeconds(30); // KeepAliveLockProvider's minimum
            SimpleLock lock = keepAlive.lock(config(name, atMost, Duration.ZERO)).orElseThrow();
            Lease first = RatchetLockProvider.currentLease().orElseThrow();
            assertEquals(atMost.dividedBy(2), scheduler.period(), "it extends halfway through lockAtMostFor");

            scheduler.tick();

            Lease kept = RatchetLockProvider.currentLease().orElseThrow();
            assertEquals(first.fencingToken(), kept.fencingToken());
            assertTrue(kept.currentIndex() > first.currentIndex(), "renewed");
            assertEquals(kept.currentIndex(), provider.locks().holder(name).orElseThrow().index());
            assertFalse(kept.expiresAt().isBefore(first.expiresAt()));
            assertEquals(Optional.empty(), tryLock(other, name));

            lock.unlock();

            assertTrue(scheduler.cancelled(), "no extension after unlock");
            assertTrue(provider.locks().holder(name).isEmpty(), "the extended lock was released");
            assertEquals(Optional.empty(), RatchetLockProvider.currentLease());
        } finally {
            scheduler.shutdownNow();
        }
    }

    @Test
    void aTaskRunByShedLockSeesItsFencingTokenAndEveryLaterHolderAGreaterOne() throws Throwable {
        String name = name();
        LockingTaskExecutor mine = new DefaultLockingTaskExecutor(provider);
        LockingTaskExecutor theirs = new DefaultLockingTaskExecutor(other);
        LockConfiguration config = config(name, LONG, Duration.ZERO);
        TaskWithResult<Long> token = RatchetLockProvider::currentFencingToken;

        TaskResult<Long> first = mine.executeWithLock((TaskWithResult<Long>) () -> {
            LockAssert.assertLocked();
            long current = RatchetLockProvider.currentFencingToken();
            assertEquals(provider.locks().holder(name).orElseThrow().fencingToken(), current);
            // Another thread (ShedLock runs a task again on a thread that already holds its lock).
            assertFalse(onAnotherThread(() -> execute(theirs, token, config)).wasExecuted(), "the other process skips its run");
            LockExtender.extendActiveLock(LONG, Duration.ZERO);
            Lease extended = RatchetLockProvider.currentLease().orElseThrow();
            assertEquals(current, extended.fencingToken());
            assertEquals(provider.locks().holder(name).orElseThrow().index(), extended.currentIndex());
            return current;
        }, config);

        assertTrue(first.wasExecuted());
        assertEquals(Optional.empty(), RatchetLockProvider.currentLease(), "cleared when the task ended");
        assertTrue(provider.locks().holder(name).isEmpty(), "the extended lock was released when the task ended");
        long second = theirs.executeWithLock(token, config).getResult();
        long third = mine.executeWithLock(token, config).getResult();
        assertTrue(second > first.getResult(), "a later holder's token is greater");
        assertTrue(third > second);
    }

    @Test
    void theCurrentLeaseIsTheInnermostLockOfThisThreadOnly() throws Exception {
        String outer = name();
        String inner = name();
        assertEquals(Optional.empty(), RatchetLockProvider.currentLease());
        assertThrows(IllegalStateException.class, RatchetLockProvider::currentFencingToken);

        RatchetSimpleLock outside = lock(provider, outer, LONG, Duration.ZERO);
        assertEquals(outside.fencingToken(), RatchetLockProvider.currentFencingToken());
        RatchetSimpleLock nested = lock(other, inner, LONG, Duration.ZERO);
        assertEquals(nested.fencingToken(), RatchetLockProvider.currentFencingToken(), "the innermost lock");
        assertEquals(Optional.empty(), onAnotherThread(RatchetLockProvider::currentLease), "another thread holds nothing");

        nested.unlock();
        assertEquals(outside.fencingToken(), RatchetLockProvider.currentFencingToken(), "back to the outer lock");
        outside.unlock();
        assertEquals(Optional.empty(), RatchetLockProvider.currentLease());
    }

    private static TaskResult<Long> execute(LockingTaskExecutor executor, TaskWithResult<Long> task, LockConfiguration config) {
        try {
            return executor.executeWithLock(task, config);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
