package io.ratchet.recipes.session;

import io.ratchet.client.Backoff;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.Metrics;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Result;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntConsumer;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * <p><b>Combined updates.</b> {@link #update} calls on one key from threads of the same client combine:
 * while a put of the key is under way, further updates of it wait, and the next put carries all of them,
 * their functions applied in order; see {@link #update} for what each caller is promised.
 *
 * <p><b>What the caller owes.</b> The unit of work reads through the session it is given and has no
 * other side effects, because it may run several times; it does not call {@code saveChanges} (the loop
 * saves it when it returns). An exception it throws ends the loop at once and is rethrown. Every attempt
 * and conflict is counted per key in {@link RatchetClient#metrics()}.
 *
 * <p><b>The trail.</b> Every operation (one call of run, call or update) gets an id, and each of its
 * steps is a {@link RetryEvent}: check, mismatch (key, expected and actual index), abort, backoff,
 * retry, and one outcome (committed, exhausted, unknown outcome, error). They go, in order, to the
 * {@linkplain #withListener listeners}, to the SLF4J logger {@code io.ratchet.recipes.session.Retry} at
 * debug level, and into {@link RetryExhaustedException#trail()} and {@link ConcurrencyException#trail()}.
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

    private static final Logger LOG = LoggerFactory.getLogger(Retry.class);

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
    /** Shared by every Retry of the same client: what makes updates of one key combine. */
    private final UpdateCombiner combiner;
    private final List<RetryListener> listeners;
    private final Logger log;
    /** Null: an update never takes a lock. */
    private final Escalation escalation;

    /**
     * When an update escalates: after {@code afterRefusals} refused puts of its key in a row, it takes the
     * key's fair lock (lock name {@code retry/<key>}) for {@code lease}, waiting up to {@code maxWait}, and
     * finishes under it.
     */
    record Escalation(int afterRefusals, Duration lease, Duration maxWait) {
    }

    Retry(ClusterAccess cluster, Metrics metrics, SessionOptions sessionOptions, Backoff backoff, Duration retention,
          Supplier<RandomGenerator> random, Sleeper sleeper) {
        this(cluster, metrics, sessionOptions, backoff, retention, random, sleeper, UpdateCombiner.of(cluster), List.of(), LOG, null);
    }

    private Retry(ClusterAccess cluster, Metrics metrics, SessionOptions sessionOptions, Backoff backoff, Duration retention,
                  Supplier<RandomGenerator> random, Sleeper sleeper, UpdateCombiner combiner, List<RetryListener> listeners,
                  Logger log, Escalation escalation) {
        this.escalation = escalation;
        this.cluster = Objects.requireNonNull(cluster);
        this.metrics = Objects.requireNonNull(metrics);
        this.sessionOptions = Objects.requireNonNull(sessionOptions);
        this.backoff = Objects.requireNonNull(backoff);
        this.retention = retention;
        this.random = random;
        this.sleeper = sleeper;
        this.combiner = Objects.requireNonNull(combiner);
        this.listeners = List.copyOf(listeners);
        this.log = Objects.requireNonNull(log);
    }

    /**
     * A loop over {@code client} with the default backoff, default sessions and idempotent saves. Every
     * Retry of the same client combines its updates with the others'.
     */
    public static Retry of(RatchetClient client) {
        return new Retry(ClusterAccess.of(client), client.metrics(), SessionOptions.defaults(), DEFAULT_BACKOFF,
                DEFAULT_RETENTION, ThreadLocalRandom::current, d -> Thread.sleep(d.toMillis(), d.toNanosPart() % 1_000_000),
                UpdateCombiner.of(client), List.of(), LOG, null);
    }

    public Retry withBackoff(Backoff backoff) {
        return new Retry(cluster, metrics, sessionOptions, backoff, retention, random, sleeper, combiner, listeners, log, escalation);
    }

    /** Each attempt's session is opened with {@code options} (e.g. read validation). */
    public Retry withSessionOptions(SessionOptions options) {
        return new Retry(cluster, metrics, options, backoff, retention, random, sleeper, combiner, listeners, log, escalation);
    }

    /** Saves carry idempotency keys that the cluster remembers for {@code retention} (at most 24 h). */
    public Retry withIdempotentSaves(Duration retention) {
        return new Retry(cluster, metrics, sessionOptions, backoff, Objects.requireNonNull(retention), random, sleeper,
                combiner, listeners, log, escalation);
    }

    /**
     * Saves carry no idempotency key: cheaper for the cluster, but a save whose answer is lost ends the
     * loop with {@link UnknownOutcomeException}.
     */
    public Retry withoutIdempotentSaves() {
        return new Retry(cluster, metrics, sessionOptions, backoff, null, random, sleeper, combiner, listeners, log, escalation);
    }

    /**
     * A loop that also reports every {@link RetryEvent} of its operations to {@code listener} (after the
     * listeners this one has). See {@link RetryListener} for the thread it is called on.
     */
    public Retry withListener(RetryListener listener) {
        List<RetryListener> more = new ArrayList<>(listeners);
        more.add(Objects.requireNonNull(listener, "listener"));
        return new Retry(cluster, metrics, sessionOptions, backoff, retention, random, sleeper, combiner, more, log, escalation);
    }

    /**
     * Updates escalate to a lock on a hot key, as Curator's {@code DistributedAtomicValue} promotes to a
     * lock: after {@code afterRefusals} refused puts of a key in a row, the update takes the key's fair lock
     * ({@link io.ratchet.recipes.lock.FairLocks}, lock {@code retry/<key>}, a 10 s lease, waiting up to
     * 30 s) and finishes under it, so the clients contending for the key take turns (first come, first
     * served) instead of racing; the puts stay conditional, so a writer that does not take the lock is
     * still caught. Combining within one client goes on as before. A lock not granted in time is not
     * waited for again by that update: it carries on unlocked.
     */
    public Retry withEscalation(int afterRefusals) {
        if (afterRefusals < 1) {
            throw new IllegalArgumentException("escalate after 1 or more refusals, not " + afterRefusals);
        }
        return new Retry(cluster, metrics, sessionOptions, backoff, retention, random, sleeper, combiner, listeners, log,
                new Escalation(afterRefusals, Duration.ofSeconds(10), Duration.ofSeconds(30)));
    }

    Retry withSleeper(Sleeper sleeper, Supplier<RandomGenerator> random) {
        return new Retry(cluster, metrics, sessionOptions, backoff, retention, random, sleeper, combiner, listeners, log, escalation);
    }

    /** The trail is logged to {@code log} instead of the logger of this class; for tests. */
    Retry withLogger(Logger log) {
        return new Retry(cluster, metrics, sessionOptions, backoff, retention, random, sleeper, combiner, listeners, log, escalation);
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
        long started = System.nanoTime();
        Collection<String> touched = new LinkedHashSet<>();
        try {
            return attempts(maxAttempts, unit, committedAt, touched);
        } finally {
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            touched.forEach(k -> metrics.looped(k, took));
        }
    }

    /** The loop of {@link #attempts}; adds the keys each attempt sent to {@code touched}. */
    private <T> T attempts(int maxAttempts, Function<ClusterSession, T> unit, long[] committedAt, Collection<String> touched) {
        Trail trail = trail();
        String id = trail.id();
        ConcurrencyException last = null;
        Collection<String> lastKeys = Set.of();
        for (int attempt = 1; attempt <= maxAttempts; attempt++) {
            if (attempt > 1) {
                trail.emit(new RetryEvent.Retrying(id, attempt));
            }
            ClusterSession session = new ClusterSession(cluster, sessionOptions, true);
            long attemptStarted = System.nanoTime();
            T value;
            try {
                value = unit.apply(session);
            } catch (Throwable e) {
                trail.emit(new RetryEvent.Failed(id, attempt, e));
                throw e;
            }
            int n = attempt;
            try {
                List<Command.Op> ops = session.pendingTransaction();
                if (!ops.isEmpty()) {
                    trail.emit(new RetryEvent.Check(id, attempt, ops.stream()
                            .map(op -> new RetryEvent.Condition(op.key(), op.index())).toList(), 0));
                }
                committedAt[0] = resending(id + "/" + attempt, retention, key -> session.send(key, retention),
                        resend -> trail.emit(new RetryEvent.Resend(id, n, resend)));
                touched.addAll(session.sentKeys());
                session.sentKeys().forEach(k -> {
                    metrics.attempted(k);
                    metrics.committed(k);
                });
                trail.emit(new RetryEvent.Committed(id, attempt, committedAt[0]));
                return value;
            } catch (ConcurrencyException e) {
                lastKeys = session.sentKeys();
                touched.addAll(lastKeys);
                lastKeys.forEach(metrics::attempted);
                e.keys().forEach(metrics::conflicted);
                Duration wasted = Duration.ofNanos(System.nanoTime() - attemptStarted);
                e.keys().forEach(k -> metrics.discarded(k, wasted));
                for (Result.Conflict c : e.conflicts()) {
                    trail.emit(new RetryEvent.Mismatch(id, attempt, c.key(), c.expected(), c.actual()));
                }
                trail.emit(new RetryEvent.Abort(id, attempt));
                last = e.withTrail(trail.snapshot());
            } catch (RuntimeException e) {
                trail.emit(ended(id, attempt, e));
                throw e;
            }
            if (attempt < maxAttempts) {
                Duration delay = delay(attempt);
                trail.emit(new RetryEvent.Backoff(id, attempt, delay));
                if (!sleep(delay)) {
                    trail.emit(new RetryEvent.Exhausted(id, attempt, true));
                    return exhausted(lastKeys, new RetryExhaustedException("interrupted while backing off after "
                            + attempt + " attempts; nothing of them was applied", attempt, last, trail.snapshot()));
                }
            }
        }
        trail.emit(new RetryEvent.Exhausted(id, maxAttempts, false));
        return exhausted(lastKeys, new RetryExhaustedException("gave up after " + maxAttempts + " attempts, nothing applied; "
                + "the last one: " + last.getMessage(), maxAttempts, last, trail.snapshot()));
    }

    /**
     * Read-modify-write of one item: {@code fn} computes the new value from the current one (null when
     * the item is absent; then the put is create-only), and the put is conditioned on the index that
     * value had. When the put is refused, {@code fn} is applied again to the value and index the refusal
     * returned, without another read. The item's metadata is kept. Returns the successful put's result.
     *
     * <p><b>Combining.</b> Calls on the same key (compared case-insensitively) from threads of the same
     * client, through this Retry or any other made from that client, combine. The first call reads the
     * item and sends its put; calls that arrive while a put of the key is under way wait, and when it
     * returns, all waiting functions are applied <em>in the order the calls arrived</em>, each to the
     * value the one before it computed, starting from the value and index that answer returned (no read),
     * and the last value is sent as ONE put conditioned on that index. Uncontended, an update costs what it
     * always did: one read and one put. The guarantees, for each caller:
     * <ul>
     *   <li><b>Success</b>: every update the put carried has landed, exactly once, at one log index, and
     *       every one of those callers gets the same result: the item as the combined write left it (its
     *       final value and index). No caller is handed an intermediate value paired with that index, so
     *       a caller that writes at that index next cannot undo the others' updates.</li>
     *   <li><b>Refusal</b> (another client moved the item): nothing was applied; every caller still in is
     *       recomputed from the value and index the refusal returned, with no extra read, after a jittered
     *       backoff (this Retry's {@link Backoff}), together with any calls that arrived meanwhile (after them
     *       in order). The state a backoff started from may be stale by its end: a put made after a backoff
     *       longer than the put's own round trip that is refused goes again at once with the state its
     *       refusal returned; only a refusal of a put made with fresh state backs off (and counts toward the
     *       backoff's growth).</li>
     *   <li><b>A function that throws, or returns null</b>, takes only its own caller out, who gets the
     *       exception ({@link InvalidRequestException} for null or an invalid value); the others' values are
     *       computed without it.</li>
     *   <li><b>Attempts</b> are counted per caller: the puts its update took part in. A caller whose
     *       {@code maxAttempts} run out gets {@link RetryExhaustedException} (its trail, and a
     *       {@link ConcurrencyException} cause naming the expected and actual index) while the others go on.</li>
     *   <li><b>A lost answer</b>: the combined put is one request with one idempotency key, resent as
     *       {@code run}'s saves are; if its outcome stays unknown every caller it carried gets the
     *       {@link UnknownOutcomeException}. Another error of the read or the put goes to every caller of
     *       that round.</li>
     * </ul>
     * Metrics count each put once (an attempt, then a commit or a conflict), and each caller that gave up
     * once (exhausted). Each caller's trail is its own, under its own operation id; its check events say
     * how many other updates the put carried.
     *
     * <p>{@code fn} may run several times, on another caller's thread when combined: it must compute from
     * its argument alone, not return null, and not call {@code update} on the same key. A waiting caller
     * is not interrupted out of its wait (its update may be landing); a caller interrupted while backing
     * off gets a {@link RetryExhaustedException}.
     *
     * @throws RetryExhaustedException when every attempt this caller's update took part in was refused
     * @throws UnknownOutcomeException when a put's answer was lost and resending could not settle it
     * @throws InvalidRequestException when the key is invalid, or {@code fn} computed null or an invalid value
     */
    public <T> CompareExchangeResult update(String key, Class<T> type, int maxAttempts, UnaryOperator<T> fn) {
        checkAttempts(maxAttempts);
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(fn, "fn");
        String normalized;
        try {
            normalized = Keys.normalize(Keys.validateWritable(key));
        } catch (InvalidCommandException e) {
            throw new InvalidRequestException(e.getMessage(), e);
        }
        long started = System.nanoTime();
        try {
            return combined(key, normalized, type, maxAttempts, fn);
        } finally {
            metrics.looped(key, Duration.ofNanos(System.nanoTime() - started));
        }
    }

    private <T> CompareExchangeResult combined(String key, String normalized, Class<T> type, int maxAttempts, UnaryOperator<T> fn) {
        UpdateCombiner.Pending me = new UpdateCombiner.Pending(key, type, fn, maxAttempts, trail(), retention);
        UpdateCombiner.Slot slot = combiner.enter(normalized, me);
        if (slot == null) {
            slot = me.awaitTurn();
        }
        if (slot != null) {
            drive(slot, me);
        }
        return me.outcome();
    }

    /**
     * Runs rounds of {@code slot} until {@code me} is settled, then hands the slot on. Whatever happens,
     * no caller is left waiting: an unexpected error settles every update of the round with it.
     */
    private void drive(UpdateCombiner.Slot slot, UpdateCombiner.Pending me) {
        combiner.takeOver(slot);
        List<UpdateCombiner.Pending> round = List.of();
        ClusterAccess.Hold hold = null;
        boolean triedToLock = false;
        try {
            while (!me.isDone()) {
                if (escalation != null && hold == null && !triedToLock && slot.refusals >= escalation.afterRefusals()) {
                    triedToLock = true;
                    String lock = "retry/" + Keys.normalize(me.key);
                    hold = cluster.lock(lock, escalation.lease(), escalation.maxWait()).orElse(null);
                    if (hold != null) {
                        me.trail.emit(new RetryEvent.Escalated(me.trail.id(), me.attempt, lock, slot.refusals, hold.fencingToken()));
                    }
                }
                round = List.of();
                Duration pause = slot.pause;
                slot.pause = null;
                if (pause != null && !sleep(pause)) {
                    combiner.withdraw(slot, me);
                    me.trail.emit(new RetryEvent.Exhausted(me.trail.id(), me.attempt, true));
                    metrics.exhausted(me.key);
                    me.fail(new RetryExhaustedException("the update of '" + me.key + "' was interrupted while backing off after "
                            + me.attempt + " attempts", me.attempt, null, me.trail.snapshot()));
                    break;
                }
                slot.pausedFor = pause;
                round = combiner.drain(slot);
                round(slot, round, me);
            }
        } catch (Throwable t) {
            slot.known = false;
            List<UpdateCombiner.Pending> stranded = new ArrayList<>(round);
            stranded.add(me);
            for (UpdateCombiner.Pending p : stranded) {
                if (!p.isDone()) {
                    combiner.withdraw(slot, p);
                    p.fail(t);
                }
            }
        } finally {
            if (hold != null) {
                hold.close();
            }
            combiner.leave(slot);
        }
    }

    /** One put for every update in {@code round}, driven by {@code driver}'s caller; settles or requeues each. */
    private void round(UpdateCombiner.Slot slot, List<UpdateCombiner.Pending> round, UpdateCombiner.Pending driver) {
        for (UpdateCombiner.Pending p : round) {
            if (p.retrying) {
                p.retrying = false;
                p.attempt++;
                p.trail.emit(new RetryEvent.Retrying(p.trail.id(), p.attempt));
            }
        }
        if (!slot.known) {
            try {
                slot.item = cluster.item(driver.key).orElse(null);
                slot.known = true;
            } catch (RuntimeException e) {
                round.forEach(p -> settle(p, e));
                return;
            }
        }
        Item current = slot.item;
        long index = current == null ? 0 : current.index();
        String metadata = current == null ? null : current.metadata();
        String json = current == null ? null : current.value();
        List<UpdateCombiner.Pending> in = new ArrayList<>(round.size());
        for (UpdateCombiner.Pending p : round) {
            try {
                json = p.apply(json, index, metadata);
                in.add(p);
            } catch (Throwable t) {
                settle(p, t);
            }
        }
        if (in.isEmpty()) {
            return;
        }
        String key = in.get(0).key;
        Command.Put put = new Command.Put(key, json, index, metadata);
        Duration keep = longestRetention(in);
        List<RetryEvent.Condition> condition = List.of(new RetryEvent.Condition(key, index));
        for (UpdateCombiner.Pending p : in) {
            p.trail.emit(new RetryEvent.Check(p.trail.id(), p.attempt, condition, in.size() - 1));
        }
        metrics.attempted(key);
        long sent = System.nanoTime();
        CompareExchangeResult result;
        try {
            result = resending(driver.trail.id() + "/" + ++driver.putsDriven, keep, k -> cluster.write(put, k, keep),
                    resend -> in.forEach(p -> p.trail.emit(new RetryEvent.Resend(p.trail.id(), p.attempt, resend))));
        } catch (RuntimeException e) {
            slot.known = false;
            in.forEach(p -> settle(p, e));
            return;
        }
        slot.item = result.item();
        slot.known = true;
        if (result.successful()) {
            metrics.committed(key);
            slot.refusals = 0;
            for (UpdateCombiner.Pending p : in) {
                p.trail.emit(new RetryEvent.Committed(p.trail.id(), p.attempt, result.index()));
                p.succeed(result);
            }
            return;
        }
        metrics.conflicted(key);
        metrics.discarded(key, Duration.ofNanos(System.nanoTime() - sent));
        // A put made after a backoff longer than its own round trip carried state as old as the wait: its
        // refusal hands over the state now, and the next put goes at once with it, as a put made with state
        // just returned would. Backing off again would make a contender's every put stale, and the longer its
        // waits grew the less it could ever land. A refusal of a put made with fresh state is contention.
        Duration putTook = Duration.ofNanos(System.nanoTime() - sent);
        boolean staleAfterPause = slot.pausedFor != null && slot.pausedFor.compareTo(putTook) > 0;
        if (!staleAfterPause) {
            slot.refusals++;
        }
        Duration pause = null;
        List<UpdateCombiner.Pending> refused = new ArrayList<>(in.size());
        for (UpdateCombiner.Pending p : in) {
            String id = p.trail.id();
            p.trail.emit(new RetryEvent.Mismatch(id, p.attempt, key, index, result.index()));
            p.trail.emit(new RetryEvent.Abort(id, p.attempt));
            if (p.attempt >= p.maxAttempts) {
                ConcurrencyException conflict = new ConcurrencyException(List.of(new Result.Conflict(key, index, result.index())))
                        .withTrail(p.trail.snapshot());
                p.trail.emit(new RetryEvent.Exhausted(id, p.attempt, false));
                metrics.exhausted(key);
                p.fail(new RetryExhaustedException("the update of '" + p.key + "' gave up after " + p.attempt
                        + " attempts; the last expected index " + index + ", the item is at " + result.index(), p.attempt,
                        conflict, p.trail.snapshot()));
            } else {
                if (pause == null && !staleAfterPause) {
                    pause = delay(slot.refusals);
                }
                if (pause != null) {
                    p.trail.emit(new RetryEvent.Backoff(id, p.attempt, pause));
                }
                p.retrying = true;
                refused.add(p);
            }
        }
        slot.pause = pause;
        combiner.requeue(slot, refused);
    }

    /** Ends {@code p} with {@code error}: its outcome event, then the error for its caller. */
    private static void settle(UpdateCombiner.Pending p, Throwable error) {
        p.trail.emit(ended(p.trail.id(), p.attempt, error));
        p.fail(error);
    }

    private static RetryEvent ended(String id, int attempt, Throwable error) {
        return error instanceof UnknownOutcomeException
                ? new RetryEvent.UnknownOutcome(id, attempt, error.getMessage())
                : new RetryEvent.Failed(id, attempt, error);
    }

    /** The longest retention any of {@code updates} asked for; null when none sends idempotency keys. */
    private static Duration longestRetention(List<UpdateCombiner.Pending> updates) {
        Duration longest = null;
        for (UpdateCombiner.Pending p : updates) {
            if (p.retention != null && (longest == null || p.retention.compareTo(longest) > 0)) {
                longest = p.retention;
            }
        }
        return longest;
    }

    // ---- the loop's parts

    private Trail trail() {
        return new Trail(UUID.randomUUID().toString(), listeners, log);
    }

    /**
     * Sends once with {@code key} (when {@code retention} is set) and resends after a lost answer while
     * that is safe: a bounded number of times, and only within half the retention, so the cluster still
     * remembers the key when the resend arrives and answers with the first outcome.
     */
    private <R> R resending(String key, Duration retention, Function<String, R> send, IntConsumer resent) {
        if (retention == null) {
            return send.apply(null);
        }
        long started = System.nanoTime();
        for (int resends = 0; ; resends++) {
            try {
                return send.apply(key);
            } catch (UnknownOutcomeException e) {
                if (resends == MAX_RESENDS || System.nanoTime() - started > retention.toNanos() / 2
                        || !sleep(delay(resends + 1))) {
                    throw e;
                }
                resent.accept(resends + 1);
            }
        }
    }

    /** The backoff's wait after {@code failures} failed attempts. */
    private Duration delay(int failures) {
        return backoff.delay(failures, random.get());
    }

    /** Waits {@code delay}; false when interrupted (the flag is kept set). */
    private boolean sleep(Duration delay) {
        try {
            sleeper.sleep(delay);
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
