package io.ratchet.chaos.workload;

import io.ratchet.client.RatchetClient;
import io.ratchet.client.TransactionResult;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Item;
import java.util.List;

/**
 * The two calls the append workload's transactions are made of: a read of several keys at one moment, and
 * a transaction. The client's own, unless a test swaps in a deliberately broken one ({@link UncheckedReads},
 * {@link ReadsTakenOnce}) to show the checker catches what it breaks.
 */
public interface AppendClient {
    /** The client underneath: what the calls go through, and the raw steps of a transaction whose coordinator goes away. */
    RatchetClient client();

    /** The items under {@code keys} that exist, as they all were at one moment. */
    default List<Item> getAll(List<String> keys) {
        return client().getAll(keys);
    }

    /** Every operation or none. */
    default TransactionResult transaction(List<Command.Op> ops) {
        return client().transaction(ops);
    }

    /** The real client, unchanged. */
    static AppendClient of(RatchetClient client) {
        return () -> client;
    }
}
