package io.ratchet.node;

import java.io.File;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The free space of the disk that holds this node's store, against its floor ({@code store.min.free}).
 * Below it the leader refuses writes that add to the state, before the log, so the disk keeps room for
 * the log, compaction and deletes; the quota bounds what the state counts, this what the disk has. Read
 * at most every {@link #INTERVAL_NANOS}, so a write's check costs a field read; crossing the floor is
 * logged once each way.
 */
final class DiskFloor {
    private static final Logger LOG = LoggerFactory.getLogger(DiskFloor.class);
    static final long INTERVAL_NANOS = 200_000_000;

    private final String nodeId;
    private final File dir;
    private final long floorBytes;
    private volatile long free = Long.MAX_VALUE;
    private volatile long readAt = System.nanoTime() - 2 * INTERVAL_NANOS;
    private volatile boolean low;

    /** @param floorBytes 0: no floor */
    DiskFloor(String nodeId, Path storage, long floorBytes) {
        this.nodeId = nodeId;
        this.dir = storage.toFile();
        this.floorBytes = floorBytes;
    }

    /** Whether the disk has less free space than the floor, as last read. */
    boolean low() {
        if (floorBytes == 0) {
            return false;
        }
        long now = System.nanoTime();
        if (now - readAt >= INTERVAL_NANOS) {
            readAt = now;
            long f = dir.getUsableSpace();
            free = f == 0 && !dir.exists() ? Long.MAX_VALUE : f;
            boolean wasLow = low;
            low = free < floorBytes;
            if (low && !wasLow) {
                LOG.error("node {}: the disk that holds its store has {} bytes free, under its floor of {}: while it leads, "
                        + "writes that add to the state are refused (store.min.free)", nodeId, free, floorBytes);
            } else if (!low && wasLow) {
                LOG.warn("node {}: the disk has {} bytes free again, above its floor of {}: writes are taken again",
                        nodeId, free, floorBytes);
            }
        }
        return low;
    }

    /** The free space last read. */
    long free() {
        return free;
    }

    long floor() {
        return floorBytes;
    }
}
