package io.ratchet.client.session;

import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.TransactionResult;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Item;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The four cluster calls that sessions and retry loops are built on, and nothing else: so the recipes
 * use only the public primitives, and their loop logic can be tested without a cluster.
 */
interface ClusterAccess {

    /** A linearizable read of a document and its guard index. */
    Optional<Document> document(String id);

    /** A linearizable read of an item. */
    Optional<Item> item(String key);

    /** One transaction; {@code idempotencyKey} null for none. */
    TransactionResult transaction(List<Command.Op> ops, String idempotencyKey, Duration retention);

    /** One put or delete; {@code idempotencyKey} null for none. */
    CompareExchangeResult write(Command.Op write, String idempotencyKey, Duration retention);

    static ClusterAccess of(RatchetClient client) {
        return new ClusterAccess() {
            @Override
            public Optional<Document> document(String id) {
                return client.getDocument(id);
            }

            @Override
            public Optional<Item> item(String key) {
                return client.get(key);
            }

            @Override
            public TransactionResult transaction(List<Command.Op> ops, String idempotencyKey, Duration retention) {
                return client.transaction(ops, idempotencyKey, retention);
            }

            @Override
            public CompareExchangeResult write(Command.Op write, String idempotencyKey, Duration retention) {
                return client.write(write, idempotencyKey, retention);
            }
        };
    }
}
