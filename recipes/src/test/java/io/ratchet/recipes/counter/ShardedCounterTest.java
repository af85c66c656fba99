package io.ratchet.recipes.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.AddResult;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.NotAnIntegerException;
import io.ratchet.protocol.Item;
import io.ratchet.recipes.OnInProcessCluster;
import io.ratchet.testing.InProcessCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The sharded counter against {@link InProcessCluster}: adds that never conflict, a sum of every shard. */
@Timeout(20)
class ShardedCounterTest extends OnInProcessCluster {
    @Test
    void aHundredConcurrentAddsSpreadOverTheShardsAndSumExactlyWithNoRetry() {
        ShardedCounter views = new ShardedCounter(client, "counters/views", 8);
        assertEquals(0, views.sum(), "absent shards count 0");
        List<CompletableFuture<AddResult>> adds = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            adds.add(views.addAsync(3));
        }
        Set<String> touched = new HashSet<>();
        adds.forEach(a -> touched.add(a.join().key()));
        assertEquals(300, views.sum());
        assertTrue(touched.size() > 1, "the adds went to several shards: " + touched);
        assertTrue(views.keys().containsAll(touched));
        assertEquals(100, cluster.writeCalls().stream().filter(call -> !call.opensSession())
                .mapToInt(call -> call.requests().size()).sum(), "one request an add: nothing was refused and sent again");
    }

    @Test
    void theShardsAreItemsNamedAfterTheCounter() {
        ShardedCounter c = new ShardedCounter(client, "counters/likes", 3);
        assertEquals(List.of("counters/likes/0", "counters/likes/1", "counters/likes/2"), c.keys());
        AddResult r = c.add(-4);
        assertEquals(-4, r.value());
        assertEquals(String.valueOf(-4), cluster.item(r.key()).map(Item::value).orElseThrow());
        assertEquals(-4, c.sum());
    }

    @Test
    void anAddWithAnIdempotencyKeySentTwiceCountsOnceOnTheShardTheKeyPicks() {
        ShardedCounter orders = new ShardedCounter(client, "counters/orders", 16);
        AddResult first = orders.add(5, "order-7", Duration.ofMinutes(5));
        AddResult again = new ShardedCounter(cluster.client(), "counters/orders", 16).add(5, "order-7", Duration.ofMinutes(5));
        assertEquals(first, again, "another process sending it again meets the first outcome");
        assertEquals(5, orders.sum());
    }

    @Test
    void aShardAnotherWriterFilledWithTextIsNamedWhenSummed() {
        ShardedCounter c = new ShardedCounter(client, "counters/broken", 2);
        cluster.putItem("counters/broken/1", "\"five\"");
        NotAnIntegerException e = assertThrows(NotAnIntegerException.class, c::sum);
        assertEquals("counters/broken/1", e.key());
        assertTrue(e.getMessage().contains("\"five\""), e.getMessage());
    }

    @Test
    void aCounterHasOneTo1024ShardsOfWritableKeys() {
        assertThrows(InvalidRequestException.class, () -> new ShardedCounter(client, "c", 0));
        assertThrows(InvalidRequestException.class, () -> new ShardedCounter(client, "c", ShardedCounter.MAX_SHARDS + 1));
        assertThrows(InvalidRequestException.class, () -> new ShardedCounter(client, "rvn-atomic/c", 2));
    }
}
