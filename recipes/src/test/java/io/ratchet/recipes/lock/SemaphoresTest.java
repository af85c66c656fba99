package io.ratchet.recipes.lock;

import static io.ratchet.testing.InProcessCluster.N1;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.InvalidRequestException;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Rpc;
import io.ratchet.recipes.OnInProcessCluster;
import io.ratchet.testing.InProcessCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The leased counting semaphore against {@link InProcessCluster}: bound, order, wake-ups, agreement on N. */
@Timeout(20)
class SemaphoresTest extends OnInProcessCluster {
    private static final Duration LEASE = Duration.ofSeconds(60);
    private static final Duration WAIT = Duration.ofSeconds(15);
    private static final String QUEUE = "semaphores/pool/";

    private Semaphores sem(String owner) {
        return new Semaphores(cluster.client(InProcessCluster.options(N1)), new LockOptions(owner, Duration.ofMinutes(5)));
    }

    private List<Item> entries() {
        return cluster.read(s -> s.list(QUEUE, 0, 1000)).stream()
                .filter(i -> QueueListing.isEntryKey(QUEUE, i.key()))
                .sorted((a, b) -> Long.compare(a.createdIndex(), b.createdIndex())).toList();
    }

    @Test
    void nHoldersAtMostAndTheFirstSetsTheNumberOfPermits() {
        QueueLease a = sem("a").tryAcquire("pool", 2, LEASE).orElseThrow();
        QueueLease b = sem("b").tryAcquire("pool", 2, LEASE).orElseThrow();

        assertEquals(Optional.empty(), sem("c").tryAcquire("pool", 2, LEASE), "both permits are held");
        assertEquals("{\"permits\":2}", cluster.item("semaphores/pool/permits").orElseThrow().value());
        assertEquals(List.of(a.key(), b.key()), entries().stream().map(Item::key).toList(), "the refused one left");
        assertTrue(b.fencingToken() > a.fencingToken());
        assertEquals(List.of("a", "b"), sem("x").holders("pool").stream().map(LockHolder::owner).toList());
        assertEquals(Optional.of(2), sem("x").permits("pool"));

        sem("a").release(a);
        assertTrue(sem("c").tryAcquire("pool", 2, LEASE).isPresent(), "a freed permit is taken at once");
    }

    @Test
    void aDifferentNumberOfPermitsIsRefusedAndLeavesNothing() {
        sem("a").tryAcquire("pool", 2, LEASE).orElseThrow();
        List<Item> before = entries();

        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> sem("b").acquire("pool", 3, LEASE, WAIT));
        assertTrue(e.getMessage().contains("has 2 permits"), e.getMessage());
        assertThrows(InvalidRequestException.class, () -> sem("b").tryAcquire("pool", 1, LEASE));

