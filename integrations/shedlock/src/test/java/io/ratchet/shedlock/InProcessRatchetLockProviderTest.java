package io.ratchet.shedlock;

import static io.ratchet.testing.InProcessCluster.N1;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import io.ratchet.recipes.lock.Lease;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.testing.InProcessCluster;
import io.ratchet.testing.InProcessClusterExtension;
import java.time.Duration;
import java.util.Optional;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.KeepAliveLockProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The provider contract on {@link InProcessCluster}: the real store, leases judged on its manual clock, so a
 * lease runs out when the test advances that clock, not by waiting; and answers can be lost on purpose, for
 * the acquire in doubt.
 */
@Timeout(60)
@ExtendWith(InProcessClusterExtension.class)
class InProcessRatchetLockProviderTest extends RatchetLockProviderContract {
    /** Far above the real time a call takes, so that the local clock's share of a lease never shows. */
    private static final Duration MARGIN = Duration.ofSeconds(1);
    private static final Duration SHORT = Duration.ofSeconds(10);

    private final InProcessCluster cluster;

    InProcessRatchetLockProviderTest(InProcessCluster cluster) {
        this.cluster = cluster;
    }

    /** A client of the leader alone: no call is hedged, so lost answers are counted exactly. */
    @Override
    RatchetClient newClient() {
        return cluster.client(InProcessCluster.options(N1));
    }

    @Override
    Duration shortLease() {
        return SHORT;
    }

    @Override
    int winsPerThread() {
        return 5;
    }

    @Override
    RatchetSimpleLock assertHeldForThenTaken(String name, long sinceNanos, Duration held) {
        // Cluster time stands still unless advanced: the lease began at the cluster's "now".
        assertEquals(Optional.empty(), tryLock(other, name));
        cluster.advance(held.minus(MARGIN));
        assertEquals(Optional.empty(), tryLock(other, name), "held until " + held + " of cluster time has passed");
        cluster.advance(MARGIN.multipliedBy(2));
        return (RatchetSimpleLock) tryLock(other, name).orElseThrow(() -> new AssertionError("free once the lease ran out"));
    }

    @Override
    void letRunOut(Lease lease) {
        cluster.advance(Duration.ofMillis(lease.expiresAt().toEpochMilli() - cluster.now()));
    }

    @Test
    void aLockIsHeldToTheMillisecondOfLockAtMostFor() {
        String name = name();
        RatchetSimpleLock held = lock(provider, name, SHORT, Duration.ZERO);
        assertEquals(cluster.now() + SHORT.toMillis(), held.lease().expiresAt().toEpochMilli(), "the lease is lockAtMostFor");

        cluster.advance(SHORT.minusMillis(1));
        assertEquals(Optional.empty(), tryLock(other, name));
        cluster.advance(Duration.ofMillis(1));
        assertTrue(tryLock(other, name).isPresent(), "free the moment cluster time reaches the expiry");
    }

    @Test
    void keepAliveKeepsTheLockPastLockAtMostForOnClusterTimeUntilItStops() {
        String name = name();
        ManualScheduler scheduler = new ManualScheduler();
        try {
            Duration atMost = Duration.ofSeconds(30);
            SimpleLock lock = new KeepAliveLockProvider(provider, scheduler).lock(config(name, atMost, Duration.ZERO)).orElseThrow();
            Duration half = scheduler.period();

            cluster.advance(half);
            scheduler.tick();
            cluster.advance(half);
            scheduler.tick();
            cluster.advance(half);
            assertEquals(Optional.empty(), tryLock(other, name), "held at one and a half times lockAtMostFor");

            // The process stops extending (it died, say): the lease runs out lockAtMostFor after the last extension.
            cluster.advance(half.plusMillis(1));
            RatchetSimpleLock taken = (RatchetSimpleLock) tryLock(other, name).orElseThrow();
            lock.unlock(); // the lease is lost: logged, not thrown
            assertEquals(taken.lease().currentIndex(), cluster.item(Locks.key(name)).orElseThrow().index());
        } finally {
            scheduler.shutdownNow();
        }
    }

