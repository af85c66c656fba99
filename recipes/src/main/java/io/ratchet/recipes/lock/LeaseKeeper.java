package io.ratchet.recipes.lock;

import io.ratchet.client.Backoff;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.PutOptions;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * What every lock type does with a lease, whichever item holds it: checks a lease and a wait, times
 * writes against their lease on this process's monotonic clock, renews, and gives back a grant whose
 * answer came too late to be used. {@link Locks} and {@link LeaseQueue} (behind {@link FairLocks} and
 * {@link Semaphores}) differ only in which item they write; this is the part they share.
 *
 * <p>The rule it keeps: the cluster judges whether a lease runs (on cluster time); this process's clock
 * can only shorten a lease, never lengthen it. A write returns a grant only if its answer came back
 * within the lease of the moment it was sent, since the leader stamped it after that moment. A later
 * answer (after a leader change it can come seconds late, when a later holder may already hold) may
 * carry a lease that already ran out: it is given back, a delete at its index, which cannot touch a
 * later holder.
 */
final class LeaseKeeper {
    private static final long MAX_WAIT_SECONDS = 100L * 365 * 24 * 3600;
    /** Give-backs that find the entry renewed meanwhile follow it this many times. */
    private static final int MAX_GIVE_BACK_TRIES = 3;
    /** Between a waiter's attempts, so that waiters woken together do not collide again. */
    static final Backoff BACKOFF = new Backoff(Duration.ofMillis(10), Duration.ofMillis(500));

    private final RatchetClient client;
    private final LockOptions options;
    /** Times requests against their lease, and bounds waits; never judges whether a lease runs. */
    private final LongSupplier nanoClock;

    LeaseKeeper(RatchetClient client, LockOptions options, LongSupplier nanoClock) {
        this.client = Objects.requireNonNull(client, "client");
        this.options = Objects.requireNonNull(options, "options");
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
    }

    RatchetClient client() {
        return client;
    }

    LockOptions options() {
        return options;
    }

    long now() {
        return nanoClock.getAsLong();
    }

    /**
     * A lease as the cluster grants it: in whole milliseconds, rounded down, above 0 and at most the
     * maximum. The lease a caller is handed, and the too-late check, use this, never the finer duration asked for.
     */
    Duration granted(Duration lease) {
        if (lease == null || lease.toMillis() <= 0) {
            throw invalid("a lease must be at least 1 ms, not " + text(lease));
        }
        if (lease.compareTo(options.maxLease()) > 0) {
            throw invalid("a lease of " + text(lease) + " is above the maximum of " + text(options.maxLease()));
        }
        return Duration.ofMillis(lease.toMillis());
    }

    /** When a wait of {@code wait} from now ends, in monotonic nanos. */
    long deadline(Duration wait) {
        if (wait == null || wait.isNegative()) {
            throw invalid("a wait must be 0 or more, not " + text(wait));
        }
        // The local monotonic clock bounds how long we wait; it never judges a lease. (Capped so that the
        // deadline arithmetic cannot overflow: a century is as good as forever here.)
        return now() + Math.min(wait.toSeconds(), MAX_WAIT_SECONDS) * 1_000_000_000L + wait.toNanosPart();
    }

    /** Whether a write sent at {@code sentNanos} for {@code lease} was answered in time to be used. */
    boolean inTime(long sentNanos, Duration lease) {
        return now() - sentNanos < lease.toNanos();
    }

    boolean past(long deadline) {
        return now() - deadline >= 0;
    }

    // ---- writes

    /** A put of {@code value} at {@code index} (0: create) with a time-to-live of {@code lease}. */
    CompletableFuture<CompareExchangeResult> put(String key, Map<String, ?> value, long index, Duration lease) {
        return client.putAsync(key, value, index, PutOptions.none().ttl(lease));
    }

    /**
     * Renews the item {@code key} at {@code index} to {@code granted} from the renewal's cluster time,
     * writing {@code value}. Completes with the answer when it came in time; when refused, with what
     * {@code refused} makes of the item there now (a {@link LeaseLostException}); when answered too late,
     * gives the renewed item back and fails with {@link LeaseLostException#answeredTooLate}.
     *
     * @param place    the item's created index, so a give-back follows it should it have moved on
     * @param answered sees every successful answer, in time or not (what it says about cluster time holds)
     */
    CompletableFuture<CompareExchangeResult> renew(String name, String key, Map<String, ?> value, long index, long place,
                                                   Duration granted, Function<Item, CompletableFuture<Void>> refused,
                                                   Consumer<CompareExchangeResult> answered) {
        long sent = now();
        return put(key, value, index, granted).thenCompose(r -> {
            if (!r.successful()) {
                return refused.apply(r.item()).thenApply(ignored -> r);
            }
            answered.accept(r);
            if (inTime(sent, granted)) {
                return CompletableFuture.completedFuture(r);
            }
            return giveBack(key, r.index(), place).thenCompose(ignored -> CompletableFuture.failedFuture(
                    LeaseLostException.answeredTooLate(name, index, granted)));
        });
    }

