package io.ratchet.client.session;

import io.ratchet.client.Backoff;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.Metrics;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import java.time.Duration;
import java.util.Collection;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.random.RandomGenerator;

/**
 * The optimistic-concurrency retry loop: run a unit of work, and when its save is refused because
 * something it read has moved, run it again from fresh state, a bounded number of times, with
 * exponential backoff and full jitter between attempts.
 *
 * <p><b>Guarantee.</b> {@link #run} commits the unit of work at most once: each attempt is a new
 * {@link ClusterSession} whose save applies entirely or not at all, and only a refused save (nothing
 * applied) leads to another attempt. By default every save carries an idempotency key, so a save whose
 * answer was lost ({@link UnknownOutcomeException}) is resent as is, up to {@value #MAX_RESENDS} times
 * and only while the cluster still remembers the key, and the resend returns the first outcome instead
 * of applying twice. When the outcome stays unknown, the {@link UnknownOutcomeException} is thrown: the
 * loop never re-runs a unit of work that may have been applied.
 *
 * <p><b>What the caller owes.</b> The unit of work reads through the session it is given and has no
 * other side effects, because it may run several times; it does not call {@code saveChanges} (the loop
 * saves it when it returns). An exception it throws ends the loop at once and is rethrown. Every attempt
 * and conflict is counted per key in {@link RatchetClient#metrics()}.
 *
 * <p>Immutable and thread-safe: share one per client.
 */
public final class Retry {
    /** 10 ms after the first conflict, doubling up to 1 s. */
    public static final Backoff DEFAULT_BACKOFF = new Backoff(Duration.ofMillis(10), Duration.ofSeconds(1));
    /** How long the cluster remembers a save's idempotency key by default: well beyond any resend. */
    public static final Duration DEFAULT_RETENTION = Duration.ofMinutes(5);
    /** The most times one save is resent after its answer was lost. */
    public static final int MAX_RESENDS = 3;

    /** Waits between attempts; tests replace it to record the waits instead of sleeping. */
    interface Sleeper {
        void sleep(Duration duration) throws InterruptedException;
    }

    private final ClusterAccess cluster;
    private final Metrics metrics;
    private final SessionOptions sessionOptions;
    private final Backoff backoff;
    /** Null: saves carry no idempotency key, and an unknown outcome is thrown at once. */
    private final Duration retention;
    private final Supplier<RandomGenerator> random;
    private final Sleeper sleeper;

    Retry(ClusterAccess cluster, Metrics metrics, SessionOptions sessionOptions, Backoff backoff, Duration retention,
          Supplier<RandomGenerator> random, Sleeper sleeper) {
        this.cluster = Objects.requireNonNull(cluster);
        this.metrics = Objects.requireNonNull(metrics);
        this.sessionOptions = Objects.requireNonNull(sessionOptions);
        this.backoff = Objects.requireNonNull(backoff);
        this.retention = retention;
        this.random = random;
        this.sleeper = sleeper;
    }

    /** A loop over {@code client} with the default backoff, default sessions and idempotent saves. */
    public static Retry of(RatchetClient client) {
        return new Retry(ClusterAccess.of(client), client.metrics(), SessionOptions.defaults(), DEFAULT_BACKOFF,
                DEFAULT_RETENTION, ThreadLocalRandom::current, d -> Thread.sleep(d.toMillis(), d.toNanosPart() % 1_000_000));
    }

    public Retry withBackoff(Backoff backoff) {
        return new Retry(cluster, metrics, sessionOptions, backoff, retention, random, sleeper);
    }

    /** Each attempt's session is opened with {@code options} (e.g. read validation). */
    public Retry withSessionOptions(SessionOptions options) {
        return new Retry(cluster, metrics, options, backoff, retention, random, sleeper);
    }

    /** Saves carry idempotency keys that the cluster remembers for {@code retention} (at most 24 h). */
    public Retry withIdempotentSaves(Duration retention) {
        return new Retry(cluster, metrics, sessionOptions, backoff, Objects.requireNonNull(retention), random, sleeper);
    }

    /**
     * Saves carry no idempotency key: cheaper for the cluster, but a save whose answer is lost ends the
     * loop with {@link UnknownOutcomeException}.
     */
    public Retry withoutIdempotentSaves() {
        return new Retry(cluster, metrics, sessionOptions, backoff, null, random, sleeper);
    }

    Retry withSleeper(Sleeper sleeper, Supplier<RandomGenerator> random) {
        return new Retry(cluster, metrics, sessionOptions, backoff, retention, random, sleeper);
    }

    /**
     * Runs {@code unit} in a fresh session and saves it, re-running it from fresh reads after each
     * refused save, at most {@code maxAttempts} times in all. Returns the log index of the commit (0 when
     * the unit recorded no change).
     *
     * @throws RetryExhaustedException when every attempt was refused; nothing of it was applied
     * @throws UnknownOutcomeException when a save's answer was lost and resending could not settle it
     * @throws InvalidRequestException when the unit's changes break the protocol's rules; not retried
     */
    public long run(int maxAttempts, Consumer<ClusterSession> unit) {
        long[] index = new long[1];
        attempts(maxAttempts, session -> {
            unit.accept(session);
            return null;
        }, index);
        return index[0];
    }

