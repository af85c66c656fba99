package io.ratchet.recipes.lock;

import static io.ratchet.testing.InProcessCluster.N1;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Item;
import io.ratchet.recipes.OnInProcessCluster;
import io.ratchet.testing.InProcessCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/**
 * The lock recipe against {@link InProcessCluster}: the real store, leases judged on the cluster's
 * manual clock, so expiry is tested by advancing that clock rather than by sleeping.
 */
@Timeout(10)
class LocksTest extends OnInProcessCluster {
    private static final Duration LEASE = Duration.ofSeconds(10);
    private static final String KEY = "locks/job";

    private Locks alice;
    private Locks bob;

    @BeforeEach
    void start() {
        alice = new Locks(client, new LockOptions("alice", Duration.ofMinutes(1)));
        bob = new Locks(cluster.client(InProcessCluster.options(N1)), new LockOptions("bob", Duration.ofMinutes(1)));
    }

    // ---- acquire, renew, release

    @Test
    void anAcquiredLockIsTheItemAndItsFencingTokenIsTheGrantingIndex() {
        Lease lease = alice.tryAcquire("job", LEASE).orElseThrow();

        Item item = cluster.item(KEY).orElseThrow();
        assertEquals(cluster.lastIndex(), lease.fencingToken(), "the token is the index of the entry that granted it");
        assertEquals(item.createdIndex(), lease.fencingToken());
        assertEquals(item.index(), lease.currentIndex());
        assertEquals("{\"owner\":\"alice\"}", item.value());
        assertEquals("alice", lease.owner());
        assertEquals("job", lease.name());
        assertEquals(LEASE, lease.duration());
        assertEquals(Instant.ofEpochMilli(cluster.now() + LEASE.toMillis()), lease.expiresAt(), "cluster time plus the lease");
        assertEquals(item.expiresAt(), lease.expiresAt().toEpochMilli());

        LockHolder holder = bob.holder("job").orElseThrow();
        assertEquals("alice", holder.owner());
        assertEquals(lease.fencingToken(), holder.fencingToken());
        assertEquals(lease.currentIndex(), holder.index());
    }

    @Test
    void renewalMovesTheIndexAndTheExpiryAndKeepsTheToken() {
        Lease lease = alice.tryAcquire("job", LEASE).orElseThrow();
        cluster.advance(Duration.ofSeconds(6));

        Lease renewed = alice.renew(lease);

        assertEquals(lease.fencingToken(), renewed.fencingToken());
        assertTrue(renewed.currentIndex() > lease.currentIndex());
        assertEquals(Instant.ofEpochMilli(cluster.now() + LEASE.toMillis()), renewed.expiresAt(), "from the renewal's cluster time");
        assertEquals(renewed.currentIndex(), cluster.item(KEY).orElseThrow().index());

        Lease longer = alice.renew(renewed, Duration.ofSeconds(30));
        assertEquals(Duration.ofSeconds(30), longer.duration());
        assertEquals(cluster.now() + 30_000, cluster.item(KEY).orElseThrow().expiresAt());

        // The renewed lease outlives the first one: bob is still refused past the first expiry.
        cluster.advance(Duration.ofSeconds(20));
        assertEquals(Optional.empty(), bob.tryAcquire("job", LEASE));
    }

    @Test
    void renewAndReleaseByNameAndIndex() {
        Lease lease = alice.tryAcquire("job", LEASE).orElseThrow();

        Lease renewed = alice.renew("job", lease.currentIndex(), Duration.ofSeconds(20));

        assertEquals(lease.fencingToken(), renewed.fencingToken());
        assertEquals("alice", renewed.owner(), "the owner is read from the item");
        assertEquals(cluster.now() + 20_000, cluster.item(KEY).orElseThrow().expiresAt());

        LeaseLostException stale = assertThrows(LeaseLostException.class,
                () -> alice.renew("job", lease.currentIndex(), LEASE));
        assertEquals(renewed.currentIndex(), stale.holder().orElseThrow().index());
        assertThrows(LeaseLostException.class, () -> alice.release("job", lease.currentIndex()));
        assertTrue(cluster.item(KEY).isPresent(), "a stale index changes nothing");

        alice.release("job", renewed.currentIndex());
        assertTrue(cluster.item(KEY).isEmpty());
    }

    // ---- one holder at a time, on cluster time