    /**
     * Deletes the item {@code key} at {@code index} if it is still there; if it has moved on under the same
     * created index {@code place} (a renewal that was in flight), at its new index. Completes either way,
     * never exceptionally: what it gives back runs out on its own if the delete is lost.
     */
    CompletableFuture<Void> giveBack(String key, long index, long place) {
        return giveBack(key, index, place, MAX_GIVE_BACK_TRIES);
    }

    private CompletableFuture<Void> giveBack(String key, long index, long place, int tries) {
        return client.deleteAsync(key, index).handle((r, error) -> {
            if (error == null && !r.successful() && r.item() != null && r.item().createdIndex() == place && tries > 1) {
                return giveBack(key, r.item().index(), place, tries - 1);
            }
            return CompletableFuture.<Void>completedFuture(null);
        }).thenCompose(f -> f);
    }

    // ---- bounds

    /**
     * {@code call}, answered by {@code endsAt} (monotonic nanos; {@link Long#MAX_VALUE} for no bound) or
     * abandoned: empty then. A call cannot be taken back once sent; {@code lateAnswer} (may be null) gets
     * an answer that arrives after, to give back what it granted.
     */
    <T> CompletableFuture<Optional<T>> within(long endsAt, Supplier<CompletableFuture<T>> call, Consumer<T> lateAnswer) {
        if (endsAt == Long.MAX_VALUE) {
            return call.get().thenApply(Optional::of);
        }
        long left = endsAt - now();
        if (left <= 0) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        // Whichever comes first, the answer or the end, decides.
        AtomicBoolean decided = new AtomicBoolean();
        CompletableFuture<Optional<T>> outcome = new CompletableFuture<>();
        call.get().whenComplete((r, error) -> {
            if (decided.compareAndSet(false, true)) {
                if (error != null) {
                    outcome.completeExceptionally(error);
                } else {
                    outcome.complete(Optional.of(r));
                }
            } else if (error == null && lateAnswer != null) {
                lateAnswer.accept(r);
            }
        });
        client.after(Duration.ofNanos(left)).whenComplete((done, closed) -> {
            if (decided.compareAndSet(false, true)) {
                outcome.complete(Optional.empty());
            }
        });
        return outcome;
    }

    /** Waits for {@code step} at most until {@code endsAt}; it goes on unwatched after that. */
    CompletableFuture<Void> untilEnd(long endsAt, CompletableFuture<Void> step) {
        if (endsAt == Long.MAX_VALUE) {
            return step;
        }
        long left = endsAt - now();
        if (left <= 0) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> either = new CompletableFuture<>();
        step.whenComplete((done, error) -> either.complete(null));
        client.after(Duration.ofNanos(left)).whenComplete((done, closed) -> either.complete(null));
        return either;
    }

    /** The jittered pause after attempt {@code attempt} (1 = the first), never past {@code deadline}. */
    CompletableFuture<Void> pause(int attempt, long deadline) {
        long remaining = Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - now()));
        long millis = Math.min(remaining, BACKOFF.delay(attempt, ThreadLocalRandom.current()).toMillis());
        return millis <= 0 ? CompletableFuture.completedFuture(null) : client.after(Duration.ofMillis(millis));
    }

    // ---- checks and messages

    static void requireIndex(String kind, String name, long index) {
        if (index <= 0) {
            throw invalid("a held " + kind + "'s index is above 0; " + kind + " '" + abbreviate(name) + "' was given " + index);
        }
    }

    static <T> CompletableFuture<T> checked(Supplier<CompletableFuture<T>> call) {
        try {
            return call.get();
        } catch (InvalidRequestException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    static InvalidRequestException invalid(String message) {
        return new InvalidRequestException(message, null);
    }

    static String text(Duration d) {
        if (d == null) {
            return "none";
        }
        if (d.getNano() == 0) {
            return d.getSeconds() + " s";
        }
        return d.toMillis() != 0 ? d.toMillis() + " ms" : d.toNanos() + " ns";
    }

    static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...(" + s.length() + " chars)";
    }
}
