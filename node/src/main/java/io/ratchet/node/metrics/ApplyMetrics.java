package io.ratchet.node.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import io.ratchet.statemachine.ApplyListener;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Counts and times the entries this node's state machine applies: entries, requests by kind, requests
 * per entry (what group commit achieved), the time to apply an entry, and refused conditions by kind.
 * Every node applies every entry, so every node counts the same (since it started); a request here is
 * one command: a put, a delete or a whole transaction.
 */
final class ApplyMetrics implements ApplyListener {
    /** Bucket bounds for apply latency: an entry applies in tens of microseconds, a large one in milliseconds. */
    private static final Duration[] APPLY_BUCKETS = millis(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 1000);
    /** Bucket bounds for requests per entry, up to what the front end puts in one entry. */
    private static final double[] BATCH_BUCKETS = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};

    private final Counter entries;
    private final Timer latency;
    private final DistributionSummary perEntry;
    private final Map<WriteOp, Counter> requests = new EnumMap<>(WriteOp.class);
    private final Map<WriteOp, Counter> refused = new EnumMap<>(WriteOp.class);
    private final Counter overQuota;

    ApplyMetrics(MeterRegistry registry) {
        entries = Counter.builder("ratchet.entries.applied")
                .description("log entries this node applied").register(registry);
        latency = Timer.builder("ratchet.apply")
                .description("time to apply one log entry to the store, watches woken included")
                .serviceLevelObjectives(APPLY_BUCKETS).register(registry);
        perEntry = DistributionSummary.builder("ratchet.requests.per.entry")
                .description("requests in each applied entry: the batch group commit made")
                .serviceLevelObjectives(BATCH_BUCKETS).register(registry);
        for (WriteOp op : WriteOp.values()) {
            requests.put(op, Counter.builder("ratchet.requests.applied").tag("op", op.tag())
                    .description("requests applied, by kind").register(registry));
            if (op.conditional()) {
                refused.put(op, Counter.builder("ratchet.conditions.refused").tag("op", op.tag())
                        .description("requests applied whose condition failed (nothing written), by kind")
                        .register(registry));
            }
        }
        overQuota = Counter.builder("ratchet.writes.over.quota")
                .description("writes refused because they would take the state over its storage quota "
                        + "(by apply, or by the leader's front end before they reach the log)")
                .register(registry);
    }

    /** Writes refused for the quota: counted here as they apply, and by the front end that refuses them first. */
    Counter overQuota() {
        return overQuota;
    }

    /** Results come one per command, in the entry's order (a resent batch gets its first results again). */
    @Override
    public void applied(Entry entry, List<Result> results, long applyNanos) {
        entries.increment();
        latency.record(applyNanos, TimeUnit.NANOSECONDS);
        int i = 0;
        for (Batch batch : entry.batches()) {
            for (Request request : batch.requests()) {
                for (Command command : request.commands()) {
                    WriteOp op = WriteOp.of(command);
                    requests.get(op).increment();
                    Counter refusals = refused.get(op);
                    if (refusals != null && i < results.size() && refusedCondition(results.get(i))) {
                        refusals.increment();
                    }
                    if (i < results.size() && results.get(i) instanceof Result.QuotaExceeded) {
                        overQuota.increment();
                    }
                    i++;
                }
            }
        }
        perEntry.record(i);
    }

    private static boolean refusedCondition(Result result) {
        return switch (result.kind()) {
            case WRITE -> !((Result.Write) result).successful();
            case TXN -> !((Result.Txn) result).successful();
            case REJECTED, FOUND, ITEMS, STATS, SWEPT, WATCHED, DOCUMENT_FOUND, SESSION_OPENED, SESSION_EXPIRED,
                    CONTENTION, QUOTA_EXCEEDED, QUOTA, AUTH_STATE, DISK_FULL, SHAPE, TXN_STATE, LOCKED, FENCED, NOT_AN_INTEGER, OVERFLOW,
                    UNSUPPORTED -> false;
        };
    }

    private static Duration[] millis(double... bounds) {
        Duration[] durations = new Duration[bounds.length];
        for (int i = 0; i < bounds.length; i++) {
            durations[i] = Duration.ofNanos((long) (bounds[i] * 1_000_000));
        }
        return durations;
    }
}