        assertEquals(before, entries(), "the refused acquires left the queue");
        assertEquals("{\"permits\":2}", cluster.item("semaphores/pool/permits").orElseThrow().value());
        assertThrows(InvalidRequestException.class, () -> sem("b").tryAcquire("pool", 0, LEASE));
        assertThrows(InvalidRequestException.class, () -> sem("b").tryAcquire("pool", Semaphores.MAX_PERMITS + 1, LEASE));
    }

    /**
     * Two permits, six waiters behind two holders. Each release must let in exactly the next waiter in
     * line, and at no point may more than two acquires hold a permit.
     */
    @Test
    void permitsGoToWaitersInTheOrderTheyJoinedAndNeverMoreThanN() {
        List<QueueLease> holding = new ArrayList<>();
        holding.add(sem("h0").tryAcquire("pool", 2, LEASE).orElseThrow());
        holding.add(sem("h1").tryAcquire("pool", 2, LEASE).orElseThrow());
        List<CompletableFuture<Optional<QueueLease>>> waiting = queueUp(6, 2);
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.pendingWatches() >= 6);
        assertTrue(waiting.stream().noneMatch(CompletableFuture::isDone));

        List<String> served = new ArrayList<>();
        int next = 0;
        // Release the holders in an order unlike the one they came in: the latest holder first.
        while (!holding.isEmpty()) {
            QueueLease leaving = holding.remove(holding.size() - 1);
            sem(leaving.owner()).release(leaving);
            if (next < waiting.size()) {
                QueueLease got = promptly(waiting.get(next));
                served.add(got.owner());
                holding.add(0, got);
                next++;
                for (int later = next; later < waiting.size(); later++) {
                    assertFalse(waiting.get(later).isDone(), "w" + later + " got a permit out of turn");
                }
            }
            assertTrue(holding.size() <= 2, "holders: " + holding);
            assertEquals(holding.size() + (waiting.size() - next), entries().size());
        }
        assertEquals(List.of("w0", "w1", "w2", "w3", "w4", "w5"), served);
    }

    /**
     * With several permits the release wakes the first waiter alone; as it takes the permit it renews its
     * entry, which wakes the one waiter behind it (to watch the holders instead). No other waiter looks.
     */
    @Test
    void aReleaseWakesTheFirstWaiterAndItTellsOnlyTheNext() {
        QueueLease h0 = sem("h0").tryAcquire("pool", 2, LEASE).orElseThrow();
        sem("h1").tryAcquire("pool", 2, LEASE).orElseThrow();
        List<CompletableFuture<Optional<QueueLease>>> waiting = queueUp(4, 2);
        // w0 watches both holders; w1..w3 each their predecessor.
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.pendingWatches() == 5);
        int callsBefore = cluster.calls().size();
        Set<String> armedBefore = armedSince(0);

        sem("h0").release(h0);
        QueueLease got = waiting.get(0).join().orElseThrow();
        assertTrue(got.fencingToken() > got.place(), "w0 renewed its entry as it took the permit (its turn write)");
        // w1, woken by that renewal, now watches the holders: w0 at its new index among them.
        await().atMost(Duration.ofSeconds(5)).until(() -> armedSince(callsBefore)
                .contains(got.key().toLowerCase() + "@" + got.currentIndex()));

        long lists = readsSince(callsBefore).stream().filter(q -> q instanceof Query.ListItems).count();
        assertEquals(2, lists, "w0 looked because a holder left, w1 because w0 took the permit; w2 and w3 slept");
        assertTrue(waiting.subList(1, 4).stream().noneMatch(CompletableFuture::isDone));
        Set<String> watchedByOthers = armedSince(callsBefore);
        watchedByOthers.removeAll(armedBefore); // a watch re-armed in its next slice is no new watch
        watchedByOthers.remove(got.key().toLowerCase() + "@" + got.currentIndex());
        entries().stream().filter(e -> e.createdIndex() < got.fencingToken())
                .forEach(h -> watchedByOthers.remove(h.key().toLowerCase() + "@" + h.index()));
        assertEquals(Set.of(), watchedByOthers, "no watch but w1's on the holders was armed");
    }

    @Test
    void renewAndReleaseByIndexAndALostLease() {
        Semaphores a = sem("a");
        QueueLease lease = a.tryAcquire("pool", 3, LEASE).orElseThrow();
        QueueLease renewed = sem("cli").renew("pool", lease.currentIndex(), Duration.ofSeconds(30));
        assertEquals(lease.fencingToken(), renewed.fencingToken());
        assertEquals("a", renewed.owner());
        assertThrows(LeaseLostException.class, () -> a.release(lease), "the index moved on");
        sem("cli").release("pool", renewed.currentIndex());
        assertTrue(entries().isEmpty());
        assertThrows(LeaseLostException.class, () -> a.renew(renewed));
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

    private List<CompletableFuture<Optional<QueueLease>>> queueUp(int n, int permits) {
        List<CompletableFuture<Optional<QueueLease>>> waiting = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int before = entries().size();
            waiting.add(sem("w" + i).acquireAsync("pool", permits, LEASE, WAIT));
            await().atMost(Duration.ofSeconds(5)).until(() -> entries().size() == before + 1);
        }
        return waiting;
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

    private Set<String> armedSince(int call) {
        Set<String> armed = new HashSet<>();
        for (Query q : readsSince(call)) {
            if (q instanceof Query.Watch w) {
                armed.add(w.key().toLowerCase() + "@" + w.afterIndex());
            }
        }
        return armed;
    }
}
