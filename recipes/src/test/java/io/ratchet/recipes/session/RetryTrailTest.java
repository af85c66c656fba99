package io.ratchet.recipes.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.Backoff;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.Metrics;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Document;
import io.ratchet.recipes.OnInProcessCluster;
import io.ratchet.testing.InProcessCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/**
 * The retry trail: events to listeners, to the debug log and in the exceptions; through the client,
 * against {@link InProcessCluster}.
 */
@Timeout(30)
class RetryTrailTest extends OnInProcessCluster {
    private static final Backoff BACKOFF = new Backoff(Duration.ofMillis(10), Duration.ofMillis(100));
    private static final String GUARD = Document.guardKey("counters/1");
    /** Lost answers that make the client give up on a save it delivered: one for each of its attempts. */
    private static final int UNANSWERED = InProcessCluster.options().maxAttempts();

    private ClusterAccess access;
    private final Metrics metrics = new Metrics();
    private final List<Duration> waits = new ArrayList<>();
    private final List<RetryEvent> events = new ArrayList<>();
    private Retry retry;

    @BeforeEach
    void start() {
        client.put("warm-up", 0, 0); // opens the client's session, so every write the hooks see is a save or a put
        access = ClusterAccess.of(client);
        retry = new Retry(access, metrics, SessionOptions.defaults(), BACKOFF, Retry.DEFAULT_RETENTION,
                () -> new SplittableRandom(7), d -> waits.add(d)).withListener(events::add);
    }

    private static void add(ClusterSession session, int amount) {
        int n = session.load("counters/1").map(d -> d.get("n").asInt()).orElse(0);
        session.store("counters/1", Map.of("n", n + amount));
    }

    /**
     * Another writer moves the item or document in the first {@code times} attempts' way; returns the
     * indexes it wrote at, in order.
     */
    private List<Long> interfere(int times, LongSupplier write) {
        AtomicInteger n = new AtomicInteger();
        List<Long> moved = new CopyOnWriteArrayList<>();
        cluster.beforeWrite(() -> {
            if (n.incrementAndGet() <= times) {
                moved.add(write.getAsLong());
            }
        });
        return moved;
    }

    @Test
    void theListenerSeesCheckMismatchAbortBackoffRetryAndTheOutcomeInOrder() {
        long loaded = cluster.putDocument("counters/1", "{\"n\":0}");
        List<Long> moved = interfere(2, () -> cluster.putDocument("counters/1", "{\"n\":50}"));

        long index = retry.run(5, s -> add(s, 1));

        String id = events.get(0).operationId();
        assertEquals(List.of(
                new RetryEvent.Check(id, 1, List.of(new RetryEvent.Condition(GUARD, loaded)), 0),
                new RetryEvent.Mismatch(id, 1, GUARD, loaded, moved.get(0)),
                new RetryEvent.Abort(id, 1),
                new RetryEvent.Backoff(id, 1, waits.get(0)),
                new RetryEvent.Retrying(id, 2),
                new RetryEvent.Check(id, 2, List.of(new RetryEvent.Condition(GUARD, moved.get(0))), 0),
                new RetryEvent.Mismatch(id, 2, GUARD, moved.get(0), moved.get(1)),
                new RetryEvent.Abort(id, 2),
                new RetryEvent.Backoff(id, 2, waits.get(1)),
                new RetryEvent.Retrying(id, 3),
                new RetryEvent.Check(id, 3, List.of(new RetryEvent.Condition(GUARD, moved.get(1))), 0),
                new RetryEvent.Committed(id, 3, index)), events);
        assertEquals(2, waits.size(), "the backoff events carry the waits the loop took");
    }

