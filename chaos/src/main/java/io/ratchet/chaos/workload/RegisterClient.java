package io.ratchet.chaos.workload;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import java.util.Optional;

/** The three operations the register workload sends: the client's own, unless a test swaps in a broken one. */
public interface RegisterClient {
    CompareExchangeResult put(String key, JsonNode value, long index);

    CompareExchangeResult delete(String key, long index);

    Optional<Item> get(String key);

    /** The real client, unchanged. */
    static RegisterClient of(RatchetClient client) {
        return new RegisterClient() {
            @Override
            public CompareExchangeResult put(String key, JsonNode value, long index) {
                return client.put(key, value, index);
            }

            @Override
            public CompareExchangeResult delete(String key, long index) {
                return client.delete(key, index);
            }

            @Override
            public Optional<Item> get(String key) {
                return client.get(key);
            }
        };
    }
}
