package io.ratchet.client;

/**
 * The write would have taken the cluster's state over its storage quota, so it was refused and nothing
 * was written. Reads, deletes and writes that do not grow the state still go through. Retrying is safe
 * but succeeds only once space is freed (deletes) or the quota is raised ({@code ratchet quota set}).
 */
public final class QuotaExceededException extends RatchetException {
    private final long used;
    private final long quota;
    private final long needed;

    public QuotaExceededException(long used, long quota, long needed) {
        super(ErrorCode.QUOTA_EXCEEDED, "storage quota exceeded: the state uses " + used + " of " + quota
                + " bytes and this write needs " + needed + " more; delete items or raise the quota", null);
        this.used = used;
        this.quota = quota;
        this.needed = needed;
    }

    /** What the state counted for when the write was refused, in the quota's units (bytes). */
    public long used() {
        return used;
    }

    public long quota() {
        return quota;
    }

    /** How much the write would have added. */
    public long needed() {
        return needed;
    }
}
