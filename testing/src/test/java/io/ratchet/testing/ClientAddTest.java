package io.ratchet.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.AddOverflowException;
import io.ratchet.client.AddResult;
import io.ratchet.client.ErrorCode;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.NotAnIntegerException;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** The client's add against the in-process cluster: the real store, the wire codec, the client's session. */
@ExtendWith(InProcessClusterExtension.class)
@Timeout(20)
class ClientAddTest {
    @Test
    void aHotCounterTakesConcurrentAddsWithoutARetryLoop(InProcessCluster cluster) {
        RatchetClient client = cluster.client();
        List<CompletableFuture<AddResult>> adds = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            adds.add(client.addAsync("counters/hot", 2));
        }
        List<Long> values = adds.stream().map(a -> a.join().value()).sorted().toList();
        assertEquals(2, values.get(0));
        assertEquals(100, values.get(values.size() - 1), "every add counted, each saw a distinct sum");
        assertEquals(50, values.stream().distinct().count());
        Item item = cluster.item("counters/hot").orElseThrow();
        assertEquals("100", item.value());
        assertEquals(item.index(), adds.stream().mapToLong(a -> a.join().index()).max().orElseThrow(),
                "the last add's index is the item's");
    }

    @Test
    void anAddResentUnderItsIdempotencyKeyByAnotherClientCountsOnce(InProcessCluster cluster) {
        AddResult first = cluster.client().add("counters/orders", 7, "order-42", Duration.ofMinutes(1));
        cluster.dropAnswers(1); // the first answer of the next call is lost: the client resends it in its session
        AddResult again = cluster.client().add("counters/orders", 7, "order-42", Duration.ofMinutes(1));
        assertEquals(first, again);
        assertEquals(new AddResult("counters/orders", 7, first.index()), again);
        assertEquals("7", cluster.item("counters/orders").orElseThrow().value());
        assertThrows(InvalidRequestException.class, () -> cluster.client().add("k", 1, "no-retention", null));
    }

    @Test
    void aValueThatIsNoIntegerOrASumPastTheRangeIsAnErrorThatWroteNothing(InProcessCluster cluster) {
        RatchetClient client = cluster.client();
        long index = cluster.putItem("profile", "{\"visits\":3}");
        NotAnIntegerException notOne = assertThrows(NotAnIntegerException.class, () -> client.add("profile", 1));
        assertEquals("profile", notOne.key());
        assertEquals(index, notOne.item().index());
        assertTrue(notOne.getMessage().contains("{\"visits\":3}"), notOne.getMessage());
        assertEquals(ErrorCode.NOT_AN_INTEGER, notOne.code());
        assertTrue(notOne.code().didNotApply() && !notOne.code().retrySafe());

        client.add("big", Long.MAX_VALUE);
        AddOverflowException past = assertThrows(AddOverflowException.class, () -> client.add("big", 1));
        assertEquals(1, past.delta());
        assertEquals(ErrorCode.OVERFLOW, past.code());
        assertEquals(String.valueOf(Long.MAX_VALUE), cluster.item("big").orElseThrow().value());
        assertEquals(index, cluster.item("profile").orElseThrow().index(), "nothing written");
    }
}
