package io.ratchet.recipes.lock;

import java.time.Duration;
import java.time.Instant;

/**
 * A place in a {@link FairLocks fair lock}'s queue that {@link FairLocks#enqueue} took and nobody has
 * waited on yet: hand it to {@link FairLocks#await} (once) to wait for its turn, or to
 * {@link FairLocks#leave} to give it up. Immutable.
 *
 * <p>Its entry lapses when its lease runs out on cluster time unless {@code await} renews it, so await
 * well within {@link #duration()} of the enqueue.
 */
public final class Ticket {
    private final String name;
    private final String owner;
    private final String key;
    private final long place;
    private final long currentIndex;
    private final Instant expiresAt;
    private final Duration duration;
    /** When the write that set {@link #expiresAt} was sent, on the enqueuing instance's monotonic clock. */
    final long sentNanos;

    Ticket(String name, String owner, String key, long place, long currentIndex, Instant expiresAt, Duration duration,
           long sentNanos) {
        this.name = name;
        this.owner = owner;
        this.key = key;
        this.place = place;
        this.currentIndex = currentIndex;
        this.expiresAt = expiresAt;
        this.duration = duration;
        this.sentNanos = sentNanos;
    }

    /** The lock's name. */
    public String name() {
        return name;
    }

    /** The owner id the entry carries. */
    public String owner() {
        return owner;
    }

    /** The queue entry's item. */
    public String key() {
        return key;
    }

    /**
     * The place in the queue: the index that created the entry. Entries are served in the order of their
     * places (entries that joined in one log entry share a place, and are served in the order of their keys).
     */
    public long place() {
        return place;
    }

    /** The entry's index now. */
    public long currentIndex() {
        return currentIndex;
    }

    /** When the entry lapses unless renewed, in cluster time. */
    public Instant expiresAt() {
        return expiresAt;
    }

    /** The lease the entry was taken with, and that waiting renews. */
    public Duration duration() {
        return duration;
    }

    @Override
    public String toString() {
        return "Ticket[name=" + name + ", owner=" + owner + ", key=" + key + ", place=" + place + ", currentIndex="
                + currentIndex + ", expiresAt=" + expiresAt + ", duration=" + duration + "]";
    }
}
