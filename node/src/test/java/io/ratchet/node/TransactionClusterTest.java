package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.TransactionResult;
import io.ratchet.recipes.session.ClusterSession;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Cluster-wide transactions, their limits, and idempotency keys, against a real three-node cluster.
 * One cluster serves the whole class (each test writes its own keys), and is always stopped.
 */
class TransactionClusterTest extends SharedClusterTest {

    @Test
    void theStepsOfATransactionAcrossGroupsAreRefusedByAClusterOfOneGroupAndWriteNothing() {
        RatchetClient client = cluster.client();
        for (Command step : List.<Command>of(
                new Command.Prepare("t1", 0, List.of(0, 1), 5_000, true, List.of(new Command.Put("lonely", "1", 0, null))),
                new Command.Settle("t1", Command.Settle.Step.COMMIT), new Command.Fence(10_000))) {
            InvalidRequestException refused = assertThrows(InvalidRequestException.class,
                    () -> RatchetClient.await(client.submitAsync(Request.of(List.of(step)))), step.toString());
            assertTrue(refused.getMessage().contains("one group"), refused.getMessage());
        }
        assertTrue(client.get("lonely").isEmpty());
        assertTrue(client.put("lonely", 1, 0).successful(), "no key was held");
    }

    @Test
    void allOrNothingOneStaleOpAmongTenChangesNothingAndNamesTheConflict() {
        RatchetClient client = cluster.client();
        List<Command.Op> creates = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            creates.add(new Command.Put("inventory/sku-" + i, "0", 0, null));
        }
        TransactionResult created = client.transaction(creates);
        assertTrue(created.successful());
        List<Item> before = client.list("inventory/", 0, 100);
        assertEquals(10, before.size());
        before.forEach(item -> assertEquals(created.index(), item.index(), "every write of a transaction lands at one index"));

        long moved = client.put("inventory/sku-7", 5, created.index()).index();
        List<Item> afterMove = client.list("inventory/", 0, 100);
        List<Command.Op> restock = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            restock.add(new Command.Put("inventory/sku-" + i, "100", created.index(), null));
        }
        TransactionResult refused = client.transaction(restock);

        assertFalse(refused.successful());
        assertEquals(List.of(new Result.Conflict("inventory/sku-7", created.index(), moved)), refused.conflicts());
        assertEquals(afterMove, client.list("inventory/", 0, 100), "nothing applied, not even the nine good ops");
    }

    @Test
    void checkOnlyOpsConditionATransactionWithoutWritingTheirKey() {
        RatchetClient client = cluster.client();
        long open = client.put("shop/status", "open", 0).index();
        TransactionResult sold = client.transaction(List.of(
                new Command.Check("shop/status", open),
                new Command.Check("shop/banned/ada", 0),
                new Command.Put("orders/ada-1", "{\"sku\":3}", 0, null)));
        assertTrue(sold.successful());
        assertEquals(open, client.get("shop/status").orElseThrow().index(), "a check writes nothing");

        client.put("shop/status", "closed", open);
        TransactionResult refused = client.transaction(List.of(
                new Command.Check("shop/status", open),
                new Command.Put("orders/ada-2", "{\"sku\":3}", 0, null)));
        assertFalse(refused.successful());
        assertTrue(client.get("orders/ada-2").isEmpty());
    }

    @Test
    void transactionsBeyondTheSizeLimitsAreRefusedWithAClearMessageAndWriteNothing() {
        RatchetClient client = cluster.client();
        List<Command.Op> tooMany = new ArrayList<>();
        for (int i = 0; i <= Command.Transaction.MAX_OPS; i++) {
            tooMany.add(new Command.Put("bulk/" + i, "1", 0, null));
        }
        InvalidRequestException count = assertThrows(InvalidRequestException.class, () -> client.transaction(tooMany));
        assertTrue(count.getMessage().contains("1..1024 operations, not 1025"), count.getMessage());

        // Four values just under the 1 MiB value limit: each op is fine, together they pass the 3 MiB request limit.
        String big = "\"" + "x".repeat(Limits.MAX_VALUE_BYTES - 16) + "\"";
        List<Command.Op> tooBig = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            tooBig.add(new Command.Put("bulky/" + i, big, 0, null));
        }
        InvalidRequestException bytes = assertThrows(InvalidRequestException.class, () -> client.transaction(tooBig));
        assertTrue(bytes.getMessage().contains("the limit is " + Limits.MAX_REQUEST_BYTES), bytes.getMessage());

        assertEquals(List.of(), client.list("bulk", 0, 10), "nothing of either was written");
        assertTrue(client.put("bulky/after", 1, 0).successful(), "and the cluster goes on");
    }

    @Test
    void theSameKeyedTransactionSentTwiceOnTwoClientInstancesAppliesOnce() {
        RatchetClient first = cluster.client();
        RatchetClient second = cluster.client();
        List<Command.Op> checkout = List.of(
                new Command.Put("orders/42", "{\"total\":99}", 0, null),
                new Command.Put("stock-holds/42", "{\"sku\":7}", 0, null));

        TransactionResult applied = first.transaction(checkout, "checkout-42", Duration.ofMinutes(1));
        TransactionResult resent = second.transaction(checkout, "checkout-42", Duration.ofMinutes(1));

        assertTrue(applied.successful());
        assertEquals(applied, resent, "the resend from another connection gets the first outcome");
        assertEquals(applied.index(), first.get("orders/42").orElseThrow().index(), "applied once, at the first index");
        assertFalse(second.transaction(checkout).successful(), "without the key the same ops would be refused as a conflict");
    }

    @Test
    void theSameKeyedPutSentTwiceOnTwoClientInstancesAppliesOnce() {
        RatchetClient first = cluster.client();
        RatchetClient second = cluster.client();
        Command.Put pay = new Command.Put("payments/7", "{\"amount\":25}", 0, null);

        CompareExchangeResult applied = first.write(pay, "pay-7", Duration.ofMinutes(1));
        CompareExchangeResult resent = second.write(pay, "pay-7", Duration.ofMinutes(1));

        assertTrue(applied.successful());
        assertEquals(applied, resent);
        assertEquals(applied.index(), second.get("payments/7").orElseThrow().index());
    }

    @Test
    void aSaveResentWithItsKeyFromANewConnectionReturnsTheFirstOutcomeInsteadOfAConflict() {
        RatchetClient first = cluster.client();
        RatchetClient second = cluster.client();
        ClusterSession setup = ClusterSession.open(first);
        setup.store("carts/9", Map.of("items", List.of()));
        long created = setup.saveChanges();

        // The same unit of work on two connections, as when a process resends a save whose answer it lost.
        ClusterSession original = ClusterSession.open(first);
        ClusterSession resend = ClusterSession.open(second);
        for (ClusterSession session : List.of(original, resend)) {
            session.load("carts/9").orElseThrow();
            session.store("carts/9", Map.of("items", List.of("sku-1")));
        }
        long saved = original.saveChanges("cart-9-add-sku-1", Duration.ofMinutes(1));
        long again = resend.saveChanges("cart-9-add-sku-1", Duration.ofMinutes(1));

        assertTrue(saved > created);
        assertEquals(saved, again);
        Document cart = first.getDocument("carts/9").orElseThrow();
        assertEquals(saved, cart.index());
        assertEquals("{\"items\":[\"sku-1\"]}", cart.json(), "sku-1 was added once");
    }
}
