package io.ratchet.statemachine;

import static io.ratchet.statemachine.CompareExchangeStoreTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What lets a leader refuse a write without a log entry: the index below which a contended key's
 * conditions can never hold again, and the results apply would give, judged against a read of the keys
 * and the batch's session and idempotency keys.
 */
class RefusalBeforeLogTest {
    private static final long SESSION = 0x5eed_4242L;

    private final CompareExchangeStore store = new CompareExchangeStore();
    private final KeyContention contention = new KeyContention(0);
    private long nextIndex = 1;

    RefusalBeforeLogTest() {
        store.countContentionIn(contention);
    }

    private Result apply(Command command) {
        return store.applyEntry(entry(1_000, command), nextIndex++).get(0);
    }

    private List<Result> apply(Batch batch) {
        return store.applyEntry(new Entry(1_000, List.of(batch)), nextIndex++);
    }

    private static Batch untagged(Command... commands) {
        return Batch.untagged(List.of(Request.of(List.of(commands))));
    }

    private long replacedBelow(String key) {
        return contention.replacedBelow(key);
    }

    /** What the leader's read of each write's key finds now. */
    private List<Result> found(List<Command.Op> writes) {
        return writes.stream().<Result>map(w -> new Result.Found(store.get(w.key()))).toList();
    }

    /** counter created at 1, replaced at 2, a loser refused at 3 (tracked from here), replaced at 4. */
    private void contendedCounter() {
        apply(new Command.Put("counter", "0", 0, null));
        apply(new Command.Put("counter", "1", 1, null));
        assertTrue(apply(new Command.Put("counter", "1", 1, null)) instanceof Result.Write w && !w.successful());
        apply(new Command.Put("counter", "2", 2, null));
    }

    @Test
    void aContendedKeysLatestWriteIsTheIndexBelowWhichNoConditionHoldsAgain() {
        contendedCounter();
        assertEquals(4, replacedBelow("counter"));
        apply(new Command.Delete("counter", 4));
        assertEquals(5, replacedBelow("counter"), "a delete replaces the index too");
        apply(new Command.Put("COUNTER", "0", 0, null));
        assertEquals(6, replacedBelow("counter"), "by the key's normal form");

        assertTrue(apply(new Command.Transaction(List.of(new Command.Check("counter", 6), new Command.Put("other", "1", 0, null))))
                instanceof Result.Txn t && t.successful());
        assertEquals(6, replacedBelow("counter"), "a check in a transaction that landed wrote nothing: 6 is still its index");
        apply(new Command.Transaction(List.of(new Command.Put("counter", "1", 6, null))));
        assertEquals(8, replacedBelow("counter"), "a transaction's put");

        apply(new Command.Put("quiet", "0", 0, null));
        apply(new Command.Put("quiet", "1", 9, null));
        assertEquals(0, replacedBelow("quiet"), "a key never refused is not followed");
    }

    @Test
    void onlyBatchesOfSingleConditionalWritesQualify() {
        Command.Put put = new Command.Put("a", "1", 3, null);
        Command.Delete delete = new Command.Delete("b", 2);
        assertEquals(List.of(put, delete), CompareExchangeStore.conditionalWrites(new Batch(0, 0,
                List.of(Request.of(List.of(put)), new Request("key-1", 60_000, List.of(delete))))));
        assertEquals(List.of(), CompareExchangeStore.conditionalWrites(untagged(new Command.Put("a", "1", 0, null))),
                "a create names no index to be replaced");
        assertEquals(List.of(), CompareExchangeStore.conditionalWrites(untagged(put, delete)), "a request of two commands");
        assertEquals(List.of(), CompareExchangeStore.conditionalWrites(untagged(new Command.Transaction(List.of(put)))));
        assertEquals(List.of(), CompareExchangeStore.conditionalWrites(untagged(new Command.Add("a", 1))));
    }

    @Test
    void aWriteNamingAReplacedIndexGetsWhatApplyWouldGiveAndNothingIsWritten() {
        contendedCounter();
        Batch stale = untagged(new Command.Put("counter", "9", 2, null));
        List<Command.Op> writes = CompareExchangeStore.conditionalWrites(stale);
        long before = store.lastEntryIndex();

        List<Result> early = store.refusalsBeforeLog(stale, writes, found(writes));

        assertEquals(before, store.lastEntryIndex());
        assertEquals(apply(stale), early, "the same refusal, carrying the item at 4");
        assertEquals(new KeyContention.Counts("counter", 4, 1, 3), contention.hottest(1).get(0),
                "counted as an attempt refused (the one here, then the one apply gave)");
    }

    @Test
    void aConditionThatHoldsWhereTheReadFoundItGoesToTheLog() {
        contendedCounter();
        Batch current = untagged(new Command.Put("counter", "3", 4, null));
        List<Command.Op> writes = CompareExchangeStore.conditionalWrites(current);
        assertNull(store.refusalsBeforeLog(current, writes, found(writes)));
    }

    @Test
    void aKeyHeldByATransactionIsAnsweredAsApplyAnswersIt() {
        contendedCounter();
        Batch stale = untagged(new Command.Put("counter", "9", 2, null));
        Result.Locked locked = new Result.Locked("counter", "txn-1");
        assertEquals(List.of(locked), store.refusalsBeforeLog(stale, CompareExchangeStore.conditionalWrites(stale), List.of(locked)));
    }

    @Test
    void aResendOfAMessageItsSessionAnsweredGoesToTheLogForThatAnswer() {
        contendedCounter();
        apply(new Command.OpenSession(SESSION, 60_000));
        Batch won = new Batch(SESSION, 1, List.of(Request.of(List.of(new Command.Put("counter", "3", 4, null)))));
        assertTrue(((Result.Write) apply(won).get(0)).successful(), "landed; its answer was lost");
        List<Command.Op> writes = CompareExchangeStore.conditionalWrites(won);
        assertTrue(replacedBelow("counter") > 4, "its own write replaced the index it names");

        assertNull(store.refusalsBeforeLog(won, writes, found(writes)), "the resend must get its success back, from the log");
        Batch next = new Batch(SESSION, 2, won.requests());
        assertEquals(1, store.refusalsBeforeLog(next, writes, found(writes)).size(), "a new message is refused early");
        Batch gone = new Batch(SESSION + 1, 1, won.requests());
        assertNull(store.refusalsBeforeLog(gone, writes, found(writes)), "a session apply does not know: the log says so");
    }

    @Test
    void aRememberedIdempotencyKeyGoesToTheLogForItsResults() {
        contendedCounter();
        Batch won = new Batch(0, 0, List.of(new Request("save-1", 60_000, List.of(new Command.Put("counter", "3", 4, null)))));
        assertTrue(((Result.Write) apply(won).get(0)).successful());
        List<Command.Op> writes = CompareExchangeStore.conditionalWrites(won);
        assertNull(store.refusalsBeforeLog(won, writes, found(writes)));
        Batch other = new Batch(0, 0, List.of(new Request("save-2", 60_000, won.requests().get(0).commands())));
        assertEquals(1, store.refusalsBeforeLog(other, writes, found(writes)).size(), "a key never used: judged here");
    }
}
