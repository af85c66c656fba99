package io.ratchet.statemachine;

import static io.ratchet.statemachine.CompareExchangeStoreTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The store tells which keys the entry it last applied changed: what watches are checked against. */
class ChangedKeysTest {
    private static final long T0 = 1_700_000_000_000L;
    private final CompareExchangeStore store = new CompareExchangeStore();
    private long nextIndex = 1;

    private List<Result> applied(long stamp, Command... commands) {
        return store.applyEntry(entry(stamp, commands), nextIndex++);
    }

    private Result one(Command command) {
        return applied(T0, command).get(0);
    }

    private long put(String key) {
        Result.Write w = (Result.Write) one(new Command.Put(key, "1", 0, null));
        assertTrue(w.successful());
        return w.index();
    }

    private static Command.Transaction txn(Command.Op... ops) {
        return new Command.Transaction(List.of(ops));
    }

    @Test
    void aPutReportsItsKeyNormalized() {
        put("Users/ADA");
        assertEquals(List.of("users/ada"), store.changedKeys());
        long index = store.get("users/ada").index();
        assertTrue(((Result.Write) one(new Command.Put("USERS/Ada", "2", index, null))).successful());
        assertEquals(List.of("users/ada"), store.changedKeys(), "an update in another spelling: the same key");
    }

    @Test
    void aPutRefusedByItsConditionReportsNothingAndForgetsThePreviousEntry() {
        long index = put("k");
        assertEquals(List.of("k"), store.changedKeys());
        assertFalse(((Result.Write) one(new Command.Put("k", "2", 0, null))).successful(), "create-only on a present key");
        assertEquals(List.of(), store.changedKeys());
        assertFalse(((Result.Write) one(new Command.Put("k", "2", index + 100, null))).successful(), "a stale index");
        assertEquals(List.of(), store.changedKeys());
        assertFalse(((Result.Write) one(new Command.Put("absent", "2", 5, null))).successful());
        assertEquals(List.of(), store.changedKeys());
        assertInstanceOf(Result.Rejected.class, one(new Command.Put("", "2", 0, null)), "an invalid command");
        assertEquals(List.of(), store.changedKeys());
    }

    @Test
    void aDeleteReportsItsKeyAndARefusedOneNothing() {
        long index = put("k");
        assertFalse(((Result.Write) one(new Command.Delete("k", index + 1))).successful());
        assertEquals(List.of(), store.changedKeys());
        assertTrue(((Result.Write) one(new Command.Delete("K", index))).successful());
        assertEquals(List.of("k"), store.changedKeys());
    }

    @Test
    void aCheckChangesNothing() {
        long index = put("k");
        assertTrue(((Result.Txn) one(txn(new Command.Check("k", index)))).successful());
        assertEquals(List.of(), store.changedKeys());
    }

    @Test
    void aTransactionReportsTheKeysItWroteButNotThoseItChecked() {
        long a = put("a");
        long b = put("b");
        long c = put("c");
        Result.Txn t = (Result.Txn) one(txn(new Command.Put("a", "2", a, null), new Command.Delete("b", b),
                new Command.Check("c", c), new Command.Put("d", "1", 0, null)));
        assertTrue(t.successful());
        assertEquals(List.of("a", "b", "d"), store.changedKeys());
    }

    @Test
    void aTransactionRefusedByOneConditionReportsNothing() {
        long a = put("a");
        Result.Txn t = (Result.Txn) one(txn(new Command.Put("a", "2", a, null), new Command.Put("b", "1", 5, null)));
        assertFalse(t.successful());
        assertEquals(List.of(), store.changedKeys());
        assertEquals(a, store.get("a").index(), "and wrote nothing");
    }

    @Test
    void aDocumentWriteReportsItsGuardItemAlongsideTheOtherWrites() {
        String guard = Keys.normalize(Document.guardKey("Users/1"));
        Result.Txn created = (Result.Txn) one(txn(new Command.PutDocument("Users/1", "{\"name\":\"Ada\"}", 0),
                new Command.Put("emails/ada", "\"users/1\"", 0, null)));
        assertTrue(created.successful());
        assertEquals(List.of(guard, "emails/ada"), store.changedKeys());

        Result.Txn stale = (Result.Txn) one(txn(new Command.PutDocument("users/1", "{}", created.index() + 1)));
        assertFalse(stale.successful());
        assertEquals(List.of(), store.changedKeys(), "a document write refused by its guard changes nothing");

        assertTrue(((Result.Txn) one(txn(new Command.DeleteDocument("users/1", created.index())))).successful());
        assertEquals(List.of(guard), store.changedKeys());
    }

