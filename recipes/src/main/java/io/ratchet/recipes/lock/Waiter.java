package io.ratchet.recipes.lock;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** One {@link LeaseQueue} acquire's state. Touched only by the steps of its own chain, one after another. */
final class Waiter {
    final String name;
    final String queue;
    final Duration lease;
    final long leaseMillis;
    final int permits;
    /** Join again at the back when the place is lost (acquire), rather than fail (await) or refuse (try). */
    final boolean requeue;
    /** Look once; never wait (tryAcquire). */
    final boolean once;
    /** When to stop waiting, and (+ slack) when to abandon a call still unanswered; monotonic nanos. */
    final long deadline;
    final long endsAt;
    Place place;
    /** The index the place had when it was lost. */
    long lostIndex;
    int enqueues;
    int pauses;
    boolean configChecked;
    volatile boolean abandoned;

    Waiter(String name, String queue, Duration lease, int permits, boolean requeue, boolean once, long deadline,
           long endsAt) {
        this.name = name;
        this.queue = queue;
        this.lease = lease;
        this.leaseMillis = lease.toMillis();
        this.permits = permits;
        this.requeue = requeue;
        this.once = once;
        this.deadline = deadline;
        this.endsAt = endsAt;
    }

    long leaseNanos() {
        return TimeUnit.MILLISECONDS.toNanos(leaseMillis);
    }

    /**
     * A place held in the queue.
     *
     * @param sentNanos when the write that set {@code expiresAt} was sent (monotonic): the entry lives on
     *                  cluster time until at least {@code sentNanos + lease}, to within clock skew
     */
    record Place(String key, long place, long index, long expiresAt, long sentNanos) {
        Place moved(long index, long expiresAt) {
            return new Place(key, place, index, expiresAt, sentNanos);
        }
    }
}
