package io.ratchet.protocol;

import java.util.List;

/** What a node answers to a command or query. A failed condition is a normal result, not an error. */
public sealed interface Result permits Result.Write, Result.Rejected, Result.Found, Result.Items, Result.Stats {

    /**
     * The outcome of a put or delete. On success: a put carries the new index and value, a delete index
     * 0 and no value (the state after it). On a failed condition: the item's current index (0 when
     * absent), value and metadata (null when absent), so a retry can recompute without another read.
     */
    record Write(boolean successful, String key, long index, String value, String metadata) implements Result {
    }

    /** A command the node refused as invalid; nothing was written. */
    record Rejected(String reason) implements Result {
    }

    /** The answer to a get: the item, or null when the key is absent. */
    record Found(Item item) implements Result {
    }

    /** Items in key order. */
    record Items(List<Item> items) implements Result {
        public Items {
            items = List.copyOf(items);
        }
    }

    /** A node's applied index, cluster time (epoch milliseconds) and item count. */
    record Stats(long appliedIndex, long clusterTime, long itemCount) implements Result {
    }
}
