package io.ratchet.chaos.workload;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import java.util.Optional;

/**
 * FOR TESTING THE HARNESS ONLY: a deliberately broken client that turns every conditional put into an
 * unconditional one. It reads the item's current index and writes at that, instead of at the index the
 * caller gave, so a write based on a stale read overwrites whatever came in between (a lost update).
 * The history still records the caller's condition, and the register checker must flag it. Only the
 * hidden {@code --test-break-conditional-puts} option turns it on; a run with it is never reported valid
 * by accident, since its summary names the mode.
 */
public final class UnconditionalPuts implements RegisterClient {
    private final RatchetClient client;

    public UnconditionalPuts(RatchetClient client) {
        this.client = client;
    }

    @Override
    public CompareExchangeResult put(String key, JsonNode value, long index) {
        if (index == 0) {
            return client.put(key, value, 0);
        }
        long current = client.get(key).map(Item::index).orElse(0L);
        return client.put(key, value, current);
    }

    @Override
    public CompareExchangeResult delete(String key, long index) {
        return client.delete(key, index);
    }

    @Override
    public Optional<Item> get(String key) {
        return client.get(key);
    }
}
