package io.ratchet.recipes.lock;

import static io.ratchet.testing.InProcessCluster.N1;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.RatchetClient;
import io.ratchet.testing.InProcessCluster;
import io.ratchet.testing.InProcessClusterExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What every {@link Lock} promises, whatever its kind, against {@link InProcessCluster} (the real store,
 * leases judged on its manual clock): no more holders than permits, fencing tokens that rise from holder
 * to holder, a dead holder's lease taken over with a higher token, a release that frees at once, a grant
 * answered too late given back, and a wait that ends when it says. Each kind runs it as a small subclass,
 * as Curator's lock test base does.
 *
 * @param <G> the kind's grant
 */
@Timeout(20)
@ExtendWith(InProcessClusterExtension.class)
abstract class LockContract<G extends Grant> {
    /** Long enough that no waiter's renewal (a third of it, on the real clock) happens during a test. */
    static final Duration LEASE = Duration.ofSeconds(60);
    static final Duration SHORT = Duration.ofSeconds(2);
    static final Duration WAIT = Duration.ofSeconds(15);

    InProcessCluster cluster;

    /** The lock under test, for {@code owner}, over {@code client}, timing its calls with {@code nanoClock}. */
    abstract Lock<G> lock(RatchetClient client, String owner, LongSupplier nanoClock);

    /** How many may hold it at once. */
    int permits() {
        return 1;
    }

    @BeforeEach
    void start(InProcessCluster cluster) {
        this.cluster = cluster;
    }

    /** The lock for an owner of its own, over a client (and so a session) of its own. */
    Lock<G> lock(String owner) {
        return lock(cluster.client(InProcessCluster.options(N1)), owner, System::nanoTime);
    }

    record Held<G extends Grant>(Lock<G> lock, G grant) {
    }

    /** Every permit taken, by owners {@code prefix-0, prefix-1, ...}, one after another. */
    List<Held<G>> fill(String prefix, Duration lease) {
        List<Held<G>> held = new ArrayList<>();
        for (int i = 0; i < permits(); i++) {
            Lock<G> lock = lock(prefix + "-" + i);
            held.add(new Held<>(lock, lock.tryAcquire(lease).orElseThrow(() -> new AssertionError("a permit is free"))));
        }
        return held;
    }

    static long highestToken(List<? extends Held<?>> held) {
        return held.stream().mapToLong(h -> h.grant().fencingToken()).max().orElseThrow();
    }

    @Test
    void noMoreHoldItThanItHasPermits() {
        List<Held<G>> held = fill("holder", LEASE);

        assertEquals(Optional.empty(), lock("late").tryAcquire(LEASE), "every permit is held");
        assertEquals(held.stream().map(h -> h.grant().owner()).toList(),
                lock("observer").holders().stream().map(LockHolder::owner).toList());
    }

    @Test
    void fencingTokensRiseFromHolderToHolderAndAReleaseFreesAtOnce() {
        long last = 0;
        for (int i = 0; i < 4; i++) {
            Lock<G> lock = lock("owner-" + i);
            G grant = lock.tryAcquire(LEASE).orElseThrow(() -> new AssertionError("the release before freed it"));
            assertTrue(grant.fencingToken() > last, "token " + grant.fencingToken() + " after " + last);
            assertEquals(lock.owner(), grant.owner());
            last = grant.fencingToken();
            lock.release(grant);
        }
        assertEquals(List.of(), lock("observer").holders());
    }

    @Test
    void aHolderThatKeptOnlyTheIndexReleasesByIt() {
        List<Held<G>> held = fill("holder", LEASE);
        Held<G> first = held.get(0);
        LockHolder seen = lock("observer").holders().get(0);
        G renewed = first.lock().renew(first.grant()); // the index seen is now stale

        assertThrows(LeaseLostException.class, () -> lock(first.grant().owner()).release(seen.index()),
                "a stale index frees nothing");
        lock(first.grant().owner()).release(renewed.currentIndex());

        assertEquals(held.subList(1, held.size()).stream().map(h -> h.grant().owner()).toList(),
                lock("observer").holders().stream().map(LockHolder::owner).toList());
    }

    @Test
    void anExpiredHoldersLeaseIsTakenOverWithAHigherToken() {
        List<Held<G>> dead = fill("dead", SHORT); // they never renew or release
        cluster.advance(SHORT); // a lease ends the moment cluster time reaches its expiry

        G taken = lock("next").tryAcquire(LEASE).orElseThrow(() -> new AssertionError("the dead holders' leases ran out"));

        assertTrue(taken.fencingToken() > highestToken(dead));
        Held<G> first = dead.get(0);
        assertThrows(LeaseLostException.class, () -> first.lock().renew(first.grant()), "a lease that ran out is not renewed");
    }

    @Test
    void aWaiterIsWokenByTheSweepOfDeadHolders() {
        List<Held<G>> dead = fill("dead", SHORT);
        CompletableFuture<Optional<G>> waiting = lock("waiter").acquireAsync(LEASE, WAIT);
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.pendingWatches() >= 1);

        cluster.advance(SHORT.plusSeconds(1));
        assertEquals(permits(), cluster.sweep(), "the holders' items, not the waiter's");

        G got = waiting.join().orElseThrow(() -> new AssertionError("the waiter should hold it now"));
        assertEquals("waiter", got.owner());
        assertTrue(got.fencingToken() > highestToken(dead));
    }

    @Test
    void aReleaseHandsTheLockToAWaiter() {
        List<Held<G>> held = fill("holder", LEASE);
        CompletableFuture<Optional<G>> waiting = lock("waiter").acquireAsync(LEASE, WAIT);
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.pendingWatches() >= 1);
        assertFalse(waiting.isDone(), "it waits while every permit is held");

        held.get(0).lock().release(held.get(0).grant());

        G got = waiting.join().orElseThrow(() -> new AssertionError("the release should have freed a permit"));
        assertTrue(got.fencingToken() > highestToken(held));
    }

    @Test
    void aGrantAnsweredLaterThanItsLeaseIsGivenBack() {
        AtomicLong skew = new AtomicLong();
        RatchetClient client = cluster.client(InProcessCluster.options(N1));
        client.put("warm", 1, 0); // opens the session, so the next write is the lock's own
        Lock<G> late = lock(client, "late", () -> System.nanoTime() + skew.get());
        AtomicBoolean once = new AtomicBoolean();
        // The answer arrives, by the holder's monotonic clock, a whole lease after the request left.
        cluster.afterWrite(() -> {
            if (once.compareAndSet(false, true)) {
                skew.addAndGet(LEASE.toNanos());
            }
        });

        assertEquals(Optional.empty(), late.tryAcquire(LEASE));

        assertEquals(List.of(), lock("observer").holders(), "the grant was given back");
        fill("next", LEASE); // and every permit is free for others at once
    }

    @Test
    void aWaitingAcquireEndsByItsWait() {
        List<Held<G>> held = fill("holder", LEASE);
        Duration wait = Duration.ofMillis(300);
        long start = System.nanoTime();

        Optional<G> got = lock("waiter").acquire(LEASE, wait);

        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertEquals(Optional.empty(), got);
        assertTrue(tookMillis >= wait.toMillis() - 10, "gave up after " + tookMillis + " ms");
        assertTrue(tookMillis < wait.plus(RatchetClient.WATCH_SLACK).toMillis(), "gave up after " + tookMillis + " ms");
        assertEquals(held.stream().map(h -> h.grant().currentIndex()).toList(),
                lock("observer").holders().stream().map(LockHolder::index).toList(), "the holders are untouched");
    }
}