    @Test
    void anAcquireThatGotNoAnswerButTookTheLockIsAdoptedWithAFullLease() {
        String name = name();
        String key = Locks.key(name);
        RatchetClient client = newClient();
        RatchetLockProvider mine = new RatchetLockProvider(new Locks(client, new LockOptions("mine", LONG)));
        client.put("warm", 1, 0); // opens the session, so that what is lost below is the acquire
        cluster.dropAnswers(Integer.MAX_VALUE);
        // Answers flow again once the adoption's renewal is applied (the item has moved past its granting index).
        cluster.afterWrite(() -> cluster.item(key).filter(i -> i.index() != i.createdIndex()).ifPresent(i -> cluster.dropAnswers(0)));

        RatchetSimpleLock adopted = (RatchetSimpleLock) mine.lock(config(name, LONG, Duration.ZERO))
                .orElseThrow(() -> new AssertionError("the grant of an unanswered acquire is this provider's"));

        cluster.afterWrite(null);
        Item item = cluster.item(key).orElseThrow();
        assertEquals(item.createdIndex(), adopted.fencingToken());
        assertEquals(item.index(), adopted.lease().currentIndex());
        assertEquals(cluster.now() + LONG.toMillis(), item.expiresAt(), "renewed for the whole lockAtMostFor");
        assertEquals(Optional.of(adopted.lease()), RatchetLockProvider.currentLease());
        assertEquals(Optional.empty(), tryLock(other, name));
        adopted.unlock();
        assertTrue(cluster.item(key).isEmpty());
    }

    @Test
    void anAcquireThatGotNoAnswerNeverAdoptsALockThisProviderHandedOut() {
        String name = name();
        String key = Locks.key(name);
        RatchetLockProvider mine = new RatchetLockProvider(new Locks(newClient(), new LockOptions("mine", LONG)));
        RatchetSimpleLock held = lock(mine, name, LONG, SHORT);

        // While a task holds it: the refused acquire loses its answer; the holder is "mine", but handed out.
        cluster.dropAnswers(Integer.MAX_VALUE);
        Optional<SimpleLock> inDoubt = mine.lock(config(name, LONG, Duration.ZERO));
        cluster.dropAnswers(0);
        assertEquals(Optional.empty(), inDoubt);
        assertEquals(held.lease().currentIndex(), cluster.item(key).orElseThrow().index(), "the held lock was not touched");
        assertEquals(held.fencingToken(), RatchetLockProvider.currentFencingToken(), "the current lock is still the held one");

        // After the task, while lockAtLeastFor keeps the lock: the same.
        held.unlock();
        long kept = cluster.item(key).orElseThrow().index();
        cluster.dropAnswers(Integer.MAX_VALUE);
        inDoubt = mine.lock(config(name, LONG, Duration.ZERO));
        cluster.dropAnswers(0);
        assertEquals(Optional.empty(), inDoubt, "lockAtLeastFor is not cut short by an adoption");
        assertEquals(kept, cluster.item(key).orElseThrow().index());

        cluster.advance(SHORT);
        assertTrue(tryLock(other, name).isPresent());
    }

    @Test
    void anUnreachableClusterSkipsTheRunAndAnUnlockItMissesLetsTheLeaseRunOut() {
        String name = name();
        String key = Locks.key(name);
        // Clients that give up quickly, so that the test does not wait out the usual bounds.
        ClientOptions impatient = InProcessCluster.options(N1).withTimeouts(Duration.ofMillis(200), 2, Duration.ofMillis(500));
        RatchetLockProvider mine = new RatchetLockProvider(cluster.client(impatient));
        RatchetLockProvider theirs = new RatchetLockProvider(cluster.client(impatient));
        RatchetSimpleLock held = lock(mine, name, SHORT, Duration.ZERO);
        tryLock(theirs, name); // opens their session while the cluster can be reached
        InProcessCluster.NODES.values().forEach(cluster::down);

        assertEquals(Optional.empty(), tryLock(theirs, name), "not locked, nothing thrown: the run is skipped");
        held.unlock(); // logged, not thrown

        InProcessCluster.NODES.values().forEach(cluster::up);
        assertEquals(held.lease().currentIndex(), cluster.item(key).orElseThrow().index(), "the release never arrived");
        assertEquals(Optional.empty(), RatchetLockProvider.currentLease(), "the task is over all the same");
        assertEquals(Optional.empty(), tryLock(other, name));
        cluster.advance(SHORT);
        assertTrue(tryLock(other, name).isPresent(), "the lease ran out by itself");
    }
}
