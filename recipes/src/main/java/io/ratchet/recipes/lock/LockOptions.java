package io.ratchet.recipes.lock;

import io.ratchet.protocol.Expiry;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How a {@link Locks} instance acquires.
 *
 * @param owner    the id written into every lock this instance acquires: informational (who holds it),
 *                 since safety rests on indexes and fencing tokens, but it should be unique per holder
 * @param maxLease the longest lease a caller may ask for; longer requests are refused before anything
 *                 is written, so a typo cannot take a lock for a year
 */
public record LockOptions(String owner, Duration maxLease) {
    /** The default ceiling on a lease, in minutes (a constant, so help texts can quote it). */
    public static final int DEFAULT_MAX_LEASE_MINUTES = 60;
    /** The default ceiling on a lease. */
    public static final Duration DEFAULT_MAX_LEASE = Duration.ofMinutes(DEFAULT_MAX_LEASE_MINUTES);
    /** The longest an owner id may be. */
    public static final int MAX_OWNER_LENGTH = 256;

    public LockOptions {
        if (owner == null || owner.isBlank() || owner.length() > MAX_OWNER_LENGTH) {
            throw new IllegalArgumentException("a lock owner is 1.." + MAX_OWNER_LENGTH + " characters, not blank");
        }
        if (maxLease == null || maxLease.toMillis() <= 0 || maxLease.toMillis() > Expiry.MAX_TTL_MILLIS) {
            throw new IllegalArgumentException("the maximum lease must be 1 ms .. 366 days, not " + maxLease);
        }
    }

    /** A fresh owner id ({@code host/pid/random}) and a one-hour maximum lease. */
    public static LockOptions defaults() {
        return new LockOptions(newOwnerId(), DEFAULT_MAX_LEASE);
    }

    public LockOptions withOwner(String owner) {
        return new LockOptions(owner, maxLease);
    }

    public LockOptions withMaxLease(Duration maxLease) {
        return new LockOptions(owner, maxLease);
    }

    /** {@code host/pid/8 random hex digits}: readable in a lock dump, unique per instance in practice. */
    public static String newOwnerId() {
        byte[] random = new byte[4];
        ThreadLocalRandom.current().nextBytes(random);
        return Host.NAME + "/" + ProcessHandle.current().pid() + "/" + HexFormat.of().formatHex(random);
    }

    /** Looked up once: a host name lookup can be slow. */
    private static final class Host {
        static final String NAME = lookup();

        private static String lookup() {
            try {
                return InetAddress.getLocalHost().getHostName();
            } catch (UnknownHostException e) {
                return "unknown-host";
            }
        }
    }
}
