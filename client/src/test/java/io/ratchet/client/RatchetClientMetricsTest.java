package io.ratchet.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ratchet.client.micrometer.RatchetClientMetrics;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RatchetClientMetricsTest {

    @Test
    void theHighestConflictRatesGoToTheRegistryAsTaggedGaugesAndTotalsAsCounters() {
        AtomicLong now = new AtomicLong(0);
        Metrics metrics = new Metrics(100, Duration.ofMinutes(5), now::get);
        MetricsTest.record(metrics, "calm", 10, 10, 0);
        MetricsTest.record(metrics, "hot", 10, 2, 8);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new RatchetClientMetrics(metrics, new ClientEvents(), Tags.empty()).bindTo(registry);
        assertEquals(20.0, registry.get("ratchet.client.attempts").functionCounter().count());
        assertEquals(12.0, registry.get("ratchet.client.commits").functionCounter().count());
        assertEquals(8.0, registry.get("ratchet.client.conflicts").functionCounter().count());
        assertEquals(0.8, registry.get("ratchet.client.key.conflict.rate").tag("key", "hot").gauge().value(), 1e-9);
        assertEquals(5.0, registry.get("ratchet.client.key.attempts.per.commit").tag("key", "hot").gauge().value(), 1e-9);

        for (int i = 0; i < 20; i++) {
            metrics.attempted("other/" + i);
            metrics.conflicted("other/" + i);
        }
        now.addAndGet(Duration.ofSeconds(2).toNanos());
        metrics.conflicted("other/0"); // a conflict a second later refreshes which keys are exported
        assertEquals(Metrics.EXPORTED_KEYS, registry.find("ratchet.client.key.conflict.rate").gauges().size(),
                "at most the top keys are exported");
        assertNull(registry.find("ratchet.client.key.conflict.rate").tag("key", "calm").gauge(), "a calm key is not among them");
    }

    @Test
    void eachOperationIsTimedByItsKindAndOutcomeNamedByItsErrorCodeWithNoKeyTag() {
        AtomicLong now = new AtomicLong(0);
        ClientEvents events = new ClientEvents(now::get);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new RatchetClientMetrics(new Metrics(), events, Tags.of("client", "billing")).bindTo(registry);

        CompletableFuture<CompareExchangeResult> put = events.timed("put", new CompletableFuture<>(),
                r -> r.successful() ? ClientEvents.APPLIED : "condition_failed");
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(3));
        put.complete(new CompareExchangeResult(true, "k", null));
        events.timed("put", CompletableFuture.completedFuture(new CompareExchangeResult(false, "k", null)),
                r -> r.successful() ? ClientEvents.APPLIED : "condition_failed");
        events.timed("put", CompletableFuture.<CompareExchangeResult>failedFuture(new UnknownOutcomeException("lost", null)),
                r -> ClientEvents.APPLIED);
        events.timed("get", CompletableFuture.failedFuture(new ClusterUnavailableException("none", null)),
                r -> ClientEvents.OK);
        events.timed("get", CompletableFuture.failedFuture(new InvalidRequestException("bad key", null)),
                r -> ClientEvents.OK);

        var applied = registry.get("ratchet.client.requests").tags("operation", "put", "outcome", "applied", "client", "billing").timer();
        assertEquals(1, applied.count());
        assertEquals(3.0, applied.totalTime(TimeUnit.MILLISECONDS), 1e-9);
        assertEquals(1, registry.get("ratchet.client.requests").tags("operation", "put", "outcome", "condition_failed").timer().count());
        assertEquals(1, registry.get("ratchet.client.requests").tags("operation", "put", "outcome", "unknown_outcome").timer().count());
        assertEquals(1, registry.get("ratchet.client.requests").tags("operation", "get", "outcome", "cluster_unavailable").timer().count());
        assertEquals(1, registry.get("ratchet.client.requests").tags("operation", "get", "outcome", "invalid_request").timer().count());
        assertTrue(registry.getMeters().stream().noneMatch(m -> m.getId().getTag("key") != null),
                "no meter is tagged with a key written");
    }

    @Test
    void resendsFailoversHedgesAndSessionsAreCounted() {
        ClientEvents events = new ClientEvents();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new RatchetClientMetrics(new Metrics(), events, Tags.empty()).bindTo(registry);
        events.resend();
        events.resend();
        events.leaderFollowed();
        events.hedge();
        events.sessionOpen();
        assertEquals(2.0, registry.get("ratchet.client.resends").functionCounter().count());
        assertEquals(1.0, registry.get("ratchet.client.leader.changes").functionCounter().count());
        assertEquals(1.0, registry.get("ratchet.client.hedges").functionCounter().count());
        assertEquals(1.0, registry.get("ratchet.client.sessions.opened").functionCounter().count());
    }

    @Test
    void aLockCountsAsHeldUntilReleasedOrItsLeaseRunsOutByThisProcesssClock() {
        AtomicLong now = new AtomicLong(0);
        ClientEvents events = new ClientEvents(now::get);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new RatchetClientMetrics(new Metrics(), events, Tags.empty()).bindTo(registry);
        events.lockAcquire("lock", "jobs/report", 7, 0, Duration.ofSeconds(10), true, TimeUnit.MILLISECONDS.toNanos(40));
        events.lockAcquire("lock", "jobs/other", 9, 0, Duration.ofSeconds(10), true, 0);
        events.lockAcquire("lock", "jobs/taken", 0, 0, Duration.ofSeconds(10), false, TimeUnit.SECONDS.toNanos(1));
        assertEquals(2.0, registry.get("ratchet.client.locks.held").gauge().value());
        assertEquals(2, registry.get("ratchet.client.lock.wait").tags("kind", "lock", "outcome", "acquired").timer().count());
        assertEquals(1, registry.get("ratchet.client.lock.wait").tags("kind", "lock", "outcome", "timeout").timer().count());

        events.lockEnded("lock", "jobs/other", 9);
        assertEquals(1.0, registry.get("ratchet.client.locks.held").gauge().value());
        now.set(Duration.ofSeconds(9).toNanos());
        events.lockRenewed("lock", "jobs/report", 7, now.get(), Duration.ofSeconds(10));
        now.set(Duration.ofSeconds(15).toNanos());
        assertEquals(1.0, registry.get("ratchet.client.locks.held").gauge().value(), "renewed: held past its first lease");
        now.set(Duration.ofSeconds(20).toNanos());
        assertEquals(0.0, registry.get("ratchet.client.locks.held").gauge().value(), "its lease ran out");
    }

    @Test
    void lapsedGrantsAreForgottenEvenWhenNobodyReadsTheCount() {
        AtomicLong now = new AtomicLong(0);
        ClientEvents events = new ClientEvents(now::get);
        for (int i = 0; i < 5_000; i++) {
            now.addAndGet(Duration.ofSeconds(1).toNanos());
            events.lockAcquire("lock", "jobs/" + i, i + 1, now.get(), Duration.ofSeconds(2), true, 0);
        }
        assertTrue(events.remembered() <= 1025, "remembered: " + events.remembered());
        assertTrue(events.locksHeld() <= 2, "only the grants still within their lease are held");
    }
}
