package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Where a client's answers are handled, over gRPC: on its network threads, which wake a blocking caller
 * directly, while the futures of the asynchronous forms complete on a thread of the client's own.
 */
class ClientThreadsClusterTest extends SharedClusterTest {

    @Test
    void aContinuationThatBlocksOnAnotherCallOfTheSameClientDoesNotDeadlock() throws Exception {
        try (RatchetClient client = cluster.client()) {
            // The second put's answer arrives on the connection the first one's did: were the continuation
            // run on that network thread, it would wait for an answer only that thread can read.
            CompareExchangeResult second = client.putAsync("threads/first", 1, 0)
                    .thenApply(first -> client.put("threads/second", first.index(), 0))
                    .get(30, TimeUnit.SECONDS);
            assertTrue(second.successful());
            assertEquals(client.get("threads/first").orElseThrow().index(), Long.parseLong(second.item().value()));
        }
    }

    @Test
    void asynchronousFormsCompleteOffTheNetworkThreads() throws Exception {
        try (RatchetClient client = cluster.client()) {
            client.put("threads/warm", 0, 0);
            String thread = client.getAsync("threads/warm").thenApply(item -> Thread.currentThread().getName())
                    .get(30, TimeUnit.SECONDS);
            assertFalse(thread.startsWith("ratchet-client-network"), thread);
        }
    }
}
