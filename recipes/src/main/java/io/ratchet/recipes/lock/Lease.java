package io.ratchet.recipes.lock;

import java.time.Duration;
import java.time.Instant;

/**
 * A held lock: the grant one {@link Locks#tryAcquire acquire} made, as last renewed. Immutable; a
 * renewal returns a new {@code Lease}.
 *
 * <p>Guarantee: until cluster time reaches {@code expiresAt}, no other owner can acquire the lock, and
 * renewing or releasing needs {@code currentIndex}, which only this grant knows. Your own clock cannot
 * tell you reliably whether that time has come (a process may pause, clocks drift): hand
 * {@code fencingToken} to every resource the lock protects, and have the resource refuse a token lower
 * than the highest it has seen.
 *
 * <p>A lease is only returned if its answer came back within {@code duration} of the moment the acquire
 * or renewal was sent, so it runs for at least {@code duration} counted from the moment you called, on
 * your monotonic clock (to within the nodes' clock skew): time your renewals from then, not from when
 * the call returned.
 *
 * @param name         the lock's name; its item is {@code locks/<name>}
 * @param owner        who holds it (the {@link Locks#owner()} that acquired it)
 * @param fencingToken the index of the entry that granted the lock: constant across renewals, and
 *                     strictly greater for every later holder
 * @param currentIndex the lock item's index now: what the next renew or release is conditioned on
 * @param expiresAt    when the lease ends, in cluster time (the leaders' clocks, not this process's)
 * @param duration     the lease each renewal asks for unless told otherwise
 */
public record Lease(String name, String owner, long fencingToken, long currentIndex, Instant expiresAt,
                    Duration duration) implements Grant {
}