    @Test
    void aSweepReportsExactlyTheItemsItRemoved() {
        Result.Write a = (Result.Write) applied(T0, new Command.Put("leases/a", "1", 0, null, 1_000, true)).get(0);
        Result.Write b = (Result.Write) applied(T0, new Command.Put("leases/b", "1", 0, null, 1_000, true)).get(0);
        Result.Write c = (Result.Write) applied(T0, new Command.Put("leases/c", "1", 0, null, 60_000, true)).get(0);
        Result.Write d = (Result.Write) applied(T0, new Command.Put("leases/d", "1", 0, null, 1_000, true)).get(0);
        Result.Write renewed = (Result.Write) applied(T0 + 500, new Command.Put("leases/d", "2", d.index(), null, 1_000, false)).get(0);
        assertTrue(renewed.successful());
        Result.Swept swept = (Result.Swept) applied(T0 + 1_200, new Command.Sweep(List.of(
                new Command.KeyIndex("leases/a", a.index()),
                new Command.KeyIndex("leases/b", b.index()),
                new Command.KeyIndex("leases/c", c.index()),   // not expired
                new Command.KeyIndex("leases/d", d.index()),   // renewed since: a stale candidate
                new Command.KeyIndex("leases/e", 3)))).get(0); // absent
        assertEquals(2, swept.removed());
        assertEquals(List.of("leases/a", "leases/b"), store.changedKeys());
    }

    @Test
    void anExpiredHolderReplacedReportsItsKeyAndLapsingAloneReportsNothing() {
        applied(T0, new Command.Put("locks/p", "\"alice\"", 0, null, 1_000, true));
        applied(T0 + 5_000, new Command.Put("other", "1", 0, null));
        assertEquals(List.of("other"), store.changedKeys(), "the lease lapsed, but no entry removed it");
        assertTrue(((Result.Write) applied(T0 + 5_000, new Command.Put("locks/p", "\"bob\"", 0, null, 1_000, true)).get(0)).successful());
        assertEquals(List.of("locks/p"), store.changedKeys());
    }

    @Test
    void everyBatchAndRequestOfAnEntryCounts() {
        Entry entry = Entry.untagged(T0, List.of(
                Request.of(List.of(new Command.Put("a", "1", 0, null), new Command.Put("b", "1", 0, null))),
                Request.of(List.of(new Command.Put("a", "2", 0, null))),     // refused: a exists now
                Request.of(List.of(new Command.Put("c", "1", 0, null)))));
        store.applyEntry(entry, nextIndex++);
        assertEquals(List.of("a", "b", "c"), store.changedKeys());
    }

    @Test
    void anIdempotentRequestAnsweredFromMemoryChangesNothing() {
        Request request = new Request("once", 60_000, List.of(new Command.Put("k", "1", 0, null)));
        store.applyEntry(Entry.untagged(T0, List.of(request)), nextIndex++);
        assertEquals(List.of("k"), store.changedKeys());
        store.applyEntry(Entry.untagged(T0, List.of(request)), nextIndex++);
        assertEquals(List.of(), store.changedKeys());
    }

    @Test
    void forgettingATombstoneReportsItsKeyAndRaisesTheWatermark() {
        List<Request> creates = new ArrayList<>();
        for (int i = 0; i <= CompareExchangeStore.MAX_TOMBSTONES; i++) {
            creates.add(Request.of(List.of(new Command.Put("k" + i, "1", 0, null))));
        }
        long created = nextIndex++;
        store.applyEntry(Entry.untagged(T0, creates), created);
        assertEquals(CompareExchangeStore.MAX_TOMBSTONES + 1, store.changedKeys().size());
        long firstDelete = nextIndex;
        for (int i = 0; i < CompareExchangeStore.MAX_TOMBSTONES; i++) {
            one(new Command.Delete("k" + i, created));
        }
        assertEquals(List.of("k" + (CompareExchangeStore.MAX_TOMBSTONES - 1)), store.changedKeys());
        assertEquals(0, store.tombstoneWatermark());
        assertEquals(0, store.watermarkBefore());

        one(new Command.Delete("k" + CompareExchangeStore.MAX_TOMBSTONES, created));
        assertEquals(List.of("k" + CompareExchangeStore.MAX_TOMBSTONES, "k0"), store.changedKeys(),
                "the deleted key, and the oldest tombstone's, forgotten to make room");
        assertEquals(0, store.watermarkBefore());
        assertEquals(firstDelete, store.tombstoneWatermark());

        put("fresh");
        assertEquals(firstDelete, store.watermarkBefore(), "an entry that forgets nothing leaves the watermark");
        assertEquals(firstDelete, store.tombstoneWatermark());
    }

    @Test
    void aLoneCommandReportsItsOwnChangesOnly() {
        put("a");
        Result.Write w = (Result.Write) store.apply(new Command.Put("b", "1", 0, null), nextIndex++, T0);
        assertTrue(w.successful());
        assertEquals(List.of("b"), store.changedKeys());
    }

    @Test
    void aRestoredStoreHasChangedNothingYet() {
        CompareExchangeStore restored = CompareExchangeStore.restore(T0, 9,
                List.of(CompareExchangeStoreTest.item("a", "1", 3)), List.of(), Map.of("b", 5L), 2, Map.of(), List.of());
        assertEquals(List.of(), restored.changedKeys());
        assertEquals(2, restored.watermarkBefore());
    }

    @Test
    void theReportIsReadOnly() {
        put("a");
        assertThrows(UnsupportedOperationException.class, () -> store.changedKeys().add("b"));
    }
}
