package io.ratchet.node.http;

import io.ratchet.common.Readiness;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Refusal;
import io.ratchet.statemachine.KeyContention;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/** What the HTTP API asks of the node it runs in, rather than of the cluster. */
public interface LocalNode {
    /** This node's id. */
    String id();

    /** A read of this node's own applied state, with the index it had applied. */
    CompletableFuture<StaleItem> staleGet(String key);

    /**
     * Whether the caller with {@code token} may ask {@code query} of this node's own state (a stale read,
     * the hot keys), by this node's permission table: null when it may, else the refusal.
     */
    Refusal check(String token, Query query);

    /** Open client sessions in this node's applied state. */
    int sessionCount();

    /** Conditions evaluated per key as this node applied entries. */
    KeyContention contention();

    /** Whether this node is ready to take traffic, and what it judged by. */
    Readiness readiness();

    /** Every metric of this node, in Prometheus' text format. */
    String metrics();

    /** An item (or none) as this node's state had it at {@code appliedIndex}. */
    record StaleItem(Optional<Item> item, long appliedIndex) {
    }
}
