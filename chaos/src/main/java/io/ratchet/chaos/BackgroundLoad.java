package io.ratchet.chaos;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * Traffic beside the checked workloads, so that their gaps are measured on a busy cluster rather than an
 * idle one ({@code --load N}): N client instances, each its own {@link RatchetClient} on its own thread, as
 * N processes would have, each alternating back to back a reserve (a create-only put of a fresh key) and an
 * update (a read of its own counter, then a put of the increment at the index read). Unchecked: nothing it
 * does enters the history; it only counts.
 *
 * <p>These are {@code scripts/bench}'s reserve and update, written again in a few lines: the bench lives in
 * the cli module, which the harness does not depend on (its logging binding would clash with the harness').
 * Keys are under {@link #PREFIX}, which no workload uses.
 */
final class BackgroundLoad implements AutoCloseable {
    static final String PREFIX = "load/";
    /** After an error, so that a client failing fast does not spin; an answered operation goes on at once. */
    private static final long PAUSE_AFTER_ERROR_MS = 50;

    private final int instances;
    private final Supplier<RatchetClient> connect;
    private final Duration grace;
    private final List<Thread> threads = new ArrayList<>();
    private final LongAdder reserved = new LongAdder();
    private final LongAdder updated = new LongAdder();
    private final LongAdder refused = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private volatile String lastError;
    private volatile boolean stopping;
    private long started;
    private long stopped;
    private int stillRunning;

    /**
     * What the load did.
     *
     * @param clients   client instances
     * @param ops       operations answered (reserves and updates, refused ones too) and not
     * @param reserved  keys created
     * @param updated   counters incremented
     * @param refused   creates of a key that existed, and increments whose condition failed (answers)
     * @param errors    operations without an answer (an exception)
     * @param seconds   how long it ran
     * @param lastError the last error, if any
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @JsonPropertyOrder({"clients", "ops", "reserved", "updated", "refused", "errors", "seconds", "last_error"})
    record Counts(int clients, long ops, long reserved, long updated, long refused, long errors, double seconds,
                  @JsonProperty("last_error") String lastError) {
        String describe() {
            return String.format(Locale.ROOT, "%d client instances, reserve and update back to back, unchecked: %,d operations "
                            + "in %.0f s (%,.0f a second): %,d keys reserved, %,d counters updated, %,d refused, %,d errors%s",
                    clients, ops, seconds, seconds > 0 ? ops / seconds : 0.0, reserved, updated, refused, errors,
                    lastError == null ? "" : " (the last: " + lastError + ")");
        }
    }

    /**
     * @param connect opens one client instance
     * @param grace   how long {@link #close} waits for the clients' operations in flight: an operation's timeout and a margin
     */
    BackgroundLoad(int instances, Supplier<RatchetClient> connect, Duration grace) {
        if (instances < 1) {
            throw new IllegalArgumentException("--load needs at least one client, not " + instances);
        }
        this.instances = instances;
        this.connect = connect;
        this.grace = grace;
    }

    void start() {
        started = System.nanoTime();
        for (int i = 0; i < instances; i++) {
            int n = i;
            Thread t = new Thread(() -> run(n), "chaos-load-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
    }

    private void run(int n) {
        String counter = PREFIX + "u-" + n;
        String keys = PREFIX + "r-" + n + "-";
        long sequence = 0;
        try (RatchetClient client = connect.get()) {
            while (!stopping) {
                try {
                    if (sequence % 2 == 0) {
                        count(client.put(keys + sequence / 2, "owner", 0), reserved);
                    } else {
                        Optional<Item> current = client.get(counter);
                        long next = current.map(item -> Long.parseLong(item.value()) + 1).orElse(1L);
                        count(client.put(counter, next, current.map(Item::index).orElse(0L)), updated);
                    }
                } catch (RuntimeException e) {
                    errors.increment();
                    lastError = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
                    pause();
                }
                sequence++;
            }
        } catch (RuntimeException e) {
            // The instance could not connect (or close): one error, and this instance is done.
            errors.increment();
            lastError = e.toString();
        }
    }

    private void count(CompareExchangeResult result, LongAdder done) {
        (result.successful() ? done : refused).increment();
    }

    private static void pause() {
        try {
            Thread.sleep(PAUSE_AFTER_ERROR_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stops every instance after its operation in flight and closes its client; waits up to the grace in
     * all. Safe to call again. Returns how many instances were still busy at the end of the grace (their
     * threads are daemons and close their clients when their operation ends).
     */
    @Override
    public synchronized void close() {
        if (stopping) {
            return;
        }
        stopping = true;
        long deadline = System.nanoTime() + grace.toNanos();
        for (Thread t : threads) {
            try {
                t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            if (t.isAlive()) {
                stillRunning++;
            }
        }
        stopped = System.nanoTime();
    }

    /** Instances still busy when {@link #close} gave up waiting. */
    synchronized int stillRunning() {
        return stillRunning;
    }

    synchronized Counts counts() {
        long end = stopped == 0 ? System.nanoTime() : stopped;
        long r = reserved.sum();
        long u = updated.sum();
        long no = refused.sum();
        long e = errors.sum();
        double seconds = started == 0 ? 0 : Math.round((end - started) / 1e8) / 10.0;
        return new Counts(instances, r + u + no + e, r, u, no, e, seconds, lastError);
    }
}
