package io.ratchet.chaos.workload;

/**
 * Who holds a lock and with which fencing token.
 *
 * @param name  the lock's name
 * @param owner the holder: unique to one acquire attempt
 * @param token the fencing token: strictly greater than every earlier holder's
 */
public record LockGrant(String name, String owner, long token) {
}
