package io.ratchet.statemachine;

/**
 * The heap a node needs. The state is on disk, so that is a fixed amount whatever its size: the Raft
 * log's cache of recent segments, entries in flight, sessions' index (bounded), watches, tombstones'
 * and the collector's working room. A node whose heap is smaller refuses to start, naming what it needs,
 * rather than run out of memory under load.
 */
public final class HeapBudget {
    /** The least heap a node starts with. */
    public static final long MIN_HEAP_BYTES = 192L << 20;

    private HeapBudget() {
    }

    /** Null when a heap of {@code maxHeap} bytes is enough; else why not, and what to do. */
    public static String refusal(long maxHeap) {
        if (maxHeap >= MIN_HEAP_BYTES) {
            return null;
        }
        return "a node needs a heap of at least " + (MIN_HEAP_BYTES >> 20) + " MiB, and this one has "
                + (maxHeap >> 20) + " MiB: start it with -Xmx" + (MIN_HEAP_BYTES >> 20) + "m or more";
    }
}
