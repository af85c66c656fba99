package io.ratchet.statemachine;

import static io.ratchet.statemachine.CompareExchangeStoreTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Command.Settle.Step;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Result;
import io.ratchet.protocol.Result.TxnState.Record;
import io.ratchet.statemachine.kv.MemoryKeyValueStore;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * One group's part of a transaction across groups: prepares hold keys, settles decide and apply at the
 * prepare's index, held keys refuse writes and hold reads, and recovery is told what is due.
 */
class CrossGroupTransactionTest {
    private final MemoryKeyValueStore kv = new MemoryKeyValueStore();
    private CompareExchangeStore store = new CompareExchangeStore(kv);
    private long nextIndex = 1;
    private long time = 1_000;

    private Result apply(Command command) {
        return store.applyEntry(entry(time, command), nextIndex++).get(0);
    }

    private static Command.Prepare prepare(String txn, boolean primary, Command.Op... ops) {
        return new Command.Prepare(txn, primary ? 0 : 1, List.of(0, 1), 5_000, primary, List.of(ops));
    }

    private long put(String key, String value) {
        return ((Result.Write) apply(new Command.Put(key, value, 0, null))).index();
    }

    @Test
    void aCommittedPrepareWritesAtItsOwnIndexAndLeavesNothingBehind() {
        long a = put("a", "1");
        Result.TxnState prepared = (Result.TxnState) apply(prepare("t1", true,
                new Command.Put("a", "2", a, null), new Command.Put("b", "\"new\"", 0, null), new Command.Check("c", 0)));
        assertEquals(new Result.TxnState("t1", Record.PENDING, 3, prepared.index()), prepared);
        assertEquals("1", store.get("a").value(), "nothing written before the decision");
        put("other", "1"); // later entries do not move the writes' index

        Result.TxnState committed = (Result.TxnState) apply(new Command.Settle("t1", Step.COMMIT));
        assertEquals(new Result.TxnState("t1", Record.COMMITTED, 0, 0), committed);
        assertEquals("2", store.get("a").value());
        assertEquals(prepared.index(), store.get("a").index());
        assertEquals(prepared.index(), store.get("b").index());
        assertEquals(a, store.get("a").createdIndex());
        assertNull(store.get("c"), "a check writes nothing");
        assertTrue(store.changedKeys().containsAll(List.of("a", "b")), "watches see the settle");

        assertEquals(Record.COMMITTED, ((Result.TxnState) apply(new Command.Settle("t1", Step.ABORT))).record(),
                "a decided record stays decided");
        assertEquals("2", store.get("a").value());
        apply(new Command.Settle("t1", Step.FORGET));
        assertEquals(new Result.TxnState("t1", Record.NONE, 0, 0), store.txnStates(List.of("t1")).get(0));
    }

    @Test
    void aFailedConditionHoldsNothingAndAnAbortDropsTheIntents() {
        long a = put("a", "1");
        Result.Txn refused = (Result.Txn) apply(prepare("t1", true, new Command.Put("a", "2", a + 1, null)));
        assertEquals(List.of(new Result.Conflict("a", a + 1, a)), refused.conflicts());
        assertNull(store.lockOn("a"));
        assertEquals(Record.NONE, ((Result.TxnState) store.txnStates(List.of("t1")).get(0)).record());

        apply(prepare("t2", false, new Command.Delete("a", a)));
        assertEquals(new Result.Locked("a", "t2"), store.lockOn("a"));
        Result.TxnState aborted = (Result.TxnState) apply(new Command.Settle("t2", Step.ABORT));
        assertEquals(new Result.TxnState("t2", Record.NONE, 0, 0), aborted);
        assertEquals("1", store.get("a").value());
        assertEquals(a, store.get("a").index());
    }

