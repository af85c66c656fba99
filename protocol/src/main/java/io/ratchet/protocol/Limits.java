package io.ratchet.protocol;

/** The protocol's hard limits; every node and client enforces the same numbers. */
public final class Limits {
    /** A key is 1..512 bytes of UTF-8. */
    public static final int MAX_KEY_BYTES = 512;
    /** A value (and, separately, its metadata) is at most 1 MiB of encoded JSON. */
    public static final int MAX_VALUE_BYTES = 1 << 20;
    /** The most items one list or getAll returns. */
    public static final int MAX_PAGE_SIZE = 1024;
    /** The most keys one getAll names. */
    public static final int MAX_GET_ALL_KEYS = 1024;
    /** The most commands one request (and so one log entry from one client) carries. */
    public static final int MAX_COMMANDS_PER_REQUEST = 1024;
    /**
     * The largest request a node accepts: one full-size value and metadata plus framing. A log entry
     * must fit Ratis' appender buffer (4 MiB by default), so a request stays well under it.
     */
    public static final int MAX_REQUEST_BYTES = 3 << 20;
    /**
     * The longest one watch waits, in seconds: what a client may ask for, and what a node holds. (The
     * client holds a longer wait as slices of a few seconds, so a node that goes silent is left soon.)
     */
    public static final int MAX_WATCH_SECONDS = 60;
    /** Keys under this prefix belong to Atomic Guards; plain compare-exchange writes to them are refused. */
    public static final String RESERVED_GUARD_PREFIX = "rvn-atomic/";

    /**
     * The storage quota a cluster starts with, in the store's own units (see {@code Footprint}): 256 MiB.
     * Every replica starts from the same number, so they refuse the same writes before an operator sets
     * another (a node's {@code quota.bytes}, proposed once through the log, or {@code ratchet quota set}).
     */
    public static final long DEFAULT_QUOTA_BYTES = 256L << 20;
    /** The smallest quota a cluster takes: below it a few large values would fill it. */
    public static final long MIN_QUOTA_BYTES = 1L << 20;
    /** The largest: 1 TiB, beyond any heap a node can run with. */
    public static final long MAX_QUOTA_BYTES = 1L << 40;
    /** At this share of the quota in use a node raises its alarm (status, metrics, log), before writes are refused. */
    public static final int QUOTA_ALARM_PERCENT = 80;

    private Limits() {
    }
}
