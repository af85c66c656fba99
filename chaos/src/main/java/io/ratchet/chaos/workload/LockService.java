package io.ratchet.chaos.workload;

import io.ratchet.client.UnknownOutcomeException;
import java.util.Optional;

/**
 * The lock operations the locks workload needs, and nothing else; {@link LeasedLocks} implements them
 * over Ratchet's lock API.
 */
public interface LockService {

    /** The item that holds lock {@code name}, as histories name it. */
    String key(String name);

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
