package io.ratchet.recipes.lock;

import static io.ratchet.testing.InProcessCluster.N1;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Rpc;
import io.ratchet.recipes.OnInProcessCluster;
import io.ratchet.testing.InProcessCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/**
 * The fair lock against {@link InProcessCluster}: the real store, leases judged on the cluster's manual
 * clock (advanced, never slept on), and the calls every waiter makes counted at the connector, so "one
 * wake-up per release" is a number the test reads.
 */
@Timeout(20)
class FairLocksTest extends OnInProcessCluster {
    /** Long enough that no waiter's renewal (a third of it, on the real clock) happens during a test. */
    private static final Duration LEASE = Duration.ofSeconds(60);
    private static final Duration WAIT = Duration.ofSeconds(15);
    private static final String QUEUE = "fair-locks/job/";

    private FairLocks alice;
    private FairLocks bob;

    @BeforeEach
    void start() {
        alice = fair("alice");
        bob = fair("bob");
    }

    /** A fair-lock instance of its own owner, over a client (and so a session) of its own. */
    private FairLocks fair(String owner) {
        return new FairLocks(cluster.client(InProcessCluster.options(N1)), new LockOptions(owner, Duration.ofMinutes(5)));
    }

    private List<Item> entries() {
        return cluster.read(s -> s.list(QUEUE, 0, 1000)).stream()
                .filter(i -> QueueListing.isEntryKey(QUEUE, i.key()))
                .sorted((a, b) -> Long.compare(a.createdIndex(), b.createdIndex())).toList();
    }

    // ---- one holder, its token is its place

    @Test
    void anAcquiredFairLockIsAQueueEntryWhoseTurnWriteIsTheFencingToken() {
        QueueLease lease = alice.tryAcquire("job", LEASE).orElseThrow();

        List<Item> entries = entries();
        assertEquals(1, entries.size());
        Item entry = entries.get(0);
        assertEquals(entry.key(), lease.key());
        assertTrue(entry.key().matches("fair-locks/job/[0-9a-f]{16}"), entry.key());
        assertEquals("{\"owner\":\"alice\",\"holding\":true}", entry.value());
        assertEquals(entry.createdIndex(), lease.place(), "the place is the index that created the entry");
        assertEquals(entry.index(), lease.fencingToken(), "the token is the index of the turn write");
        assertTrue(lease.fencingToken() > lease.place());
        assertEquals(entry.index(), lease.currentIndex());
        assertEquals(Instant.ofEpochMilli(cluster.now() + LEASE.toMillis()), lease.expiresAt(), "cluster time plus the lease");
        assertEquals("alice", lease.owner());
        assertEquals(LEASE, lease.duration());

        LockHolder holder = bob.holder("job").orElseThrow();
        assertEquals("alice", holder.owner());
        assertEquals(lease.fencingToken(), holder.fencingToken());
    }

    @Test
    void tryAcquireNeverJumpsTheQueueAndLeavesNothingBehind() {
        QueueLease held = alice.tryAcquire("job", LEASE).orElseThrow();

        assertEquals(Optional.empty(), bob.tryAcquire("job", LEASE));
        assertEquals(Optional.empty(), alice.tryAcquire("job", LEASE), "not re-entrant: a second place queues behind the first");

        assertEquals(List.of(held.key()), entries().stream().map(Item::key).toList(), "the refused ones left the queue");
        alice.release(held);
        assertTrue(entries().isEmpty());
        QueueLease next = bob.tryAcquire("job", LEASE).orElseThrow();
        assertTrue(next.fencingToken() > held.fencingToken());
    }

    // ---- first come, first served, and no herd

