package io.ratchet.recipes.lock;

import java.time.Duration;
import java.time.Instant;

/**
 * A held lock, fair lock or semaphore permit: what one acquire granted, as last renewed. Immutable; a
 * renewal returns a new grant with the same fencing token.
 *
 * <p>Guarantee: until cluster time reaches {@link #expiresAt()} the grant keeps the lock (no other
 * holder of a lock, no more than N holders of a semaphore), and renewing or releasing needs
 * {@link #currentIndex()}, which only this grant knows. A grant is returned only if its answer came back
 * within {@link #duration()} of the moment its write was sent, so it runs for at least that long from
 * the moment you called, on your monotonic clock (to within the nodes' clock skew).
 *
 * <p>What the caller owes: hand {@link #fencingToken()} to every resource the lock protects, and have the
 * resource refuse a token lower than the highest it has seen; renew well within {@link #duration()}.
 */
public interface Grant {
    /** The lock's name. */
    String name();

    /** Who holds it: the owner id of the instance that acquired it. */
    String owner();

    /** Constant across renewals; greater for every later holder of a lock (never lower, for a semaphore). */
    long fencingToken();

    /** The index of the grant's item now: what the next renew or release is conditioned on. */
    long currentIndex();

    /** When the lease ends, in cluster time (the leaders' clocks, not this process's). */
    Instant expiresAt();

    /** The lease each renewal asks for unless told otherwise. */
    Duration duration();
}
