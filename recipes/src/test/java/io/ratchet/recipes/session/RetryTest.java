package io.ratchet.recipes.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.IntNode;
import io.ratchet.client.Backoff;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.Metrics;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.recipes.OnInProcessCluster;
import io.ratchet.testing.InProcessCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The retry loop's attempts, waits, escape path and counters; through the client, against
 * {@link InProcessCluster}, without sleeping between attempts.
 */
@Timeout(30)
class RetryTest extends OnInProcessCluster {
    private static final Backoff BACKOFF = new Backoff(Duration.ofMillis(10), Duration.ofMillis(100));
    /** Lost answers that make the client give up on a save it delivered: one for each of its attempts. */
    private static final int UNANSWERED = InProcessCluster.options().maxAttempts();

    private final Metrics metrics = new Metrics();
    private final List<Duration> waits = new ArrayList<>();
    private Retry retry;

    @BeforeEach
    void start() {
        client.put("warm-up", 0, 0); // opens the client's session, so every write the hooks see is a save
        retry = new Retry(ClusterAccess.of(client), metrics, SessionOptions.defaults(), BACKOFF, Retry.DEFAULT_RETENTION,
                () -> new SplittableRandom(7), d -> waits.add(d));
    }

    /** The unit of work of every test here: add {@code amount} to a counter document. */
    private static void add(ClusterSession session, int amount) {
        int n = session.load("counters/1").map(d -> d.get("n").asInt()).orElse(0);
        session.store("counters/1", Map.of("n", n + amount));
    }

    private int counter() {
        return Integer.parseInt(cluster.document("counters/1").orElseThrow().node().get("n").toString());
    }

    /** The transaction messages the client sent, each once however often it resent it: the saves Retry made. */
    private List<Batch> savesSent() {
        return cluster.writeCalls().stream().map(c -> Codec.decodeBatches(c.message()).get(0))
                .filter(b -> b.requests().stream().anyMatch(r -> r.commands().get(0) instanceof Command.Transaction))
                .distinct().toList();
    }

    @Test
    void aUnitThatKeepsConflictingRunsMaxAttemptsTimesThenGivesUpWithNothingApplied() {
        cluster.putDocument("counters/1", "{\"n\":0}");
        // Another writer moves the guard between every load and save.
        cluster.beforeWrite(() -> cluster.putDocument("counters/1", "{\"n\":100}"));
        AtomicInteger runs = new AtomicInteger();

        RetryExhaustedException e = assertThrows(RetryExhaustedException.class, () -> retry.run(5, s -> {
            runs.incrementAndGet();
            add(s, 1);
        }));

        assertEquals(5, e.attempts());
        assertEquals(5, runs.get());
        assertInstanceOf(ConcurrencyException.class, e.getCause());
        assertEquals(100, counter(), "no attempt applied anything");
        assertEquals(4, waits.size(), "a wait between attempts, none after the last");
        for (int i = 0; i < waits.size(); i++) {
            assertTrue(waits.get(i).toNanos() <= BACKOFF.ceilingNanos(i + 1), "wait " + i + " is within its ceiling");
        }
        Metrics.KeyStats guard = metrics.stats("rvn-atomic/counters/1");
        assertEquals(new Metrics.KeyStats("rvn-atomic/counters/1", 5, 0, 5, 1), guard);
        assertEquals(Double.POSITIVE_INFINITY, guard.attemptsPerCommit());
    }

    @Test
    void aUnitThatConflictsTwiceCommitsOnTheThirdAttemptFromFreshState() {
        cluster.putDocument("counters/1", "{\"n\":0}");
        AtomicInteger interference = new AtomicInteger();
        cluster.beforeWrite(() -> {
            if (interference.incrementAndGet() <= 2) {
                cluster.putDocument("counters/1", "{\"n\":" + (interference.get() * 10) + "}");
            }
        });
        List<Integer> seen = new ArrayList<>();

        long index = retry.run(5, s -> {
            seen.add(s.load("counters/1").orElseThrow().get("n").asInt());
            add(s, 1);
        });

        assertEquals(List.of(0, 10, 20), seen, "each attempt recomputes from a fresh read");
        assertEquals(21, counter());
        assertEquals(index, cluster.document("counters/1").orElseThrow().index());
        Metrics.KeyStats guard = metrics.stats("RVN-ATOMIC/counters/1");
        assertEquals(3, guard.attempts());
        assertEquals(1, guard.commits());
        assertEquals(2, guard.conflicts());
        assertEquals(3.0, guard.attemptsPerCommit());
        assertEquals(2, waits.size());
    }