    /** Six waiters join one after another behind a holder; each release hands the lock to the next in line. */
    @Test
    void waitersAreServedInTheOrderTheyJoinedAndEachTokenIsHigher() {
        QueueLease first = alice.tryAcquire("job", LEASE).orElseThrow();
        List<CompletableFuture<Optional<QueueLease>>> waiting = queueUp(6);

        List<String> served = new ArrayList<>();
        QueueLease previous = first;
        alice.release(first);
        for (int i = 0; i < waiting.size(); i++) {
            QueueLease got = promptly(waiting.get(i));
            served.add(got.owner());
            assertTrue(got.fencingToken() > previous.fencingToken(), "tokens rise: " + got + " after " + previous);
            assertEquals(entries().get(0).createdIndex(), got.place(), "the holder is the head of the queue");
            for (int later = i + 1; later < waiting.size(); later++) {
                assertFalse(waiting.get(later).isDone(), "w" + later + " was served before w" + i + " released");
            }
            previous = got;
            fair(got.owner()).release(got);
        }
        assertEquals(List.of("w0", "w1", "w2", "w3", "w4", "w5"), served);
        assertTrue(entries().isEmpty());
    }

    /**
     * The leader's group commit puts the writes of many messages in one log entry, all at its index: two
     * joins can share a place. Found by the chaos harness: with the place as the token, both were granted
     * at once with one token. Ties go by key, and the token is the turn write's index.
     */
    /** {@code a} and {@code b} join {@code job}'s queue in one log entry, so their entries share one index. */
    private List<Ticket> joinInOneEntry(RatchetClient shared, FairLocks a, FairLocks b) {
        shared.put("warm", 1, 0);
        cluster.delayAnswers(Duration.ofMillis(300));
        CompletableFuture<?> inFlight = shared.putAsync("warm-2", 1, 0); // the client's one message in flight
        CompletableFuture<Ticket> joinA = a.enqueueAsync("job", LEASE);    // so both go in its next message
        CompletableFuture<Ticket> joinB = b.enqueueAsync("job", LEASE);
        inFlight.join();
        Ticket ta = joinA.join();
        Ticket tb = joinB.join();
        cluster.delayAnswers(Duration.ZERO);
        assertEquals(ta.place(), tb.place(), "one log entry, one index");
        return List.of(ta, tb);
    }

    @Test
    void joinsInOneLogEntryShareAPlaceYetAreServedOneAtATimeWithRisingTokens() {
        RatchetClient shared = cluster.client(InProcessCluster.options(N1));
        FairLocks a = new FairLocks(shared, new LockOptions("a", Duration.ofMinutes(5)));
        FairLocks b = new FairLocks(shared, new LockOptions("b", Duration.ofMinutes(5)));
        List<Ticket> tickets = joinInOneEntry(shared, a, b);
        Ticket ta = tickets.get(0);
        Ticket tb = tickets.get(1);

        CompletableFuture<Optional<QueueLease>> waitA = a.awaitAsync(ta, WAIT);
        CompletableFuture<Optional<QueueLease>> waitB = b.awaitAsync(tb, WAIT);
        boolean aFirst = ta.key().compareTo(tb.key()) < 0;
        CompletableFuture<Optional<QueueLease>> first = aFirst ? waitA : waitB;
        CompletableFuture<Optional<QueueLease>> second = aFirst ? waitB : waitA;
        QueueLease held = first.join().orElseThrow(() -> new AssertionError("the lower key is first"));
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> !second.isDone());

