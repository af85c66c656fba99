package io.ratchet.recipes.session;

import static io.ratchet.testing.InProcessCluster.N1;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.Backoff;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.Metrics;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import io.ratchet.protocol.Rpc;
import io.ratchet.recipes.OnInProcessCluster;
import io.ratchet.testing.InProcessCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import java.util.random.RandomGenerator;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Retry#update} calls of one client on one key combine: against {@link InProcessCluster} (the real
 * store behind the client's connector seam). To make updates queue at a known moment, a test holds the
 * answer of the first put on the cluster thread ({@link #holdFirstAnswer()}; the put is applied, only its
 * answer waits) until the other callers are queued, then lets it go.
 */
@Timeout(30)
class CombinedUpdateTest extends OnInProcessCluster {
    private static final String KEY = "counters/c";

    private final List<Duration> waits = new CopyOnWriteArrayList<>();
    /** Never sleeps: records the waits. */
    private Retry retry;
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final CountDownLatch held = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void start() {
        client.put(KEY, 0, 0); // opens the client's session too
        retry = Retry.of(client).withSleeper(waits::add, () -> new SplittableRandom(7));
    }

    @AfterEach
    void stop() {
        release.countDown();
        pool.shutdownNow();
    }

    // ---- backoff

    @Test
    void aPutRefusedAfterABackoffLongerThanItsRoundGoesAgainAtOnceWithTheStateItReturned() {
        RatchetClient other = cluster.client(InProcessCluster.options(N1));
        List<RetryEvent> events = new CopyOnWriteArrayList<>();
        // Every wait is the longest the backoff allows, a second, and another client moves the key during it.
        Retry.Sleeper moving = d -> {
            waits.add(d);
            other.put(KEY, 100, other.get(KEY).orElseThrow().index());
        };
        RandomGenerator longest = new RandomGenerator() {
            @Override
            public long nextLong() {
                return 0;
            }

            @Override
            public long nextLong(long bound) {
                return bound - 1;
            }
        };
        Retry waiting = Retry.of(client).withBackoff(new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(1)))
                .withSleeper(moving, () -> longest).withListener(events::add);
        AtomicBoolean interfered = new AtomicBoolean();

        CompareExchangeResult r = waiting.update(KEY, Long.class, 5, v -> {
            if (interfered.compareAndSet(false, true)) {
                other.put(KEY, 50, other.get(KEY).orElseThrow().index()); // moves it under the first put: contention
            }
            return v + 1;
        });

        // The first put (from 0) is refused with the state fresh: it backs off, and the key moves to 100 meanwhile.
        // The second (from 50, aged by the wait) is refused too: news, not contention; the third (from 100) lands.
        assertEquals(101L, r.valueAs(Long.class));
        assertEquals(List.of(Duration.ofSeconds(1)), waits, "one backoff");
        assertEquals(3, events.stream().filter(RetryEvent.Check.class::isInstance).count(), "three puts");
        assertEquals(1, events.stream().filter(RetryEvent.Backoff.class::isInstance).count());
    }

    // ---- escalation

    @Test
    void anUpdateRefusedEnoughTimesFinishesUnderTheKeysFairLockAndReleasesIt() {
        RatchetClient other = cluster.client(InProcessCluster.options(N1));
        List<RetryEvent> events = new CopyOnWriteArrayList<>();
        Retry escalating = retry.withEscalation(1).withListener(events::add);
        AtomicBoolean interfered = new AtomicBoolean();

        CompareExchangeResult r = escalating.update(KEY, Long.class, 5, v -> {
            if (interfered.compareAndSet(false, true)) {
                other.put(KEY, 100, other.get(KEY).orElseThrow().index()); // moves the key under the first put
            }
            return v + 1;
        });

        assertEquals(101L, r.valueAs(Long.class), "recomputed from the refusal's state, under the lock");
        RetryEvent.Escalated escalated = events.stream().filter(RetryEvent.Escalated.class::isInstance)
                .map(RetryEvent.Escalated.class::cast).findFirst().orElseThrow();
        assertEquals("retry/" + KEY, escalated.lock());
        assertEquals(1, escalated.refusals());
        assertTrue(escalated.fencingToken() > 0);
        assertTrue(events.indexOf(escalated) < events.size() - 1
                && events.get(events.size() - 1) instanceof RetryEvent.Committed, "the commit came after the lock: " + events);
        assertEquals(List.of(), client.list("fair-locks/retry/", 0, 10), "the lock is released when the update is done");
    }

    @Test
    void anUncontendedUpdateNeverTakesTheLock() {
        List<RetryEvent> events = new CopyOnWriteArrayList<>();
        retry.withEscalation(1).withListener(events::add).update(KEY, Long.class, 3, v -> v + 1);
        assertTrue(events.stream().noneMatch(RetryEvent.Escalated.class::isInstance), events.toString());
        assertThrows(IllegalArgumentException.class, () -> retry.withEscalation(0));
    }

    // ---- combining

    @Test
    void anUncontendedUpdateCostsOneReadAndOnePut() {
        int calls = cluster.calls().size();

        CompareExchangeResult r = retry.update(KEY, Long.class, 3, v -> v + 1);

        assertEquals(1L, r.valueAs(Long.class));
        List<InProcessCluster.Call> made = cluster.calls().subList(calls, cluster.calls().size());
        assertEquals(List.of(Rpc.READ_CALL, Rpc.WRITE_CALL), made.stream().map(InProcessCluster.Call::method).toList());
        assertEquals(0, UpdateCombiner.of(client).activeKeys(), "the key's slot is gone once nothing waits");
    }

    @Test
    void sixteenThreadsOfOneClientLandEveryUpdateExactlyOnceInFarFewerPuts() throws Exception {
        int threads = 16;
        int each = 50;
        List<Future<List<CompareExchangeResult>>> futures = new ArrayList<>();
        CountDownLatch go = new CountDownLatch(1);
        for (int t = 0; t < threads; t++) {
            // Half share one Retry, half make their own from the client: both combine, per client.
            Retry mine = t % 2 == 0 ? retry : Retry.of(client);
            futures.add(pool.submit(() -> {
                go.await();
                List<CompareExchangeResult> results = new ArrayList<>();
                for (int i = 0; i < each; i++) {
                    results.add(mine.update(KEY, Long.class, 5, v -> v + 1));
                }
                return results;
            }));
        }
        go.countDown();
        List<CompareExchangeResult> all = new ArrayList<>();
        for (Future<List<CompareExchangeResult>> f : futures) {
            all.addAll(f.get(20, TimeUnit.SECONDS));
        }

        assertEquals(threads * each, all.size());
        assertTrue(all.stream().allMatch(CompareExchangeResult::successful));
        assertEquals(800L, cluster.item(KEY).orElseThrow().valueNode().asLong(), "every update landed exactly once");
        // Each put's callers all got the item as that put left it: so the callers of the put at an index
        // number exactly the increase it made, and all of them see its final value.
        TreeMap<Long, List<CompareExchangeResult>> byIndex = all.stream()
                .collect(Collectors.groupingBy(CompareExchangeResult::index, TreeMap::new, Collectors.toList()));
        long previous = 0;
        for (Map.Entry<Long, List<CompareExchangeResult>> put : byIndex.entrySet()) {
            long value = put.getValue().get(0).valueAs(Long.class);
            assertTrue(put.getValue().stream().allMatch(r -> r.valueAs(Long.class) == value),
                    "one value per index: " + put.getValue());
            assertEquals(value - previous, put.getValue().size(), "callers of the put at " + put.getKey());
            previous = value;
        }
        assertEquals(800L, previous);
        Metrics.KeyStats stats = client.metrics().stats(KEY);
        assertEquals(byIndex.size(), stats.attempts(), "one attempt counted per put sent");
        assertEquals(byIndex.size(), stats.commits());
        assertEquals(0, stats.conflicts(), "one client's puts of a key never refuse each other");
        assertEquals(byIndex.size(), idempotencyKeysOfPuts(KEY).size());
        assertTrue(byIndex.size() <= threads * each / 4, "far fewer puts than updates: " + byIndex.size());
        assertEquals(0, UpdateCombiner.of(client).activeKeys());
    }

    @Test
    void updatesThatArriveWhileAPutIsInFlightGoOutAsOnePutAppliedInArrivalOrder() throws Exception {
        long created = client.put("log/order", "", 0).index();
        holdFirstAnswer();
        Caller a = call(retry, "log/order", String.class, 5, v -> v + "a");
        awaitHeld();
        Caller b = queue(retry, "log/order", String.class, 5, v -> v + "b", 1);
        Caller c = queue(retry, "log/order", String.class, 5, v -> v + "c", 2);
        Caller d = queue(retry, "LOG/Order", String.class, 5, v -> v + "d", 3); // same key, other spelling

        release.countDown();

        CompareExchangeResult first = a.result();
        assertEquals("a", first.valueAs(String.class));
        CompareExchangeResult combined = b.result();
        assertEquals("abcd", combined.valueAs(String.class), "applied in arrival order, each to the one before");
        assertTrue(combined.index() > first.index());
        assertEquals(combined, c.result(), "every caller gets the item as the combined write left it");
        assertEquals(combined, d.result());
        assertEquals(2, idempotencyKeysOfPuts("log/order").size(), "two puts for four updates");
        assertEquals(List.of(new RetryEvent.Check(a.id(), 1, List.of(new RetryEvent.Condition("log/order", created)), 0),
                new RetryEvent.Committed(a.id(), 1, first.index())), a.events);
        for (Caller x : List.of(b, c, d)) {
            assertEquals(List.of(new RetryEvent.Check(x.id(), 1, List.of(new RetryEvent.Condition("log/order", first.index())), 2),
                    new RetryEvent.Committed(x.id(), 1, combined.index())), x.events, "each caller's own view");
        }
        assertEquals(4, Set.of(a.id(), b.id(), c.id(), d.id()).size(), "one operation id per caller");
    }

    @Test
    void aFunctionThatThrowsOrReturnsNullIsTakenOutAloneAndTheOthersLand() throws Exception {
        holdFirstAnswer();
        Caller a = call(retry, KEY, Long.class, 5, v -> v + 1);
        awaitHeld();
        IllegalStateException boom = new IllegalStateException("boom");
        Caller b = queue(retry, KEY, Long.class, 5, v -> v + 1, 1);
        Caller thrower = queue(retry, KEY, Long.class, 5, v -> {
            throw boom;
        }, 2);
        Caller nullifier = queue(retry, KEY, Long.class, 5, v -> null, 3);
        Caller e = queue(retry, KEY, Long.class, 5, v -> v + 10, 4);

        release.countDown();

        assertEquals(1L, a.result().valueAs(Long.class));
        assertSame(boom, thrower.error(), "the thrower gets its own exception");
        assertInstanceOf(InvalidRequestException.class, nullifier.error(), "null is not a value");
        CompareExchangeResult combined = b.result();
        assertEquals(12L, combined.valueAs(Long.class), "1, then +1 and +10: the others' updates only");
        assertEquals(combined, e.result());
        assertEquals(12L, cluster.item(KEY).orElseThrow().valueNode().asLong());
        assertEquals(2, idempotencyKeysOfPuts(KEY).size());
        assertEquals(new RetryEvent.Failed(thrower.id(), 1, boom), last(thrower.events));
        assertEquals(1, thrower.events.size(), "taken out before anything was sent for it");
        assertEquals(1, ((RetryEvent.Check) b.events.get(0)).combinedWith(), "b's put carried e's update, not the failed ones");
    }

    @Test
    void aRefusalRecomputesEveryCallerFromTheStateItReturnedWithoutAnotherRead() throws Exception {
        RatchetClient other = otherClient();
        holdFirstAnswer();
        Caller a = call(retry, KEY, Long.class, 5, v -> v + 1);
        awaitHeld();
        Caller b = queue(retry, KEY, Long.class, 5, v -> v + 1, 1);
        Caller c = queue(retry, KEY, Long.class, 5, v -> v + 1, 2);
        long first = cluster.lastIndex(); // a's put, applied; its answer is held
        CompletableFuture<CompareExchangeResult> intruder = intrude(other, first, 100);
        long reads = readCalls();

        release.countDown();

        assertEquals(first, a.result().index());
        CompareExchangeResult moved = intruder.get(5, TimeUnit.SECONDS);
        assertTrue(moved.successful());
        CompareExchangeResult combined = b.result();
        assertEquals(102L, combined.valueAs(Long.class), "recomputed from the refusal's 100, not from the stale 1");
        assertEquals(combined, c.result());
        assertEquals(reads, readCalls(), "no read after the refusal");
        assertEquals(3, idempotencyKeysOfPuts(KEY).size(), "a's put, the refused combined one, the recomputed one");
        assertEquals(1, waits.size(), "one backoff, for the refused put");
        assertTrue(waits.get(0).toNanos() <= Retry.DEFAULT_BACKOFF.ceilingNanos(1));
        assertEquals(List.of(
                new RetryEvent.Check(b.id(), 1, List.of(new RetryEvent.Condition(KEY, first)), 1),
                new RetryEvent.Mismatch(b.id(), 1, KEY, first, moved.index()),
                new RetryEvent.Abort(b.id(), 1),
                new RetryEvent.Backoff(b.id(), 1, waits.get(0)),
                new RetryEvent.Retrying(b.id(), 2),
                new RetryEvent.Check(b.id(), 2, List.of(new RetryEvent.Condition(KEY, moved.index())), 1),
                new RetryEvent.Committed(b.id(), 2, combined.index())), b.events);
        Metrics.KeyStats stats = client.metrics().stats(KEY);
        assertEquals(new Metrics.KeyStats(KEY, 3, 2, 1, 0), stats, "counted once per put sent");
        Metrics.WindowStats window = client.metrics().windowed(KEY);
        assertEquals(1, window.conflicts());
        assertTrue(window.discarded().compareTo(Duration.ZERO) > 0, "the refused put's time is work thrown away");
        assertTrue(window.p99() != null, "every caller's loop time is in the window's histogram");
    }

    @Test
    void aCallerWhoseAttemptsRunOutGivesUpWhileTheOthersGoOn() throws Exception {
        RatchetClient other = otherClient();
        holdFirstAnswer();
        Caller a = call(retry, KEY, Long.class, 5, v -> v + 1);
        awaitHeld();
        Caller once = queue(retry, KEY, Long.class, 1, v -> v + 1, 1);
        Caller patient = queue(retry, KEY, Long.class, 5, v -> v + 1, 2);
        long first = cluster.lastIndex();
        CompletableFuture<CompareExchangeResult> intruder = intrude(other, first, 100);

        release.countDown();

        a.result();
        long actual = intruder.get(5, TimeUnit.SECONDS).index();
        RetryExhaustedException e = assertInstanceOf(RetryExhaustedException.class, once.error());
        assertEquals(1, e.attempts());
        assertTrue(e.getMessage().contains("expected index " + first), e.getMessage());
        List<RetryEvent> trail = List.of(
                new RetryEvent.Check(once.id(), 1, List.of(new RetryEvent.Condition(KEY, first)), 1),
                new RetryEvent.Mismatch(once.id(), 1, KEY, first, actual),
                new RetryEvent.Abort(once.id(), 1),
                new RetryEvent.Exhausted(once.id(), 1, false));
        assertEquals(trail, e.trail());
        assertEquals(trail, once.events);
        ConcurrencyException conflict = assertInstanceOf(ConcurrencyException.class, e.getCause());
        assertEquals(List.of(new Result.Conflict(KEY, first, actual)), conflict.conflicts());
        assertEquals(trail.subList(0, 3), conflict.trail(), "the conflict's trail ends at its abort");

        CompareExchangeResult landed = patient.result();
        assertEquals(101L, landed.valueAs(Long.class), "the patient caller's update alone, from the refusal's state");
        assertEquals(101L, cluster.item(KEY).orElseThrow().valueNode().asLong(), "the exhausted update never landed");
        assertEquals(1, client.metrics().stats(KEY).exhausted());
        assertEquals(0, ((RetryEvent.Check) patient.events.get(5)).combinedWith(), "alone on its second attempt");
    }

    @Test
    void aCombinedPutWhoseAnswerIsLostIsResentWithTheSameIdempotencyKeyAndAppliedOnce() throws Exception {
        AtomicInteger writes = new AtomicInteger();
        int unanswered = InProcessCluster.options().maxAttempts();
        cluster.afterWrite(() -> {
            int n = writes.incrementAndGet();
            if (n == 1) {
                hold();
            } else if (n == 2) {
                // The combined put: it applies, and neither it nor the client's own resends are answered,
                // so the client gives up with an unknown outcome and Retry resends it under its key.
                cluster.dropAnswers(unanswered);
            }
        });
        Caller a = call(retry, KEY, Long.class, 5, v -> v + 1);
        awaitHeld();
        Caller b = queue(retry, KEY, Long.class, 5, v -> v + 1, 1);
        Caller c = queue(retry, KEY, Long.class, 5, v -> v + 1, 2);

        release.countDown();

        assertEquals(1L, a.result().valueAs(Long.class));
        CompareExchangeResult combined = b.result();
        assertEquals(3L, combined.valueAs(Long.class));
        assertEquals(combined, c.result());
        assertEquals(3L, cluster.item(KEY).orElseThrow().valueNode().asLong(), "applied once");
        Set<String> keys = idempotencyKeysOfPuts(KEY);
        assertEquals(2, keys.size(), "every resend carried the combined put's one key");
        String combinedKey = keys.stream().filter(k -> cluster.writeCalls().stream()
                .filter(call -> call.requests().stream().anyMatch(r -> k.equals(r.idempotencyKey()))).count() > 1)
                .findFirst().orElseThrow();
        long sent = cluster.writeCalls().stream()
                .filter(call -> call.requests().stream().anyMatch(r -> combinedKey.equals(r.idempotencyKey()))).count();
        assertEquals(unanswered + 1, sent, "the client's unanswered attempts, then Retry's resend");
        for (Caller x : List.of(b, c)) {
            assertEquals(List.of(
                    new RetryEvent.Check(x.id(), 1, List.of(new RetryEvent.Condition(KEY, a.result().index())), 1),
                    new RetryEvent.Resend(x.id(), 1, 1),
                    new RetryEvent.Committed(x.id(), 1, combined.index())), x.events);
        }
        assertEquals(new Metrics.KeyStats(KEY, 2, 2, 0, 0), client.metrics().stats(KEY), "a resend is no new attempt");
    }

    // ---- helpers

    /** One caller's update on its own thread, through a Retry that records that caller's events. */
    private final class Caller {
        final List<RetryEvent> events = new CopyOnWriteArrayList<>();
        final Future<CompareExchangeResult> future;

        <T> Caller(Retry through, String key, Class<T> type, int maxAttempts, UnaryOperator<T> fn) {
            Retry mine = through.withListener(events::add);
            future = pool.submit(() -> mine.update(key, type, maxAttempts, fn));
        }

        CompareExchangeResult result() throws Exception {
            return future.get(10, TimeUnit.SECONDS);
        }

        Throwable error() throws Exception {
            try {
                future.get(10, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                return e.getCause();
            }
            throw new AssertionError("the update succeeded");
        }

        /** The caller's operation id; its first event is emitted before it is settled. */
        String id() {
            assertTrue(future.isDone() || !events.isEmpty(), "the caller has taken part in a round");
            return events.get(0).operationId();
        }
    }

    private <T> Caller call(Retry through, String key, Class<T> type, int maxAttempts, UnaryOperator<T> fn) {
        return new Caller(through, key, type, maxAttempts, fn);
    }

    /** Starts a caller and waits until it is the {@code position}-th update queued behind the held put. */
    private <T> Caller queue(Retry through, String key, Class<T> type, int maxAttempts, UnaryOperator<T> fn, int position) {
        Caller caller = new Caller(through, key, type, maxAttempts, fn);
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(1))
                .until(() -> UpdateCombiner.of(client).waiting(Keys.normalize(key)) == position);
        return caller;
    }

    /** The first write applied from now on keeps its answer until {@link #release}. */
    private void holdFirstAnswer() {
        AtomicInteger writes = new AtomicInteger();
        cluster.afterWrite(() -> {
            if (writes.incrementAndGet() == 1) {
                hold();
            }
        });
    }

    /** On the cluster thread, after a write applied: waits for the test to release its answer. */
    private void hold() {
        held.countDown();
        try {
            release.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void awaitHeld() throws InterruptedException {
        assertTrue(held.await(5, TimeUnit.SECONDS), "the first put reached the cluster");
    }

    /** A second client, its session already open. */
    private RatchetClient otherClient() {
        RatchetClient other = cluster.client(InProcessCluster.options(N1));
        other.put("warm", 0, 0);
        return other;
    }

    /**
     * Another client's put of {@code value} at {@code index}, sent now: it is queued on the cluster thread
     * behind the held answer, so it applies before the combined put that the answer lets go.
     */
    private CompletableFuture<CompareExchangeResult> intrude(RatchetClient other, long index, long value) {
        int calls = cluster.writeCalls().size();
        CompletableFuture<CompareExchangeResult> put = other.putAsync(KEY, value, index);
        assertEquals(calls + 1, cluster.writeCalls().size(), "a lone write is sent at once, on the calling thread");
        return put;
    }

    private long readCalls() {
        return cluster.calls().stream().filter(c -> c.method() == Rpc.READ_CALL).count();
    }

    /** The distinct puts of {@code key} that Retry sent: one idempotency key each, however often it was resent. */
    private Set<String> idempotencyKeysOfPuts(String key) {
        return cluster.writeCalls().stream()
                .flatMap(c -> c.requests().stream())
                .filter(r -> r.commands().stream().anyMatch(c -> c instanceof Command.Put p && p.key().equalsIgnoreCase(key)))
                .map(Request::idempotencyKey)
                .filter(Objects::nonNull)
                .collect(Collectors.toSet());
    }

    private static RetryEvent last(List<RetryEvent> events) {
        return events.get(events.size() - 1);
    }
}