    @Test
    void aSecondOwnerIsRefusedWhileTheLeaseLives() {
        Lease lease = alice.tryAcquire("job", LEASE).orElseThrow();
        cluster.advance(LEASE.minusMillis(1));

        assertEquals(Optional.empty(), bob.tryAcquire("job", LEASE));
        assertEquals(Optional.empty(), alice.tryAcquire("job", LEASE), "not re-entrant: the holder is refused too");
        Item item = cluster.item(KEY).orElseThrow();
        assertEquals(lease.currentIndex(), item.index(), "the refused attempts wrote nothing");
        assertEquals("{\"owner\":\"alice\"}", item.value());
    }

    @Test
    void renewingOrReleasingALeaseThatWasTakenOverIsLost() {
        Lease lease = alice.tryAcquire("job", LEASE).orElseThrow();
        cluster.advance(LEASE.plusSeconds(1));
        Lease taken = bob.tryAcquire("job", LEASE).orElseThrow();

        LeaseLostException renew = assertThrows(LeaseLostException.class, () -> alice.renew(lease));
        LeaseLostException release = assertThrows(LeaseLostException.class, () -> alice.release(lease));

        for (LeaseLostException e : List.of(renew, release)) {
            assertEquals("job", e.name());
            assertEquals(lease.currentIndex(), e.index());
            LockHolder now = e.holder().orElseThrow();
            assertEquals("bob", now.owner());
            assertEquals(taken.fencingToken(), now.fencingToken());
        }
        assertEquals(taken.currentIndex(), cluster.item(KEY).orElseThrow().index(), "bob's lock is untouched");
    }

    @Test
    void aLeaseThatRanOutCannotBeRenewedButCanStillBeReleased() {
        Lease lease = alice.tryAcquire("job", LEASE).orElseThrow();
        cluster.advance(LEASE.plusSeconds(1));

        LeaseLostException e = assertThrows(LeaseLostException.class, () -> alice.renew(lease));

        assertEquals(lease.currentIndex(), e.holder().orElseThrow().index(), "nobody took it: it ran out");
        assertEquals(lease.currentIndex(), cluster.item(KEY).orElseThrow().index(), "the renewal wrote nothing");
        alice.release(lease); // nobody else was let in meanwhile
        assertTrue(cluster.item(KEY).isEmpty());
    }

    @Test
    void aSweptLeaseIsLostWithNoHolder() {
        Lease lease = alice.tryAcquire("job", LEASE).orElseThrow();
        cluster.advance(LEASE.plusSeconds(1));
        assertEquals(1, cluster.sweep());

        LeaseLostException e = assertThrows(LeaseLostException.class, () -> alice.release(lease));

        assertEquals(Optional.empty(), e.holder());
    }

    // ---- waiting

    @Test
    void aWaitOfZeroIsOneAttempt() {
        alice.tryAcquire("job", LEASE).orElseThrow();
        int before = cluster.writeCalls().size();

        assertEquals(Optional.empty(), bob.acquire("job", LEASE, Duration.ZERO));

        assertEquals(2, cluster.writeCalls().size() - before, "bob's session open and one put");
        assertEquals(0, cluster.pendingWatches());
    }

    @Test
    void aWaitingAcquireOfAFreeLockTakesItAtOnce() {
        Lease got = bob.acquire("job", LEASE, Duration.ofSeconds(5)).orElseThrow();

        assertEquals(got.currentIndex(), cluster.item(KEY).orElseThrow().index());
        assertEquals(0, cluster.pendingWatches());
    }

    // ---- bad input and lost answers

