package io.ratchet.recipes.session;

import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.TransactionResult;
import io.ratchet.recipes.lock.FairLocks;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Item;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The four cluster calls that sessions and retry loops are built on, and nothing else: so the recipes
 * use only the public primitives.
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

    /**
     * Takes the fair lock {@code name} for {@code lease}, waiting up to {@code wait}; empty when it was
     * not granted in time or this access cannot lock. Closing the hold releases it.
     */
    default Optional<Hold> lock(String name, Duration lease, Duration wait) {
        return Optional.empty();
    }

    /** A fair lock held: its fencing token; closing releases it (a lease already lost is let go). */
    interface Hold extends AutoCloseable {
        long fencingToken();

        @Override
        void close();
    }

    static ClusterAccess of(RatchetClient client) {
        FairLocks locks = new FairLocks(client);
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

            @Override
            public Optional<Hold> lock(String name, Duration lease, Duration wait) {
                return locks.acquire(name, lease, wait).map(held -> new Hold() {
                    @Override
                    public long fencingToken() {
                        return held.fencingToken();
                    }

                    @Override
                    public void close() {
                        try {
                            locks.release(held);
                        } catch (LeaseLostException e) {
                            // It ran out meanwhile: nothing of ours to release.
                        }
                    }
                });
            }
        };
    }
}
