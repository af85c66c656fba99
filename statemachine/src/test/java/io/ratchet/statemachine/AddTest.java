package io.ratchet.statemachine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The commutative add as the store applies it: no condition, integers only, nothing written when refused. */
class AddTest {
    private static final long T0 = 1_700_000_000_000L;
    private final CompareExchangeStore store = new CompareExchangeStore();
    private long nextIndex = 1;

    private Result at(long stamp, Command command) {
        return store.applyEntry(CompareExchangeStoreTest.entry(stamp, command), nextIndex++).get(0);
    }

    private Result add(String key, long delta) {
        return at(T0, new Command.Add(key, delta));
    }

    private Result.Write put(String key, String value) {
        Item current = store.get(key);
        return (Result.Write) at(T0, new Command.Put(key, value, current == null ? 0 : current.index(), null));
    }

    @Test
    void anAbsentKeyCountsAsZeroAndIsCreatedHoldingTheDelta() {
        nextIndex = 5;
        Result r = add("counters/Hits", 3);
        Item created = new Item("counters/Hits", "3", 5, 5, 0, null);
        assertEquals(new Result.Write(true, "counters/Hits", created), r);
        assertEquals(created, store.get("counters/hits"));
    }

    @Test
    void anAddToAnIntegerStoresTheSumAtTheEntrysIndexAndKeepsTheRestOfTheItem() {
        at(T0, new Command.Put("Counters/hits", "40", 0, "{\"owner\":\"ops\"}", 60_000, false));
        Item before = store.get("counters/hits");
        Result.Write w = (Result.Write) add("COUNTERS/HITS", 2);
        assertEquals(new Item("Counters/hits", "42", 2, 1, before.expiresAt(), before.metadata()), w.item(),
                "the first spelling, the metadata, the expiry and the created index stay; only value and index move");
        assertEquals(w.item(), store.get("counters/hits"));
    }

    @Test
    void aNegativeDeltaSubtractsAndMayCrossZero() {
        add("stock", 2);
        assertEquals("-3", ((Result.Write) add("stock", -5)).item().value());
        assertEquals("0", ((Result.Write) add("stock", 3)).item().value());
    }

    @Test
    void twoAddsInOneEntryBothApplyAtTheEntrysIndex() {
        List<Result> results = store.applyEntry(CompareExchangeStoreTest.entry(T0, new Command.Add("c", 1),
                new Command.Add("c", 1)), 9);
        assertEquals("1", ((Result.Write) results.get(0)).item().value());
        assertEquals(new Item("c", "2", 9, 9, 0, null), ((Result.Write) results.get(1)).item(), "neither conflicts with the other");
    }

    @Test
    void aSumPastTheSigned64BitRangeIsRefusedAndWritesNothing() {
        add("c", Long.MAX_VALUE - 1);
        Item before = store.get("c");
        assertEquals(new Result.Overflow("c", before, 2), add("c", 2));
        assertEquals(before, store.get("c"));
        add("low", Long.MIN_VALUE);
        assertEquals(new Result.Overflow("low", store.get("low"), -1), add("low", -1));
        assertEquals(Long.toString(Long.MAX_VALUE), ((Result.Write) add("c", 1)).item().value(), "up to the edge it adds");
    }

    @Test
    void anItemThatHoldsNoIntegerIsNamedWithWhatItHoldsAndLeftAsItIs() {
        for (String value : List.of("\"5\"", "{\"n\":1}", "1.5", "5.0", "1e3", "[1]", "true", "9223372036854775808")) {
            put("v", value);
            Item before = store.get("v");
            assertEquals(new Result.NotAnInteger("v", before), add("v", 1), value);
            assertEquals(before, store.get("v"), value);
        }
    }

    @Test
    void anExpiredItemCountsAsAbsentSoTheAddStartsANewItemFromZero() {
        at(T0, new Command.Put("window", "7", 0, null, 1_000, false));
        Result.Write w = (Result.Write) at(T0 + 1_000, new Command.Add("window", 1));
        assertEquals(new Item("window", "1", 2, 2, 0, null), w.item(), "a new item: no expiry, no metadata, created now");
        at(T0 + 1_000, new Command.Put("live", "7", 0, null, 1_000, false));
        Result.Write kept = (Result.Write) at(T0 + 1_999, new Command.Add("live", 1));
        assertEquals("8", kept.item().value());
        assertEquals(T0 + 2_000, kept.item().expiresAt(), "an add does not renew");
    }