    @Test
    void updateRecomputesFromTheRefusedPutsValueWithoutAnotherRead() {
        cluster.putItem("stock/widgets", "10");
        AtomicInteger interference = new AtomicInteger();
        cluster.beforeWrite(() -> {
            if (interference.incrementAndGet() <= 2) {
                cluster.putItem("stock/widgets", String.valueOf(10 - interference.get()));
            }
        });
        List<Integer> inputs = new ArrayList<>();

        CompareExchangeResult sold = retry.update("stock/widgets", JsonNode.class, 5, n -> {
            inputs.add(n.asInt());
            return IntNode.valueOf(n.asInt() - 3);
        });

        assertTrue(sold.successful());
        assertEquals(List.of(10, 9, 8), inputs, "each attempt starts from the value the refusal returned");
        assertEquals(5, cluster.item("stock/widgets").orElseThrow().valueNode().asInt());
        assertEquals(1, cluster.readCalls().size(), "only the first value was read");
        assertEquals(new Metrics.KeyStats("stock/widgets", 3, 1, 2, 0), metrics.stats("stock/widgets"));
    }

    @Test
    void updateOfAnAbsentItemCreatesItAndGivesUpWhenItKeepsMoving() {
        CompareExchangeResult created = retry.update("counters/visits", Integer.class, 3, n -> n == null ? 1 : n + 1);
        assertEquals(1, created.valueNode().asInt());

        cluster.beforeWrite(() -> cluster.putItem("counters/visits", "1000"));
        RetryExhaustedException e = assertThrows(RetryExhaustedException.class,
                () -> retry.update("counters/visits", Integer.class, 3, n -> n + 1));
        assertEquals(3, e.attempts());
        assertTrue(e.getMessage().contains("counters/visits"), e.getMessage());
        assertEquals(1, metrics.stats("counters/visits").exhausted());
    }

    @Test
    void aLostAnswerIsResentWithTheSameKeyAndTheUnitRunsOnce() {
        cluster.dropAnswers(2 * UNANSWERED); // the save and its first resend: applied, outcome unknown
        AtomicInteger runs = new AtomicInteger();

        retry.run(3, s -> {
            runs.incrementAndGet();
            add(s, 5);
        });

        assertEquals(1, runs.get(), "the unit of work is not re-run for a lost answer");
        assertEquals(1, cluster.transactionsCommitted(), "the resends were answered from the first outcome");
        assertEquals(5, counter());
        assertEquals(3, savesSent().size(), "one send, two resends");
        assertEquals(2 * UNANSWERED + 1, cluster.transactionsSent().size(), "the client's own resends of the first two");
    }

    @Test
    void withoutIdempotentSavesALostAnswerEndsTheLoop() {
        cluster.dropAnswers(UNANSWERED);
        AtomicInteger runs = new AtomicInteger();
        assertThrows(UnknownOutcomeException.class, () -> retry.withoutIdempotentSaves().run(3, s -> {
            runs.incrementAndGet();
            add(s, 5);
        }));
        assertEquals(1, runs.get(), "a unit that may have been applied is never re-run");
        assertEquals(5, counter(), "and it was: only its answers were lost");
    }

    @Test
    void aLostAnswerThatStaysLostIsReportedAsUnknownNotRetriedForever() {
        cluster.dropAnswers((Retry.MAX_RESENDS + 1) * UNANSWERED);
        assertThrows(UnknownOutcomeException.class, () -> retry.run(10, s -> add(s, 1)));
        assertEquals(Retry.MAX_RESENDS + 1, savesSent().size());
        assertEquals(1, cluster.transactionsCommitted());
    }

    @Test
    void anInvalidUnitOrAFailingOneIsNotRetried() {
        AtomicInteger runs = new AtomicInteger();
        assertThrows(InvalidRequestException.class, () -> retry.run(5, s -> {
            runs.incrementAndGet();
            s.store("counters/1", List.of("not", "an", "object"));
        }));
        assertThrows(IllegalStateException.class, () -> retry.run(5, s -> {
            runs.incrementAndGet();
            add(s, 1);
            s.saveChanges();
        }), "the loop saves the unit itself, once");
        assertEquals(2, runs.get());
        assertThrows(IllegalArgumentException.class, () -> retry.run(0, s -> { }));
    }

    @Test
    void aUnitThatChangesNothingSendsNothing() {
        assertEquals(0, retry.run(3, s -> s.load("counters/1")));
        assertEquals(List.of(), cluster.transactionsSent());
        assertEquals("done", retry.call(3, s -> "done"));
    }
}