    @Test
    void aHeldKeyRefusesOtherWritesWholeAndOtherPreparesButNotItsOwnResend() {
        long a = put("a", "1");
        Result.TxnState first = (Result.TxnState) apply(prepare("t1", false, new Command.Put("a", "2", a, null)));
        Result locked = apply(new Command.Put("a", "3", a, null));
        assertEquals(new Result.Locked("a", "t1"), locked);
        assertEquals(new Result.Locked("A", "t1"), apply(new Command.Transaction(List.of(
                new Command.Put("free", "1", 0, null), new Command.Check("A", a)))));
        assertNull(store.get("free"), "a request with a held key applies nothing");
        assertEquals(new Result.Locked("a", "t1"), apply(prepare("t9", false, new Command.Put("a", "9", a, null))));
        assertEquals(first, apply(prepare("t1", false, new Command.Put("a", "2", a, null))), "a resent prepare answers as the first");
        apply(new Command.Settle("t1", Step.COMMIT));
        assertEquals("2", store.get("a").value());
        assertTrue(((Result.Write) apply(new Command.Put("a", "3", first.index(), null))).successful(),
                "the committed index is the condition of the next write");
    }

    @Test
    void readsOfHeldKeysWaitAndListingsUnderThemToo() {
        put("users/1", "1");
        assertFalse(store.held(new Query.Get("users/1")));
        apply(prepare("t1", false, new Command.Put("users/2", "2", 0, null), new Command.PutDocument("doc", "{}", 0)));
        assertTrue(store.held(new Query.Get("USERS/2")));
        assertTrue(store.held(new Query.GetAll(List.of("users/1", "users/2"))));
        assertTrue(store.held(new Query.ListItems("users/", 0, 10)));
        assertTrue(store.held(new Query.GetDocument("doc")));
        assertTrue(store.held(new Query.Watch("users/2", 0, 1_000)));
        assertFalse(store.held(new Query.Gets(List.of(new Query.Get("users/2")))), "a batch waits for nobody");
        assertEquals(new Result.Locked("USERS/2", "t1"), store.lockOn("USERS/2"), "its held get is answered locked");
        assertNull(store.lockOn("users/1"));
        assertFalse(store.held(new Query.Get("users/1")));
        assertFalse(store.held(new Query.ListItems("orders/", 0, 10)));
        assertFalse(store.held(new Query.Stats()));
        apply(new Command.Settle("t1", Step.COMMIT));
        assertFalse(store.held(new Query.ListItems("users/", 0, 10)));
        assertEquals(new Document("doc", "{}", store.get(Document.guardKey("doc")).index()), store.document("doc"));
    }

    @Test
    void aPendingRecordExpiresOnlyOnceItsLeaseRanOutInClusterTime() {
        apply(prepare("t1", true, new Command.Put("a", "1", 0, null)));
        assertEquals(List.of(), store.transactionWork(time + 4_999, 1_000, 5_000));
        assertEquals(List.of(new TxnWork("t1", TxnWork.Kind.EXPIRE, -1, List.of(0, 1))),
                store.transactionWork(time + 5_000, 1_000, 5_000));
        assertEquals(Record.PENDING, ((Result.TxnState) apply(new Command.Settle("t1", Step.EXPIRE))).record(),
                "the leader's clock proposes; cluster time decides");
        time += 5_000;
        Result.TxnState expired = (Result.TxnState) apply(new Command.Settle("t1", Step.EXPIRE));
        assertEquals(new Result.TxnState("t1", Record.ABORTED, 0, 0), expired);
        assertNull(store.get("a"));
        assertEquals(Record.ABORTED, ((Result.TxnState) apply(new Command.Settle("t1", Step.COMMIT))).record(),
                "a commit after the abort finds it aborted");
        assertNull(store.get("a"));
        assertEquals(Record.ABORTED, ((Result.TxnState) apply(prepare("t1", true, new Command.Put("a", "1", 0, null)))).record(),
                "a late prepare of a decided transaction holds nothing");
        assertNull(store.lockOn("a"));
        assertEquals(List.of(new TxnWork("t1", TxnWork.Kind.FORGET, -1, List.of(0, 1))),
                store.transactionWork(time + 5_000, 1_000, 5_000));
    }