    @Test
    void leaseBoundsAndBadInputAreRefusedBeforeAnythingIsWritten() {
        Lease fake = new Lease("job", "alice", 5, 5, Instant.now(), LEASE);

        assertInvalid(() -> alice.tryAcquire("job", Duration.ZERO));
        assertInvalid(() -> alice.tryAcquire("job", Duration.ofMillis(-5)));
        assertInvalid(() -> alice.tryAcquire("job", null));
        assertInvalid(() -> alice.tryAcquire("job", Duration.ofMinutes(1).plusMillis(1)));
        assertInvalid(() -> alice.tryAcquire("", LEASE));
        assertInvalid(() -> alice.tryAcquire(null, LEASE));
        assertInvalid(() -> alice.tryAcquire("x".repeat(600), LEASE));
        assertInvalid(() -> alice.acquire("job", Duration.ofHours(2), Duration.ofSeconds(1)));
        assertInvalid(() -> alice.acquire("job", LEASE, Duration.ofMillis(-1)));
        assertInvalid(() -> alice.acquire("job", LEASE, null));
        assertInvalid(() -> alice.renew(fake, Duration.ofMinutes(2)));
        assertInvalid(() -> alice.renew(fake, Duration.ZERO));
        assertInvalid(() -> alice.renew(null));
        assertInvalid(() -> alice.renew(new Lease("job", "alice", 5, 0, Instant.now(), LEASE)));
        assertInvalid(() -> alice.renew(new Lease("job", "", 5, 5, Instant.now(), LEASE)));
        assertInvalid(() -> alice.renew("job", 0, LEASE));
        assertInvalid(() -> alice.renew("job", 5, Duration.ofMinutes(2)));
        assertInvalid(() -> alice.release(null));
        assertInvalid(() -> alice.release("job", 0));
        assertInvalid(() -> alice.release("", 5));
        assertInvalid(() -> alice.holder(""));

        assertEquals(List.of(), cluster.calls(), "the connector saw no call");
        assertThrows(IllegalArgumentException.class, () -> new LockOptions(" ", LEASE));
        assertThrows(IllegalArgumentException.class, () -> new LockOptions("a", Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> new LockOptions("a", Duration.ofDays(400)));
    }

    @Test
    void anAcquireThatGetsNoAnswerIsInDoubtAndHolderTellsWhoHasIt() {
        alice.holder("job"); // a read: opens nothing
        client.put("warm", 1, 0); // opens alice's session, so what is lost below is the acquire
        cluster.dropAnswers(Integer.MAX_VALUE);

        assertThrows(UnknownOutcomeException.class, () -> alice.tryAcquire("job", LEASE));

        cluster.dropAnswers(0);
        assertEquals("alice", alice.holder("job").orElseThrow().owner(), "it was applied");
    }

    @Test
    void aRenewalAnsweredLaterThanItsLeaseIsLostAndGivenBack() {
        AtomicLong skew = new AtomicLong();
        Locks late = new Locks(client, new LockOptions("carol", Duration.ofMinutes(1)), () -> System.nanoTime() + skew.get());
        Lease lease = late.tryAcquire("job", LEASE).orElseThrow();
        AtomicBoolean once = new AtomicBoolean();
        cluster.afterWrite(() -> {
            if (once.compareAndSet(false, true)) {
                skew.addAndGet(LEASE.toNanos());
            }
        });

        LeaseLostException e = assertThrows(LeaseLostException.class, () -> late.renew(lease));

        assertEquals(lease.currentIndex(), e.index());
        assertEquals(Optional.empty(), e.holder());
        assertTrue(cluster.item(KEY).isEmpty(), "the renewed lease was given back");
    }

    /**
     * A lease asked for in finer than milliseconds is granted in whole milliseconds (the ttl is
     * {@code lease.toMillis()}), so the holder must not count on more than that: the returned
     * {@link Lease#duration()} and the too-late check use the granted duration, so an answer that came
     * back after the granted 10 s (by the holder's clock) is given back, not returned as held.
     */
    @Test
    void aLeaseIsNotCountedLongerThanTheClusterGranted() {
        Duration asked = Duration.ofSeconds(10).plusNanos(900_000);
        // The holder's monotonic clock stands still but for the answer's delay, so the margin is exact.
        AtomicLong nanos = new AtomicLong();
        Locks late = new Locks(client, new LockOptions("carol", Duration.ofMinutes(1)), nanos::get);
        client.put("warm", 1, 0);
        AtomicBoolean once = new AtomicBoolean();
        cluster.afterWrite(() -> {
            if (once.compareAndSet(false, true)) {
                nanos.addAndGet(Duration.ofSeconds(10).plusNanos(500_000).toNanos());
            }
        });

        Optional<Lease> got = late.tryAcquire("job", asked);

        Command.Put put = cluster.writeCalls().stream().flatMap(c -> c.requests().stream())
                .flatMap(r -> r.commands().stream())
                .filter(c -> c instanceof Command.Put p && p.key().equals(KEY)).map(c -> (Command.Put) c)
                .findFirst().orElseThrow();
        assertEquals(10_000, put.ttlMillis(), "the cluster grants whole milliseconds");
        assertEquals(Optional.empty(), got.map(Lease::duration),
                "answered 10.0005 s after it was sent, past the 10 s the cluster granted: it should be given back");
    }

    @Test
    void eachLocksInstanceWithDefaultsHasItsOwnOwner() {
        Locks one = new Locks(client);
        Locks two = new Locks(client);

        assertNotEquals(one.owner(), two.owner());
        Lease lease = one.tryAcquire("job", LEASE).orElseThrow();
        assertEquals(one.owner(), LockHolder.ownerOf(cluster.item(KEY).orElseThrow()));
        assertEquals(Optional.empty(), two.tryAcquire("job", LEASE));
        one.release(lease);
    }

    private static void assertInvalid(Executable call) {
        assertThrows(InvalidRequestException.class, call);
    }
}
