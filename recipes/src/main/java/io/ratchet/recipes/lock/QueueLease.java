package io.ratchet.recipes.lock;

import java.time.Duration;
import java.time.Instant;

/**
 * A held turn at the head of a {@link FairLocks fair lock}'s queue, or one of a {@link Semaphores
 * semaphore}'s permits: the grant one acquire made, as last renewed. Immutable; a renewal returns a new
 * {@code QueueLease}.
 *
 * <p>It is a queue entry, the item {@code key} ({@code fair-locks/<name>/<16 hex digits>} or
 * {@code semaphores/<name>/<16 hex digits>}), that joined the queue at {@code place} and renewed itself
 * when its turn came; that renewal's index is the fencing token. Guarantee, as for {@link Lease}: until
 * cluster time reaches {@code expiresAt} the entry keeps its turn (no other holder of a fair lock, no more
 * than N of a semaphore), and renewing or releasing needs {@code currentIndex}. Hand {@code fencingToken}
 * to every resource the lock protects, and have the resource refuse a token lower than the highest it has
 * seen: a fair lock's holders' tokens strictly increase.
 *
 * <p>A lease is only returned if its turn write was answered within {@code duration} of the moment it was
 * sent, and that write was sent when the turn came, after you called: so the lease runs for at least
 * {@code duration} from the moment you called, on your monotonic clock (to within the nodes' clock skew),
 * as a {@link Lease} does, and after a long wait it still has nearly all of it when the call returns.
 *
 * @param name         the lock's or semaphore's name
 * @param owner        who holds it (the owner id of the instance that acquired it)
 * @param key          the queue entry's item
 * @param place        where the entry joined the queue: the index that created it (entries that joined in
 *                     one log entry share it; the queue orders them by key)
 * @param fencingToken the index of the turn write: constant across renewals; for a fair lock strictly
 *                     greater for every later holder; for a semaphore never lower than an earlier turn's,
 *                     and shared only by turns that came in one log entry
 * @param currentIndex the entry's index now: what the next renew or release is conditioned on
 * @param expiresAt    when the lease ends, in cluster time (the leaders' clocks, not this process's)
 * @param duration     the lease each renewal asks for unless told otherwise
 */
public record QueueLease(String name, String owner, String key, long place, long fencingToken, long currentIndex,
                         Instant expiresAt, Duration duration) implements Grant {
}