        (aFirst ? a : b).release(held);
        QueueLease next = second.join().orElseThrow();
        assertEquals(held.place(), next.place());
        assertTrue(next.fencingToken() > held.fencingToken(), next + " after " + held);
    }

    @Test
    void aReleaseByAnIndexTwoEntriesShareTakesTheOwnersOwnAndNeverGuesses() {
        RatchetClient shared = cluster.client(InProcessCluster.options(N1));
        FairLocks a = new FairLocks(shared, new LockOptions("a", Duration.ofMinutes(5)));
        FairLocks b = new FairLocks(shared, new LockOptions("b", Duration.ofMinutes(5)));
        List<Ticket> tickets = joinInOneEntry(shared, a, b);
        Ticket ta = tickets.get(0);
        Ticket tb = tickets.get(1);

        FairLocks c = new FairLocks(shared, new LockOptions("c", Duration.ofMinutes(5)));
        assertThrows(InvalidRequestException.class, () -> c.release("job", ta.place()), "an index two entries share is no one's");
        b.release("job", tb.place());
        assertEquals(List.of("a"), a.queue("job").stream().map(QueueEntry::owner).toList(), "b's own entry went, a's stayed");
    }

    @Test
    void aReleaseWakesExactlyOneWaiter() {
        QueueLease held = alice.tryAcquire("job", LEASE).orElseThrow();
        List<CompletableFuture<Optional<QueueLease>>> waiting = queueUp(5);
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.pendingWatches() == 5);
        int callsBefore = cluster.calls().size();
        Set<String> armedBefore = armedWatches(0);

        alice.release(held);
        QueueLease next = waiting.get(0).join().orElseThrow();

        List<Query> after = readsSince(callsBefore);
        assertEquals(1, after.stream().filter(q -> q instanceof Query.ListItems).count(),
                "one listing: the woken waiter's, and nobody else looked");
        await().atMost(Duration.ofSeconds(5)).until(() -> armedWatches(callsBefore).contains(next.key() + "@" + next.currentIndex()));
        Set<String> newWatches = armedWatches(callsBefore);
        newWatches.removeAll(armedBefore);
        assertEquals(Set.of(next.key() + "@" + next.currentIndex()), newWatches,
                "the only new watch: w1 following w0's turn write, without a listing");
        assertEquals(2, cluster.writeCalls().size() - writesBefore(callsBefore), "the release and w0's turn write");
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.pendingWatches() == 4);
        assertEquals(4, waiting.stream().filter(f -> !f.isDone()).count());

        // And the next release likewise.
        int again = cluster.calls().size();
        fair("w0").release(next);
        waiting.get(1).join().orElseThrow();
        assertEquals(1, readsSince(again).stream().filter(q -> q instanceof Query.ListItems).count());
        releaseAll(waiting.subList(1, waiting.size()));
    }

    // ---- the dead leave the queue on cluster time

    @Test
    void aDeadWaiterInTheMiddleIsSkipped() {
        QueueLease held = alice.tryAcquire("job", LEASE).orElseThrow();
        Ticket dead = fair("carol").enqueue("job", Duration.ofSeconds(2)); // joins, then never waits or renews
        CompletableFuture<Optional<QueueLease>> waiting = bob.acquireAsync("job", LEASE, WAIT);
        await().atMost(Duration.ofSeconds(5)).until(() -> watchedKeys().contains(dead.key()));

        cluster.advance(Duration.ofSeconds(3));
        assertEquals(1, cluster.sweep());

        // bob was woken by the sweep of his predecessor and now waits on alice.
        await().atMost(Duration.ofSeconds(5)).until(() -> watchedKeys().contains(held.key()));
        assertFalse(waiting.isDone(), "alice still holds the lock");
        alice.release(held);
        QueueLease got = waiting.join().orElseThrow();
        assertEquals("bob", got.owner());
        assertTrue(got.place() > dead.place());
    }

    @Test
    void anEntryKnownToHaveExpiredCountsAsGoneBeforeTheSweep() {
        QueueLease dead = alice.tryAcquire("job", Duration.ofSeconds(2)).orElseThrow();
        cluster.advance(Duration.ofSeconds(3)); // no sweep: the item stays

        QueueLease got = bob.tryAcquire("job", LEASE).orElseThrow(
                () -> new AssertionError("bob's own write was stamped after alice's expiry, so he knows it ran out"));

        assertTrue(got.fencingToken() > dead.fencingToken());
        assertEquals(2, entries().size(), "alice's expired entry is still there, unswept");
    }

    @Test
    void aWaiterRenewsItsEntryWhileItWaitsAndKeepsItsPlace() {
        QueueLease held = alice.tryAcquire("job", LEASE).orElseThrow();
        Duration shortLease = Duration.ofMillis(1500); // renewed every 500 ms of real time
        CompletableFuture<Optional<QueueLease>> waiting = bob.acquireAsync("job", shortLease, WAIT);
        await().atMost(Duration.ofSeconds(5)).until(() -> entries().size() == 2);
        long place = entries().get(1).createdIndex();

        // Four times the lease passes on cluster time, a second at a time, with a sweep after each second.
        for (int i = 0; i < 4; i++) {
            await().atMost(Duration.ofSeconds(5)).until(() -> entries().size() == 2
                    && entries().get(1).expiresAt() > cluster.now() + 1000);
            cluster.advance(Duration.ofSeconds(1));
            assertEquals(0, cluster.sweep(), "bob's entry had been renewed: nothing expired");
        }
        Item bobs = entries().get(1);
        assertEquals(place, bobs.createdIndex(), "same place");
        assertTrue(bobs.index() > place, "renewed: its index moved");

        alice.release(held);
        QueueLease got = waiting.join().orElseThrow();
        assertEquals(place, got.place(), "it was served at the place it joined at, renewals notwithstanding");
    }

    // ---- waiting ends

    @Test
    void aWaitingAcquireGivesUpAtItsWaitAndLeavesTheQueue() {
        QueueLease held = alice.tryAcquire("job", LEASE).orElseThrow();
        Duration wait = Duration.ofMillis(300);
        long start = System.nanoTime();

        Optional<QueueLease> got = bob.acquire("job", LEASE, wait);

        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertEquals(Optional.empty(), got);
        assertTrue(tookMillis >= wait.toMillis() - 10, "gave up after " + tookMillis + " ms");
        assertTrue(tookMillis < wait.plus(RatchetClient.WATCH_SLACK).toMillis(), "gave up after " + tookMillis + " ms");
        assertEquals(List.of(held.key()), entries().stream().map(Item::key).toList(), "bob's entry was removed");
    }

    @Test
    void aWaitOfZeroLooksOnceAndAFreeLockIsTakenAtOnce() {
        alice.tryAcquire("job", LEASE).orElseThrow();
        assertEquals(Optional.empty(), bob.acquire("job", LEASE, Duration.ZERO));
        assertEquals(0, cluster.pendingWatches());
        assertEquals(1, entries().size());

        QueueLease other = bob.acquire("other", LEASE, Duration.ofSeconds(5)).orElseThrow();
        assertTrue(other.key().startsWith("fair-locks/other/"));
        assertEquals(0, cluster.pendingWatches());
    }

    // ---- renew, release, lost leases

    @Test
    void renewalMovesTheIndexAndTheExpiryAndKeepsThePlace() {
        QueueLease lease = alice.tryAcquire("job", LEASE).orElseThrow();
        cluster.advance(Duration.ofSeconds(6));

        QueueLease renewed = alice.renew(lease);

        assertEquals(lease.fencingToken(), renewed.fencingToken());
        assertEquals(lease.key(), renewed.key());
        assertEquals("{\"owner\":\"alice\",\"holding\":true,\"token\":" + lease.fencingToken() + "}",
                cluster.item(lease.key()).orElseThrow().value(), "the entry carries its token from now on");
        assertTrue(renewed.currentIndex() > lease.currentIndex());
        assertEquals(Instant.ofEpochMilli(cluster.now() + LEASE.toMillis()), renewed.expiresAt());

        QueueLease byIndex = bob.renew("job", renewed.currentIndex(), Duration.ofSeconds(30));
        assertEquals("alice", byIndex.owner(), "the owner is read from the entry");
        assertEquals(lease.fencingToken(), byIndex.fencingToken());
        LeaseLostException stale = assertThrows(LeaseLostException.class, () -> alice.release(renewed));
        assertEquals(byIndex.currentIndex(), stale.holder().orElseThrow().index());
        bob.release("job", byIndex.currentIndex());
        assertTrue(entries().isEmpty());
    }

    @Test
    void aLeaseThatRanOutCannotBeRenewedAndNamesWhoHoldsNow() {
        QueueLease lease = alice.tryAcquire("job", Duration.ofSeconds(2)).orElseThrow();
        cluster.advance(Duration.ofSeconds(3));

        LeaseLostException ranOut = assertThrows(LeaseLostException.class, () -> alice.renew(lease));
        assertEquals(lease.currentIndex(), ranOut.holder().orElseThrow().index(), "nobody took it: it ran out");

        cluster.sweep();
        QueueLease taken = bob.tryAcquire("job", LEASE).orElseThrow();
        LeaseLostException gone = assertThrows(LeaseLostException.class, () -> alice.release(lease));
        assertEquals("bob", gone.holder().orElseThrow().owner());
        assertEquals(taken.fencingToken(), gone.holder().orElseThrow().fencingToken());
        assertThrows(LeaseLostException.class, () -> alice.renew("job", lease.currentIndex(), LEASE));
    }

    // ---- late answers: this process's clock only shortens a lease

    @Test
    void aWaitingAcquireWhoseJoinCameLateJoinsAgain() {
        AtomicLong skew = new AtomicLong();
        FairLocks late = new FairLocks(client, new LockOptions("carol", Duration.ofMinutes(5)),
                () -> System.nanoTime() + skew.get(), 1024);
        client.put("warm", 1, 0);
        long before = cluster.lastIndex();
        Duration lease = Duration.ofSeconds(1); // late by its lease, yet well within the wait
        skewOnce(skew, lease);

        QueueLease got = late.acquire("job", lease, WAIT).orElseThrow();

        assertTrue(got.place() > before + 1, "the first place (index " + (before + 1) + ") was given back");
        assertEquals(List.of(got.key()), entries().stream().map(Item::key).toList());
    }

    @Test
    void aRenewalAnsweredLaterThanItsLeaseIsLostAndGivenBack() {
        AtomicLong skew = new AtomicLong();
        FairLocks late = new FairLocks(client, new LockOptions("carol", Duration.ofMinutes(5)),
                () -> System.nanoTime() + skew.get(), 1024);
        QueueLease lease = late.tryAcquire("job", LEASE).orElseThrow();
        skewOnce(skew, LEASE);

        LeaseLostException e = assertThrows(LeaseLostException.class, () -> late.renew(lease));

        assertEquals(lease.currentIndex(), e.index());
        assertTrue(entries().isEmpty(), "the renewed lease was given back");
    }

    // ---- tickets

    @Test
    void aTicketsPlaceBecomesItsTokenAndALostTicketFailsItsAwait() {
        QueueLease held = alice.tryAcquire("job", LEASE).orElseThrow();
        Ticket ticket = bob.enqueue("job", LEASE);
        assertTrue(ticket.place() > held.fencingToken());
        CompletableFuture<Optional<QueueLease>> waiting = bob.awaitAsync(ticket, WAIT);

        alice.release(held);
        assertEquals(ticket.place(), waiting.join().orElseThrow().place());

        Ticket doomed = alice.enqueue("job", Duration.ofSeconds(2));
        cluster.advance(Duration.ofSeconds(3));
        cluster.sweep();
        CompletionException lost = assertThrows(CompletionException.class, () -> alice.awaitAsync(doomed, WAIT).join());
        assertInstanceOf(LeaseLostException.class, lost.getCause());
        assertEquals(doomed.currentIndex(), ((LeaseLostException) lost.getCause()).index());

        Ticket left = alice.enqueue("job", LEASE);
        alice.leave(left);
        assertFalse(entries().stream().anyMatch(i -> i.key().equals(left.key())));
    }

    /**
     * An await that ends without a turn says empty only when its place was certainly still held (the FIFO
     * check of the chaos harness relies on it); when the end comes with its place unconfirmed, it says lost.
     */
    @Test
    void anAwaitEndsEmptyOnlyWithItsPlaceConfirmed() {
        alice.tryAcquire("job", LEASE).orElseThrow();
        Ticket kept = bob.enqueue("job", LEASE);
        assertEquals(Optional.empty(), bob.await(kept, Duration.ofMillis(200)), "its place was held throughout");
        assertEquals(1, entries().size(), "and it left the queue");

        Ticket shaky = bob.enqueue("job", Duration.ofSeconds(1));
        cluster.delayAnswers(Duration.ofSeconds(3)); // nothing is answered before the await's end (wait + 1 s)
        CompletionException e = assertThrows(CompletionException.class,
                () -> bob.awaitAsync(shaky, Duration.ofMillis(200)).join());
        assertInstanceOf(LeaseLostException.class, e.getCause(), "a second after its last write, a 1 s place is unconfirmed");
        cluster.delayAnswers(Duration.ZERO);
    }

    // ---- the queue's shape

    @Test
    void orderIsByPlaceAcrossPagesAndNestedNamesAndOtherItemsAreNotEntries() {
        // A listing page of 2 makes a queue of a handful span several pages.
        FairLocks paged = new FairLocks(cluster.client(InProcessCluster.options(N1)), new LockOptions("p", Duration.ofMinutes(5)),
                System::nanoTime, 2);
        QueueLease nested = fair("x").tryAcquire("job/sub", LEASE).orElseThrow(); // fair-locks/job/sub/<hex>
        client.put("fair-locks/job/not-an-entry", 1, 0);
        QueueLease head = paged.tryAcquire("job", LEASE).orElseThrow(() -> new AssertionError("nothing else is in job's queue"));
        assertTrue(nested.fencingToken() < head.fencingToken());

        List<CompletableFuture<Optional<QueueLease>>> waiting = queueUp(4, owner -> new FairLocks(
                cluster.client(InProcessCluster.options(N1)), new LockOptions(owner, Duration.ofMinutes(5)), System::nanoTime, 2));
        assertEquals(List.of("p", "w0", "w1", "w2", "w3"), paged.queue("job").stream().map(QueueEntry::owner).toList());
        paged.release(head);
        List<Long> tokens = new ArrayList<>();
        for (CompletableFuture<Optional<QueueLease>> w : waiting) {
            QueueLease got = w.join().orElseThrow();
            tokens.add(got.fencingToken());
            fair(got.owner()).release(got);
        }
        assertEquals(tokens.stream().sorted().toList(), tokens, "served in the order of their places");
    }

    @Test
    void badInputIsRefusedBeforeAnythingIsSent() {
        QueueLease fake = new QueueLease("job", "alice", QUEUE + "0123456789abcdef", 4, 5, 5, Instant.now(), LEASE);

        assertInvalid(() -> alice.tryAcquire("job", Duration.ZERO));
        assertInvalid(() -> alice.tryAcquire("job", null));
        assertInvalid(() -> alice.tryAcquire("job", Duration.ofMinutes(6)));
        assertInvalid(() -> alice.tryAcquire("", LEASE));
        assertInvalid(() -> alice.tryAcquire(null, LEASE));
        assertInvalid(() -> alice.tryAcquire("x".repeat(600), LEASE));
        assertInvalid(() -> alice.acquire("job", LEASE, Duration.ofMillis(-1)));
        assertInvalid(() -> alice.acquire("job", LEASE, null));
        assertInvalid(() -> alice.enqueue("job", Duration.ZERO));
        assertInvalid(() -> alice.await(null, WAIT));
        assertInvalid(() -> alice.renew(fake, Duration.ofMinutes(6)));
        assertInvalid(() -> alice.renew(null));
        assertInvalid(() -> alice.renew(new QueueLease("job", "alice", "locks/job", 4, 5, 5, Instant.now(), LEASE)));
        assertInvalid(() -> alice.renew(new QueueLease("job", "alice", QUEUE + "0123456789abcdef", 4, 5, 0, Instant.now(), LEASE)));
        assertInvalid(() -> alice.renew(new QueueLease("other", "alice", QUEUE + "0123456789abcdef", 4, 5, 5, Instant.now(), LEASE)));
        assertInvalid(() -> alice.renew("job", 0, LEASE));
        assertInvalid(() -> alice.renew("job", 5, Duration.ZERO));
        assertInvalid(() -> alice.release(null));
        assertInvalid(() -> alice.release("job", 0));
        assertInvalid(() -> alice.release("", 5));
        assertInvalid(() -> alice.holder(""));

        assertEquals(List.of(), cluster.calls(), "the connector saw no call");
    }

    @Test
    void anAcquireThatGetsNoAnswerIsInDoubtAndTheQueueShowsIt() {
        client.put("warm", 1, 0);
        FairLocks shared = new FairLocks(client, new LockOptions("dora", Duration.ofMinutes(5)));
        cluster.dropAnswers(Integer.MAX_VALUE);

        assertThrows(UnknownOutcomeException.class, () -> shared.tryAcquire("job", LEASE));

        cluster.dropAnswers(0);
        assertEquals("dora", bob.holder("job").orElseThrow().owner(), "it was applied");
    }

    @Test
    void eachInstanceWithDefaultsHasItsOwnOwner() {
        assertNotEquals(new FairLocks(client).owner(), new FairLocks(client).owner());
    }

    // ---- helpers

    /**
     * The lease a waiter gets, within 2 s: a hand-off is a few calls, so a waiter that only gets its turn
     * when its watch times out (its wake-up was lost) fails here.
     */
    private static QueueLease promptly(CompletableFuture<Optional<QueueLease>> waiting) {
        try {
            return waiting.get(2, java.util.concurrent.TimeUnit.SECONDS).orElseThrow(() -> new AssertionError("a waiter gave up"));
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("the next waiter was not served within 2 s of the release: a lost wake-up", e);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Starts waiters w0..w{n-1} one after another, each once the previous one's entry is in the queue. */
    private List<CompletableFuture<Optional<QueueLease>>> queueUp(int n) {
        return queueUp(n, this::fair);
    }

    private List<CompletableFuture<Optional<QueueLease>>> queueUp(int n, Function<String, FairLocks> make) {
        List<CompletableFuture<Optional<QueueLease>>> waiting = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int before = entries().size();
            waiting.add(make.apply("w" + i).acquireAsync("job", LEASE, WAIT));
            await().atMost(Duration.ofSeconds(5)).until(() -> entries().size() == before + 1);
        }
        return waiting;
    }

    /** Lets each waiter in turn take the lock and release it. */
    private void releaseAll(List<CompletableFuture<Optional<QueueLease>>> waiting) {
        for (CompletableFuture<Optional<QueueLease>> w : waiting) {
            QueueLease got = w.join().orElseThrow();
            fair(got.owner()).release(got);
        }
    }

    /** The next write's answer reaches the caller, by its monotonic clock, a whole {@code lease} after it left. */
    private void skewOnce(AtomicLong skew, Duration lease) {
        AtomicBoolean once = new AtomicBoolean();
        cluster.afterWrite(() -> {
            if (once.compareAndSet(false, true)) {
                skew.addAndGet(lease.toNanos());
            }
        });
    }

    private List<Query> readsSince(int call) {
        List<Query> reads = new ArrayList<>();
        List<InProcessCluster.Call> calls = cluster.calls();
        for (InProcessCluster.Call c : calls.subList(call, calls.size())) {
            if (c.method() == Rpc.READ_CALL) {
                reads.add(Codec.decodeQuery(c.message()));
            }
        }
        return reads;
    }

    /** Watches armed from call {@code call} on, as key@afterIndex (a watch re-armed in its next slice counts once). */
    private Set<String> armedWatches(int call) {
        Set<String> armed = new HashSet<>();
        for (Query q : readsSince(call)) {
            if (q instanceof Query.Watch w) {
                armed.add(w.key() + "@" + w.afterIndex());
            }
        }
        return armed;
    }

    private Set<String> watchedKeys() {
        Set<String> keys = new HashSet<>();
        for (Query q : readsSince(0)) {
            if (q instanceof Query.Watch w) {
                keys.add(w.key());
            }
        }
        return keys;
    }

    private int writesBefore(int call) {
        return (int) cluster.calls().subList(0, call).stream().filter(InProcessCluster.Call::isWrite).count();
    }

    private static void assertInvalid(Executable call) {
        assertThrows(InvalidRequestException.class, call);
    }
}
