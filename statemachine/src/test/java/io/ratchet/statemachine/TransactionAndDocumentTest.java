package io.ratchet.statemachine;

import static io.ratchet.statemachine.CompareExchangeStoreTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TransactionAndDocumentTest {
    private final CompareExchangeStore store = new CompareExchangeStore();
    private long nextIndex = 1;

    private Result apply(Command command) {
        return store.applyEntry(entry(1_000, command), nextIndex++).get(0);
    }

    private Result.Txn txn(Command.Op... ops) {
        return (Result.Txn) apply(new Command.Transaction(List.of(ops)));
    }

    @Test
    void allWritesApplyAtOneIndex() {
        Result.Txn t = txn(new Command.Put("a", "1", 0, null), new Command.Put("b", "2", 0, null));
        assertTrue(t.successful());
        assertEquals(t.index(), store.get("a").index());
        assertEquals(t.index(), store.get("b").index());
    }

    @Test
    void oneStaleOpAmongTenChangesNothingAndEveryConflictIsListed() {
        List<Command.Op> ops = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            long index = ((Result.Write) apply(new Command.Put("k" + i, "0", 0, null))).index();
            ops.add(new Command.Put("k" + i, "1", i == 7 ? index - 1 : index, null));
        }
        List<Item> before = store.list("", 0, Integer.MAX_VALUE);
        Result.Txn t = (Result.Txn) apply(new Command.Transaction(ops));
        assertFalse(t.successful());
        assertEquals(1, t.conflicts().size());
        Result.Conflict c = t.conflicts().get(0);
        assertEquals("k7", c.key());
        assertEquals(c.actual() - 1, c.expected());
        assertEquals(before, store.list("", 0, Integer.MAX_VALUE), "nothing applied");
    }

    @Test
    void checkOnlyOpsConditionWithoutWriting() {
        long a = ((Result.Write) apply(new Command.Put("a", "1", 0, null))).index();
        assertTrue(txn(new Command.Check("a", a), new Command.Check("absent", 0), new Command.Put("b", "1", 0, null)).successful());
        assertEquals(a, store.get("a").index());
        Result.Txn refused = txn(new Command.Check("a", a + 100), new Command.Put("c", "1", 0, null));
        assertEquals(List.of(new Result.Conflict("a", a + 100, a)), refused.conflicts());
        assertNull(store.get("c"));
    }

    @Test
    void aDocumentIsWrittenWithItsGuardAtTheSameIndex() {
        Result.Txn created = txn(new Command.PutDocument("users/1", "{\"name\":\"Ada\"}", 0));
        assertTrue(created.successful());
        Document doc = store.document("USERS/1");
        assertEquals(new Document("users/1", "{\"name\":\"Ada\"}", created.index()), doc);
        Item guard = store.get("rvn-atomic/users/1");
        assertEquals(created.index(), guard.index());
        assertEquals("{\"Id\":\"users/1\"}", guard.value());

        assertFalse(txn(new Command.PutDocument("users/1", "{}", 0)).successful(), "a new document's guard is create-only");
        Result.Txn changed = txn(new Command.PutDocument("users/1", "{\"name\":\"Ada L.\"}", created.index()));
        assertTrue(changed.successful());
        assertEquals(changed.index(), store.get("rvn-atomic/users/1").index(), "the guard moves with every change");

        Result.Txn stale = txn(new Command.PutDocument("users/1", "{\"name\":\"lost\"}", created.index()));
        assertEquals(List.of(new Result.Conflict("rvn-atomic/users/1", created.index(), changed.index())), stale.conflicts());

        assertTrue(txn(new Command.DeleteDocument("users/1", changed.index())).successful());
        assertNull(store.document("users/1"));
        assertNull(store.get("rvn-atomic/users/1"), "a deleted document takes its guard with it");
    }

    @Test
    void plainWritesCannotTouchGuardsEvenInsideATransaction() {
        txn(new Command.PutDocument("users/1", "{}", 0));
        assertInstanceOf(Result.Rejected.class, apply(new Command.Transaction(List.of(
                new Command.Put("rvn-atomic/users/1", "{}", 1, null)))));
        assertInstanceOf(Result.Rejected.class, apply(new Command.Transaction(List.of(
                new Command.Put("a", "1", 0, null), new Command.Put("A", "2", 0, null)))), "a key twice");
        assertInstanceOf(Result.Rejected.class, apply(new Command.Transaction(List.of(
                new Command.PutDocument("users/2", "[1]", 0)))), "a document is a JSON object");
        assertInstanceOf(Result.Rejected.class, apply(new Command.Transaction(List.of())));
    }

    @Test
    void anIdempotentRequestAppliesOnceAndItsResendGetsTheFirstResult() {
        Request request = new Request("order-42", 60_000, List.of(new Command.Put("orders/42", "1", 0, null)));
        List<Result> first = store.applyEntry(Entry.untagged(1_000, List.of(request)), 1);
        List<Result> again = store.applyEntry(Entry.untagged(2_000, List.of(request)), 2);
        assertEquals(first, again, "the resend returns the first outcome, not a failed create-only");
        assertTrue(((Result.Write) again.get(0)).successful());
        assertEquals(1, store.get("orders/42").index());

        Request other = new Request("order-42", 60_000, List.of(new Command.Put("orders/43", "1", 0, null)));
        assertInstanceOf(Result.Rejected.class, store.applyEntry(Entry.untagged(3_000, List.of(other)), 3).get(0),
                "a key reused for a different request is refused, not answered with another request's result");
        assertNull(store.get("orders/43"));

        List<Result> afterRetention = store.applyEntry(Entry.untagged(61_001, List.of(request)), 4);
        assertFalse(((Result.Write) afterRetention.get(0)).successful(), "past the retention the key is forgotten");
    }
}
