package io.ratchet.client;

/**
 * The write would have added to the state while the leader's disk had less free space than its floor
 * ({@code store.min.free}), so the leader refused it before the log: nothing was written. Reads, deletes
 * and writes that do not grow the state still go through. Retrying is safe but succeeds only once the
 * disk has room again (delete items, or give the disk space); the quota has nothing to do with it.
 */
public final class DiskFullException extends RatchetException {
    private final String node;
    private final long freeBytes;
    private final long floorBytes;

    public DiskFullException(String node, long freeBytes, long floorBytes) {
        super(ErrorCode.DISK_FULL, "node " + node + " (the leader) has " + freeBytes
                + " bytes free on the disk that holds its store, under its floor of " + floorBytes
                + ": writes that add to the state are refused until the disk has room; nothing was written", null);
        this.node = node;
        this.freeBytes = freeBytes;
        this.floorBytes = floorBytes;
    }

    /** The leader that refused the write. */
    public String node() {
        return node;
    }

    public long freeBytes() {
        return freeBytes;
    }

    public long floorBytes() {
        return floorBytes;
    }
}
