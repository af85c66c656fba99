package io.ratchet.chaos.workload;

import io.ratchet.client.UnknownOutcomeException;
import java.util.Optional;

/**
 * The lock operations the locks workload needs, and nothing else, so that what implements them can
 * change under it: today {@link CompareExchangeLocks}, the recipe over compare-exchange items that
 * DESIGN.md describes; once the lock API of issue 3 exists, an adapter over {@code client.locks()}
 * (its {@code Lease} gives owner and fencing token, and its lease length goes in {@link #leaseMillis()}).
 */
public interface LockService {

    /**
     * The outcome of one acquire attempt.
     *
     * @param granted whether this attempt now holds the lock
     * @param holder  the holder after the attempt: this attempt's grant when granted, else the current
     *                holder's, or null when the service does not say
     */
    record Acquisition(boolean granted, LockGrant holder) {
    }

    /**
     * Tries once to take {@code name} for {@code owner}, without waiting.
     *
     * @throws UnknownOutcomeException when the attempt got no answer: it may hold the lock now, which
     *                                 {@link #holder} tells
     */
    Acquisition tryAcquire(String name, String owner);

    /** The lock's holder now, or empty when it is free. */
    Optional<LockGrant> holder(String name);

    /**
     * Gives up {@code grant}. Returns false when it was no longer held by it.
     *
     * @throws UnknownOutcomeException when the release got no answer: {@link #holder} tells whether it happened
     */
    boolean release(LockGrant grant);

    /** How long a grant lasts unless renewed, in milliseconds; 0 when grants never expire. */
    default long leaseMillis() {
        return 0;
    }
}