    @Test
    void anExhaustedLoopCarriesItsTrailAndItsLastConflictTheTrailUpToItsAbort() {
        cluster.putDocument("counters/1", "{\"n\":0}");
        cluster.beforeWrite(() -> cluster.putDocument("counters/1", "{\"n\":100}"));

        RetryExhaustedException e = assertThrows(RetryExhaustedException.class, () -> retry.run(3, s -> add(s, 1)));

        assertEquals(events, e.trail(), "the exception's trail is what the listener saw");
        String id = events.get(0).operationId();
        assertEquals(new RetryEvent.Exhausted(id, 3, false), e.trail().get(e.trail().size() - 1));
        assertEquals(3, e.trail().stream().filter(RetryEvent.Check.class::isInstance).count());
        assertEquals(2, e.trail().stream().filter(RetryEvent.Backoff.class::isInstance).count(), "none after the last attempt");
        ConcurrencyException last = assertInstanceOf(ConcurrencyException.class, e.getCause());
        assertEquals(e.trail().subList(0, e.trail().size() - 1), last.trail());
        assertEquals(new RetryEvent.Abort(id, 3), last.trail().get(last.trail().size() - 1));
        assertThrows(UnsupportedOperationException.class, () -> e.trail().add(new RetryEvent.Abort(id, 4)));
        assertThrows(UnsupportedOperationException.class, () -> last.trail().clear());
        assertTrue(new ConcurrencyException(List.of()).trail().isEmpty(), "a save outside a loop has no trail");
    }

    @Test
    void anUpdatesTrailNamesTheKeyWithTheExpectedAndActualIndexes() {
        long first = cluster.putItem("stock/widgets", "10");
        List<Long> moved = interfere(1, () -> cluster.putItem("stock/widgets", "9"));

        CompareExchangeResult sold = retry.update("stock/widgets", Integer.class, 3, n -> n - 1);

        String id = events.get(0).operationId();
        assertEquals(List.of(
                new RetryEvent.Check(id, 1, List.of(new RetryEvent.Condition("stock/widgets", first)), 0),
                new RetryEvent.Mismatch(id, 1, "stock/widgets", first, moved.get(0)),
                new RetryEvent.Abort(id, 1),
                new RetryEvent.Backoff(id, 1, waits.get(0)),
                new RetryEvent.Retrying(id, 2),
                new RetryEvent.Check(id, 2, List.of(new RetryEvent.Condition("stock/widgets", moved.get(0))), 0),
                new RetryEvent.Committed(id, 2, sold.index())), events);
        assertEquals(8, sold.valueAs(Integer.class));
    }

    @Test
    void anUnknownOutcomeEndsTheTrailAfterItsResendsAndAFailingUnitEndsItWithTheError() {
        cluster.dropAnswers((Retry.MAX_RESENDS + 1) * UNANSWERED); // applied; the save and every resend unanswered
        UnknownOutcomeException lost = assertThrows(UnknownOutcomeException.class, () -> retry.run(5, s -> add(s, 1)));
        String id = events.get(0).operationId();
        assertEquals(List.of(
                new RetryEvent.Check(id, 1, List.of(new RetryEvent.Condition(GUARD, 0)), 0),
                new RetryEvent.Resend(id, 1, 1),
                new RetryEvent.Resend(id, 1, 2),
                new RetryEvent.Resend(id, 1, 3),
                new RetryEvent.UnknownOutcome(id, 1, lost.getMessage())), events);

        events.clear();
        IllegalStateException boom = new IllegalStateException("boom");
        assertSame(boom, assertThrows(IllegalStateException.class, () -> retry.run(5, s -> {
            throw boom;
        })));
        assertEquals(List.of(new RetryEvent.Failed(events.get(0).operationId(), 1, boom)), events);

        events.clear();
        assertEquals(0, retry.run(5, s -> s.load("counters/2")));
        assertEquals(List.of(new RetryEvent.Committed(events.get(0).operationId(), 1, 0)), events, "nothing to save, nothing sent");
    }

    @Test
    void everyOperationHasItsOwnIdAndEveryListenerHearsIt() {
        List<RetryEvent> second = new ArrayList<>();
        Retry both = retry.withListener(second::add);

        both.update("a", Integer.class, 3, n -> 1);
        both.update("b", Integer.class, 3, n -> 1);

        assertEquals(4, events.size());
        assertEquals(events, second);
        assertFalse(events.get(0).operationId().equals(events.get(2).operationId()));
        assertEquals(events.get(0).operationId(), events.get(1).operationId());
    }

