package io.ratchet.statemachine;

/**
 * How large a storage quota a node's heap holds. The state is counted in {@link Footprint} units, which
 * are at least what it takes on the heap; a node needs room for it twice (a follower reads a snapshot
 * from the leader while it still holds its own state) plus a reserve for what is bounded but not counted:
 * the Raft log's cache of recent segments, entries in flight, tombstones, watches and the collector's
 * working room. A node whose heap is smaller refuses to start, rather than run into back-to-back full
 * collections and lose its leader when the state grows.
 */
public final class HeapBudget {
    /** The heap a node keeps beside twice its state. */
    public static final long RESERVE_BYTES = 192L << 20;

    private HeapBudget() {
    }

    /** The heap a node needs for {@code quota}. */
    public static long heapFor(long quota) {
        return 2 * quota + RESERVE_BYTES;
    }

    /** The largest quota a heap of {@code maxHeap} bytes holds (0 when it holds none). */
    public static long maxQuota(long maxHeap) {
        return Math.max(0, (maxHeap - RESERVE_BYTES) / 2);
    }

    /** Null when a heap of {@code maxHeap} holds {@code quota}; else why not, and what to do. */
    public static String refusal(long quota, long maxHeap) {
        if (heapFor(quota) <= maxHeap) {
            return null;
        }
        return "a storage quota of " + mib(quota) + " needs a heap of at least " + mib(heapFor(quota))
                + " (twice the quota plus " + mib(RESERVE_BYTES) + "), and this node has " + mib(maxHeap)
                + ": start it with -Xmx" + (heapFor(quota) + (1L << 20) - 1 >> 20) + "m or more, or set a quota of at most "
                + mib(maxQuota(maxHeap)) + " (quota.bytes in the node's config, or ratchet quota set)";
    }

    private static String mib(long bytes) {
        return (bytes >> 20) + " MiB";
    }
}