    /** As {@link #run}, returning what the committed attempt's {@code unit} returned. */
    public <T> T call(int maxAttempts, Function<ClusterSession, T> unit) {
        return attempts(maxAttempts, unit, new long[1]);
    }

    private <T> T attempts(int maxAttempts, Function<ClusterSession, T> unit, long[] committedAt) {
        checkAttempts(maxAttempts);
        String run = UUID.randomUUID().toString();
        ConcurrencyException last = null;
        Collection<String> lastKeys = Set.of();
        for (int attempt = 1; attempt <= maxAttempts; attempt++) {
            ClusterSession session = new ClusterSession(cluster, sessionOptions, true);
            T value = unit.apply(session);
            try {
                committedAt[0] = resending(run + "/" + attempt, key -> session.send(key, retention));
                session.sentKeys().forEach(k -> {
                    metrics.attempted(k);
                    metrics.committed(k);
                });
                return value;
            } catch (ConcurrencyException e) {
                last = e;
                lastKeys = session.sentKeys();
                lastKeys.forEach(metrics::attempted);
                e.keys().forEach(metrics::conflicted);
            }
            if (attempt < maxAttempts && !pause(attempt)) {
                return exhausted(lastKeys, new RetryExhaustedException("interrupted while backing off after "
                        + attempt + " attempts; nothing of them was applied", attempt, last));
            }
        }
        return exhausted(lastKeys, new RetryExhaustedException("gave up after " + maxAttempts + " attempts, nothing applied; "
                + "the last one: " + last.getMessage(), maxAttempts, last));
    }

    /**
     * Read-modify-write of one item: {@code fn} computes the new value from the current one (null when
     * the item is absent; then the put is create-only), and the put is conditioned on the index that
     * value had. When the put is refused, {@code fn} is applied again to the value and index the refusal
     * returned, without another read. The item's metadata is kept. Returns the successful put's result.
     *
     * <p>{@code fn} may run several times: it must compute from its argument alone, and not return null.
     *
     * @throws RetryExhaustedException when every attempt was refused
     * @throws UnknownOutcomeException when a put's answer was lost and resending could not settle it
     */
    public <T> CompareExchangeResult update(String key, Class<T> type, int maxAttempts, UnaryOperator<T> fn) {
        checkAttempts(maxAttempts);
        String run = UUID.randomUUID().toString();
        Item current = cluster.item(key).orElse(null);
        for (int attempt = 1; attempt <= maxAttempts; attempt++) {
            T next = fn.apply(current == null ? null : Json.MAPPER.convertValue(current.valueNode(), type));
            if (next == null) {
                throw new InvalidRequestException("the update of '" + key + "' computed null; a value must not be null", null);
            }
            Command.Put put = new Command.Put(key, Json.write(next), current == null ? 0 : current.index(),
                    current == null ? null : current.metadata());
            ClusterSession.validate(put);
            metrics.attempted(key);
            CompareExchangeResult result = resending(run + "/" + attempt, k -> cluster.write(put, k, retention));
            if (result.successful()) {
                metrics.committed(key);
                return result;
            }
            metrics.conflicted(key);
            long expected = put.index();
            current = result.item();
            if (attempt == maxAttempts) {
                return exhausted(Set.of(key), new RetryExhaustedException("the update of '" + key + "' gave up after "
                        + maxAttempts + " attempts; the last expected index " + expected + ", the item is at "
                        + result.index(), maxAttempts, null));
            }
            if (!pause(attempt)) {
                return exhausted(Set.of(key), new RetryExhaustedException("the update of '" + key
                        + "' was interrupted while backing off after " + attempt + " attempts", attempt, null));
            }
        }
        throw new AssertionError("unreachable");
    }

    // ---- the loop's parts

    /**
     * Sends once with {@code key} (when saves are idempotent) and resends after a lost answer while that
     * is safe: a bounded number of times, and only within half the retention, so the cluster still
     * remembers the key when the resend arrives and answers with the first outcome.
     */
    private <R> R resending(String key, Function<String, R> send) {
        if (retention == null) {
            return send.apply(null);
        }
        long started = System.nanoTime();
        for (int resends = 0; ; resends++) {
            try {
                return send.apply(key);
            } catch (UnknownOutcomeException e) {
                if (resends == MAX_RESENDS || System.nanoTime() - started > retention.toNanos() / 2 || !pause(resends + 1)) {
                    throw e;
                }
            }
        }
    }

    /** Backs off after {@code failures} failed attempts; false when interrupted (the flag is kept set). */
    private boolean pause(int failures) {
        try {
            sleeper.sleep(backoff.delay(failures, random.get()));
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private <T> T exhausted(Collection<String> keys, RetryExhaustedException e) {
        keys.forEach(metrics::exhausted);
        throw e;
    }

    private static void checkAttempts(int maxAttempts) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, not " + maxAttempts);
        }
    }
}