    @Test
    void theTrailIsLoggedAtDebugLevelAndAFailingListenerIsLoggedAndIgnored() {
        RecordingLogger log = new RecordingLogger(true);
        List<RetryEvent> after = new ArrayList<>();
        Retry logged = retry.withListener(e -> {
            throw new IllegalStateException("listener bug");
        }).withListener(after::add).withLogger(log);
        long first = cluster.putItem("k", "1");
        interfere(1, () -> cluster.putItem("k", "5"));

        CompareExchangeResult r = logged.update("k", Integer.class, 3, n -> n + 1);

        assertEquals(6, r.valueAs(Integer.class), "the loop went on");
        assertEquals(events, after, "the listeners after the failing one heard every event");
        assertEquals(events.stream().map(e -> "DEBUG " + e.describe()).toList(),
                log.lines.stream().filter(l -> l.startsWith("DEBUG")).toList());
        assertEquals(events.size(), log.lines.stream().filter(l -> l.startsWith("WARN a retry listener failed")).count());
        assertTrue(log.lines.get(0).contains("check 'k' at index " + first), log.lines.get(0));

        RecordingLogger quiet = new RecordingLogger(false);
        retry.withLogger(quiet).update("k", Integer.class, 3, n -> n + 1);
        assertEquals(List.of(), quiet.lines, "nothing below debug");
    }

    @Test
    void anUpdateFromInsideAnUpdateOfTheSameKeyFailsInsteadOfWaitingForItself() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> retry.update("k", Integer.class, 3,
                n -> retry.update("K", Integer.class, 3, m -> 1).valueAs(Integer.class)));
        assertTrue(e.getMessage().contains("drives an update of the same key"), e.getMessage());
        assertTrue(cluster.item("k").isEmpty(), "nothing was written");

        // Another key from inside an update is fine.
        CompareExchangeResult r = retry.update("k", Integer.class, 3,
                n -> retry.update("other", Integer.class, 3, m -> 7).valueAs(Integer.class) + 1);
        assertEquals(8, r.valueAs(Integer.class));
        assertEquals(0, UpdateCombiner.of(access).activeKeys());
    }

    @Test
    void anUpdateInterruptedWhileBackingOffGivesUpWithItsTrailAndKeepsTheFlag() {
        cluster.putItem("k", "1");
        cluster.beforeWrite(() -> cluster.putItem("k", "2"));
        Retry interrupted = retry.withSleeper(d -> {
            throw new InterruptedException();
        }, () -> new SplittableRandom(7));

        RetryExhaustedException e = assertThrows(RetryExhaustedException.class,
                () -> interrupted.update("k", Integer.class, 5, n -> n + 1));

        assertTrue(Thread.interrupted(), "the interrupt flag is kept (and cleared here)");
        assertEquals(1, e.attempts());
        String id = events.get(0).operationId();
        assertEquals(new RetryEvent.Exhausted(id, 1, true), e.trail().get(e.trail().size() - 1));
        assertEquals(1, metrics.stats("k").exhausted());
        assertEquals(0, UpdateCombiner.of(access).activeKeys());
    }

    /** An SLF4J logger that records what it is given, with debug on or off. */
    private static final class RecordingLogger extends LegacyAbstractLogger {
        final List<String> lines = new ArrayList<>();
        private final boolean debug;

        RecordingLogger(boolean debug) {
            this.debug = debug;
            this.name = "io.ratchet.recipes.session.Retry";
        }

        @Override
        public boolean isTraceEnabled() {
            return false;
        }

        @Override
        public boolean isDebugEnabled() {
            return debug;
        }

        @Override
        public boolean isInfoEnabled() {
            return true;
        }

        @Override
        public boolean isWarnEnabled() {
            return true;
        }

        @Override
        public boolean isErrorEnabled() {
            return true;
        }

        @Override
        protected String getFullyQualifiedCallerName() {
            return null;
        }

        @Override
        protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern, Object[] arguments,
                                                   Throwable throwable) {
            lines.add(level + " " + MessageFormatter.basicArrayFormat(pattern, arguments));
        }
    }
}