    @Test
    void anIntentWithoutItsRecordHereAsksThePrimaryOnceItIsOld() {
        apply(prepare("t1", false, new Command.Put("a", "1", 0, null), new Command.Put("b", "1", 0, null)));
        assertEquals(List.of(), store.transactionWork(time + 999, 1_000, 5_000));
        assertEquals(List.of(new TxnWork("t1", TxnWork.Kind.ASK_PRIMARY, 1, List.of())),
                store.transactionWork(time + 1_000, 1_000, 5_000), "once per transaction, not per key");
    }

    @Test
    void intentsAndRecordsSurviveAReopenOfTheStore() {
        long a = put("a", "1");
        Result.TxnState prepared = (Result.TxnState) apply(prepare("t1", true, new Command.Put("a", "2", a, null)));
        store = new CompareExchangeStore(kv);
        assertEquals(new Result.Locked("a", "t1"), apply(new Command.Put("a", "3", a, null)));
        assertEquals(new Result.TxnState("t1", Record.PENDING, 1, 0), store.txnStates(List.of("t1")).get(0));
        apply(new Command.Settle("t1", Step.COMMIT));
        store = new CompareExchangeStore(kv);
        assertEquals(prepared.index(), store.get("a").index());
        assertNull(store.lockOn("a"));
        assertEquals(Record.COMMITTED, ((Result.TxnState) store.txnStates(List.of("t1")).get(0)).record());
    }

    @Test
    void aSweepPassesOverAHeldItem() {
        long lease = ((Result.Write) apply(new Command.Put("lock", "1", 0, null, 100, false))).index();
        apply(prepare("t1", false, new Command.Delete("lock", lease)));
        time += 1_000;
        Result.Swept swept = (Result.Swept) apply(new Command.Sweep(List.of(new Command.KeyIndex("lock", lease))));
        assertEquals(0, swept.removed());
        assertInstanceOf(Result.TxnState.class, apply(new Command.Settle("t1", Step.COMMIT)));
        assertNull(store.get("lock"));
    }

    @Test
    void aFenceHoldsDecisionsToCommitAndForgetsButNotAbortsUntilItLapsesOrIsLifted() {
        apply(prepare("t1", true, new Command.Put("a", "1", 0, null)));
        apply(prepare("t2", true, new Command.Put("b", "1", 0, null)));
        assertEquals(new Result.Fenced(time + 60_000), apply(new Command.Fence(60_000)));
        assertEquals(new Result.Fenced(time + 60_000), apply(new Command.Settle("t1", Step.COMMIT)));
        assertEquals(Record.PENDING, ((Result.TxnState) store.txnStates(List.of("t1")).get(0)).record());
        assertNull(store.get("a"), "held: nothing committed");
        assertEquals(Record.ABORTED, ((Result.TxnState) apply(new Command.Settle("t2", Step.ABORT))).record(), "aborts go ahead");
        assertEquals(new Result.Fenced(time + 60_000), apply(new Command.Settle("t2", Step.FORGET)));

        store = new CompareExchangeStore(kv);
        assertEquals(new Result.Fenced(time + 60_000), apply(new Command.Settle("t1", Step.COMMIT)), "the fence is state");
        time += 60_000;
        assertEquals(Record.COMMITTED, ((Result.TxnState) apply(new Command.Settle("t1", Step.COMMIT))).record(), "lapsed");
        apply(new Command.Fence(10_000));
        assertEquals(new Result.Fenced(0), apply(new Command.Fence(0)));
        assertEquals(Record.NONE, ((Result.TxnState) apply(new Command.Settle("t2", Step.FORGET))).record(), "lifted");
    }
}