    @Test
    void anIdempotentAddSentAgainAppliesOnceAndReturnsTheFirstResult() {
        Request once = new Request("add-7", 60_000, List.of(new Command.Add("c", 5)));
        Result first = store.applyEntry(Entry.untagged(T0, List.of(once)), nextIndex++).get(0);
        Result again = store.applyEntry(Entry.untagged(T0 + 10, List.of(once)), nextIndex++).get(0);
        assertEquals(first, again);
        assertEquals("5", store.get("c").value(), "applied once");
        Request other = new Request("add-7", 60_000, List.of(new Command.Add("c", 6)));
        assertInstanceOf(Result.Rejected.class, store.applyEntry(Entry.untagged(T0 + 20, List.of(other)), nextIndex++).get(0),
                "a key reused for another add is refused");

        add("c", Long.MAX_VALUE);
        Request refused = new Request("add-8", 60_000, List.of(new Command.Add("c", Long.MAX_VALUE)));
        Result overflow = store.applyEntry(Entry.untagged(T0 + 30, List.of(refused)), nextIndex++).get(0);
        add("c", -Long.MAX_VALUE); // now it would fit
        assertEquals(overflow, store.applyEntry(Entry.untagged(T0 + 40, List.of(refused)), nextIndex++).get(0),
                "a refusal is remembered as any result");
    }

    @Test
    void rememberedAnswersOfAddsSurviveTheSnapshotLayout() throws Exception {
        Item item = new Item("c", "{}", 3, 2, 0, "{\"m\":1}");
        List<Result> results = List.of(new Result.Write(true, "c", new Item("c", "7", 4, 4, 0, null)),
                new Result.NotAnInteger("c", item), new Result.Overflow("c", item, Long.MIN_VALUE));
        byte[] bytes = SnapshotCodec.bytes(out -> SnapshotCodec.writeResults(out, results));
        assertEquals(results, SnapshotCodec.parse(bytes, SnapshotCodec::readResults));
        assertTrue(Footprint.results(results) > Footprint.results(results.subList(0, 1)), "a refusal counts against the quota");
    }

    @Test
    void anAddIsAWriteToWatchesAndCountsAsACommitOfOneAttemptOnAContendedKey() {
        KeyContention contention = new KeyContention(0);
        store.countContentionIn(contention);
        put("hot", "0");
        at(T0, new Command.Put("hot", "1", 0, null)); // refused: tracked from here
        long before = store.lastChange("hot");
        add("hot", 1);
        assertEquals(List.of("hot"), store.changedKeys());
        Result.Watched w = store.watched(new Query.Watch("hot", before, 1_000));
        assertTrue(w.changed());
        assertEquals("1", w.item().value());
        add("hot", 1);
        KeyContention.Counts hot = contention.hottest(1).get(0);
        assertEquals(new KeyContention.Counts("hot", 3, 2, 1), hot);
        put("text", "\"x\"");
        add("text", 1);
        assertEquals(List.of(), store.changedKeys(), "a refused add changes nothing a watch could see");
    }

    @Test
    void anAddToAKeyATransactionAcrossGroupsHoldsIsRefusedWholeUntilItIsSettled() {
        at(T0, new Command.Prepare("t1", 0, List.of(0, 1), 5_000, true, List.of(new Command.Put("c", "1", 0, null))));
        assertEquals(new Result.Locked("c", "t1"), add("c", 1));
        at(T0, new Command.Settle("t1", Command.Settle.Step.COMMIT));
        assertEquals("2", ((Result.Write) add("c", 1)).item().value());
    }

    @Test
    void theQuotaRefusesAnAddThatCreatesButNotOneThatKeepsItsSize() {
        at(T0, new Command.SetQuota(Limits.MIN_QUOTA_BYTES, false));
        add("c", 10);
        // Leaves 50 of the quota: less than a new item takes, more than a digit more does.
        long room = Limits.MIN_QUOTA_BYTES - store.used() - Footprint.ITEM - "big".length() - 2 - 50;
        at(T0, new Command.Put("big", "\"" + "x".repeat((int) room) + "\"", 0, null));
        assertEquals(Limits.MIN_QUOTA_BYTES - 50, store.used());
        assertInstanceOf(Result.QuotaExceeded.class, add("fresh", 1));
        assertNull(store.get("fresh"));
        assertEquals("11", ((Result.Write) add("c", 1)).item().value(), "the same number of digits: no growth");
        Batch create = Batch.untagged(List.of(Request.of(List.of(new Command.Add("fresh", 1)))));
        assertInstanceOf(Result.QuotaExceeded.class, store.refusalsForQuota(create).get(0), "the leader refuses it before the log");
    }

    @Test
    void everyReplicaAppliesTheSameAddsToTheSameState() {
        CompareExchangeStore other = new CompareExchangeStore();
        List<Result> mine = new ArrayList<>();
        List<Result> theirs = new ArrayList<>();
        long[] deltas = {5, -3, Long.MAX_VALUE, 9, Long.MIN_VALUE, 0};
        for (int i = 0; i < deltas.length; i++) {
            Entry entry = CompareExchangeStoreTest.entry(T0 + i, new Command.Add("c", deltas[i]), new Command.Put("s", "\"a\"", i, null),
                    new Command.Add("s", 1));
            mine.addAll(store.applyEntry(entry, i + 1));
            theirs.addAll(other.applyEntry(entry, i + 1));
        }
        assertEquals(mine, theirs);
        assertEquals(store.getAll(List.of("c", "s")), other.getAll(List.of("c", "s")));
    }
}
