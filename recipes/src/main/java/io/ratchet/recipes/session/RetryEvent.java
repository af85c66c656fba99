package io.ratchet.recipes.session;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/**
 * One step of a {@link Retry} loop, in the order it happened: every event of one {@code run}, {@code call}
 * or {@code update} carries the same {@link #operationId()}, and {@link #attempt()} numbers the attempt
 * it belongs to (1 for the first). A loop's trail reads
 *
 * <pre>
 * Check → (Mismatch… → Abort → Backoff → Retrying → Check)… → Committed | Exhausted | UnknownOutcome | Failed
 * </pre>
 *
 * with a {@link Resend} after a {@link Check} whose answer was lost. Exactly one {@link Outcome} ends a
 * trail. Delivered to {@link RetryListener}s, logged at debug level by the logger
 * {@code io.ratchet.recipes.session.Retry}, and carried by {@link RetryExhaustedException#trail()} and
 * {@link ConcurrencyException#trail()}.
 */
public sealed interface RetryEvent {

    /** The id shared by every event of one operation (one call of run, call or update). */
    String operationId();

    /** The attempt this event belongs to, from 1. */
    int attempt();

    /** One line for a log: the operation, the attempt and what happened. */
    String describe();

    /** The last event of a trail: how the operation ended. */
    sealed interface Outcome extends RetryEvent permits Committed, Exhausted, UnknownOutcome, Failed {
    }

    /** A condition an attempt's write is sent with: {@code key} must be at {@code expectedIndex} (0: absent). */
    record Condition(String key, long expectedIndex) {
    }

    /**
     * An attempt is sent, conditioned on {@code conditions}. {@code combinedWith} is how many other
     * callers' updates the same put carries ({@link Retry#update} on a key another thread of the same
     * client is updating); 0 for {@code run} and {@code call}, and for an update sent alone.
     */
    record Check(String operationId, int attempt, List<Condition> conditions, int combinedWith) implements RetryEvent {
        public Check {
            conditions = List.copyOf(conditions);
        }

        @Override
        public String describe() {
            return prefix(this) + "check " + conditions.stream()
                    .map(c -> "'" + c.key() + "' at index " + c.expectedIndex())
                    .collect(Collectors.joining(", "))
                    + (combinedWith == 0 ? "" : ", combined with " + combinedWith + " other update(s) in one put");
        }
    }

    /** The attempt was refused because {@code key} was at {@code actualIndex} (0: absent), not {@code expectedIndex}. */
    record Mismatch(String operationId, int attempt, String key, long expectedIndex, long actualIndex) implements RetryEvent {
        @Override
        public String describe() {
            return prefix(this) + "mismatch on '" + key + "': expected index " + expectedIndex + ", actual " + actualIndex;
        }
    }

    /** The attempt was refused; nothing of it was applied. */
    record Abort(String operationId, int attempt) implements RetryEvent {
        @Override
        public String describe() {
            return prefix(this) + "abort: refused, nothing applied";
        }
    }

    /** The loop waits {@code delay} (full jitter) before the next attempt. */
    record Backoff(String operationId, int attempt, Duration delay) implements RetryEvent {
        @Override
        public String describe() {
            return prefix(this) + "backoff " + delay.toNanos() / 1_000_000.0 + " ms";
        }
    }

    /**
     * The update escalated: after {@code refusals} refused puts it holds the key's fair lock (fencing token
     * {@code fencingToken}) while it finishes, so contending clients take turns instead of racing.
     */
    record Escalated(String operationId, int attempt, String lock, int refusals, long fencingToken) implements RetryEvent {
        @Override
        public String describe() {
            return prefix(this) + "escalated to fair lock " + lock + " after " + refusals + " refusals, token " + fencingToken;
        }
    }

    /** The next attempt starts: {@code attempt} is its number. */
    record Retrying(String operationId, int attempt) implements RetryEvent {
        @Override
        public String describe() {
            return prefix(this) + "retry";
        }
    }

    /** The attempt's answer was lost; it is sent again, the {@code resend}-th time, with the same idempotency key. */
    record Resend(String operationId, int attempt, int resend) implements RetryEvent {
        @Override
        public String describe() {
            return prefix(this) + "answer lost; resend " + resend + " with the same idempotency key";
        }
    }

    /** The attempt was applied at log index {@code index} (0: nothing to save). */
    record Committed(String operationId, int attempt, long index) implements Outcome {
        @Override
        public String describe() {
            return prefix(this) + "committed at index " + index;
        }
    }

    /** The loop gave up: its last attempt was refused, or it was interrupted while backing off. */
    record Exhausted(String operationId, int attempt, boolean interrupted) implements Outcome {
        @Override
        public String describe() {
            return prefix(this) + (interrupted ? "exhausted: interrupted while backing off" : "exhausted: out of attempts");
        }
    }

    /** The attempt's answer was lost and resending could not settle it: it may or may not have been applied. */
    record UnknownOutcome(String operationId, int attempt, String message) implements Outcome {
        @Override
        public String describe() {
            return prefix(this) + "unknown outcome: " + message;
        }
    }

    /**
     * The operation ended with {@code error}: the unit of work or update function threw (or computed
     * null), the write was invalid, or the cluster could not be reached.
     */
    record Failed(String operationId, int attempt, Throwable error) implements Outcome {
        @Override
        public String describe() {
            return prefix(this) + "error: " + error;
        }
    }

    private static String prefix(RetryEvent e) {
        return "retry " + e.operationId() + " attempt " + e.attempt() + ": ";
    }
}
