package io.ratchet.statemachine;

import static io.ratchet.statemachine.CompareExchangeStoreTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The storage quota on the store alone: counted in fixed units, refused alike on every replica. */
class QuotaTest {
    private static final long QUOTA = Limits.MIN_QUOTA_BYTES;
    /** A value of about 1 KB, so about a thousand items fill the smallest quota. */
    private static final String KILOBYTE = "\"" + "x".repeat(1_000) + "\"";

    @TempDir
    Path dir;

    private long index;
    private long stamp = 1_000;

    private Result apply(CompareExchangeStore store, Command command) {
        return store.applyEntry(entry(stamp++, command), ++index).get(0);
    }

    private CompareExchangeStore storeWithQuota(long quota) {
        CompareExchangeStore store = new CompareExchangeStore();
        assertEquals(new Result.Quota(0, quota), apply(store, new Command.SetQuota(quota, false)));
        return store;
    }

    /** Creates items until one is refused; returns how many were written. */
    private int fill(CompareExchangeStore store) {
        for (int i = 0; ; i++) {
            if (apply(store, new Command.Put("fill/" + i, KILOBYTE, 0, null)) instanceof Result.QuotaExceeded) {
                return i;
            }
        }
    }

    @Test
    void aNewClusterStartsWithTheDefaultQuotaAndAnEmptyStateCountsNothing() {
        CompareExchangeStore store = new CompareExchangeStore();
        assertEquals(Limits.DEFAULT_QUOTA_BYTES, store.quota());
        assertEquals(0, store.used());
    }

    @Test
    void aWriteThatWouldPassTheQuotaIsRefusedWritesNothingAndSaysHowMuchIsUsed() {
        CompareExchangeStore store = storeWithQuota(QUOTA);
        int written = fill(store);
        assertTrue(written > 500 && written < 1_100, "about a thousand 1 KB items fit 1 MiB, not " + written);

        long used = store.used();
        long lastIndex = store.lastEntryIndex();
        Result refused = apply(store, new Command.Put("one/more", KILOBYTE, 0, null));
        Result.QuotaExceeded q = assertInstanceOf(Result.QuotaExceeded.class, refused);
        assertEquals(used, q.used());
        assertEquals(QUOTA, q.quota());
        assertEquals(Footprint.item(CompareExchangeStoreTest.item("one/more", KILOBYTE, lastIndex + 1)), q.needed());
        assertTrue(q.used() + q.needed() > q.quota());
        assertNull(store.get("one/more"));
        assertEquals(used, store.used());
        assertEquals(written, store.size());
    }

    @Test
    void deletesAndWritesThatDoNotGrowTheStateAreAcceptedOverTheQuota() {
        CompareExchangeStore store = storeWithQuota(QUOTA);
        fill(store);
        long index0 = store.get("fill/0").index();
        // the same size again: no growth
        assertTrue(((Result.Write) apply(store, new Command.Put("fill/0", KILOBYTE, index0, null))).successful());
        // smaller
        long index1 = store.get("fill/1").index();
        assertTrue(((Result.Write) apply(store, new Command.Put("fill/1", "1", index1, null))).successful());
        // larger by more than that freed: refused
        long index2 = store.get("fill/2").index();
        assertInstanceOf(Result.QuotaExceeded.class,
                apply(store, new Command.Put("fill/2", "\"" + "x".repeat(5_000) + "\"", index2, null)));
        // deletes free space, and a create fits again
        for (int i = 3; i < 10; i++) {
            assertTrue(((Result.Write) apply(store, new Command.Delete("fill/" + i, store.get("fill/" + i).index())))
                    .successful());
        }
        assertTrue(((Result.Write) apply(store, new Command.Put("new", KILOBYTE, 0, null))).successful());
    }

    @Test
    void aTransactionThatWouldPassTheQuotaWritesNothingAtAll() {
        CompareExchangeStore store = storeWithQuota(QUOTA);
        fill(store);
        long used = store.used();
        long index0 = store.get("fill/0").index();
        // it frees one item and adds two: more than it frees
        Result refused = apply(store, new Command.Transaction(List.of(
                new Command.Delete("fill/0", index0),
                new Command.Put("txn/a", KILOBYTE, 0, null),
                new Command.Put("txn/b", KILOBYTE, 0, null))));
        assertInstanceOf(Result.QuotaExceeded.class, refused);
        assertEquals(index0, store.get("fill/0").index(), "the delete in it did not apply either");
        assertNull(store.get("txn/a"));
        assertEquals(used, store.used());
        // one for one fits
        Result swapped = apply(store, new Command.Transaction(List.of(
                new Command.Delete("fill/0", index0),
                new Command.Put("txn/a", KILOBYTE, 0, null))));
        assertTrue(((Result.Txn) swapped).successful());
    }

    @Test
    void aDocumentSaveCountsTheDocumentAndItsGuard() {
        CompareExchangeStore store = storeWithQuota(QUOTA);
        Result saved = apply(store, new Command.Transaction(List.of(new Command.PutDocument("users/1", "{\"n\":1}", 0))));
        assertTrue(((Result.Txn) saved).successful());
        assertEquals(Footprint.document(store.document("users/1")) + Footprint.item(store.get("rvn-atomic/users/1")),
                store.used());
        fill(store);
        long guard = store.get("rvn-atomic/users/1").index();
        assertInstanceOf(Result.QuotaExceeded.class, apply(store, new Command.Transaction(List.of(
                new Command.PutDocument("users/1", "{\"n\":\"" + "y".repeat(2_000) + "\"}", guard)))));
        assertEquals("{\"n\":1}", store.document("users/1").json());
    }

    /** What the leader answers without a log entry is exactly what apply would have answered. */
    @Test
    void aBatchOfWritesThatCannotFitIsRefusedBeforeTheLogExactlyAsApplyWouldRefuseIt() {
        CompareExchangeStore store = storeWithQuota(QUOTA);
        apply(store, new Command.OpenSession(7, 60_000));
        Command create = new Command.Put("one/more", KILOBYTE, 0, null);
        Command txn = new Command.Transaction(List.of(new Command.Put("txn/a", KILOBYTE, 0, null)));
        Batch fits = new Batch(7, 1, List.of(Request.of(List.of(create))));
        assertNull(store.refusalsForQuota(fits), "not full: it goes to the log");
        fill(store);

        Batch full = new Batch(7, 1, List.of(Request.of(List.of(create)), Request.of(List.of(txn))));
        long used = store.used();
        List<Result> early = store.refusalsForQuota(full);
        assertEquals(2, early.size());
        assertEquals(used, store.used(), "a dry run changes nothing");
        assertEquals(early, store.applyEntry(new Entry(stamp++, List.of(full)), ++index));

        long index0 = store.get("fill/0").index();
        assertNull(store.refusalsForQuota(new Batch(7, 2, List.of(Request.of(List.of(create,
                new Command.Delete("fill/0", index0)))))), "a delete in it: the log decides");
        assertNull(store.refusalsForQuota(new Batch(7, 2, List.of(Request.of(List.of(
                new Command.Put("fill/0", KILOBYTE, 0, null)))))), "a condition that fails is answered by apply");
        assertNull(store.refusalsForQuota(new Batch(7, 1, List.of(Request.of(List.of(create))))),
                "a resend of the last sequence gets its first results from the session");
        assertNull(store.refusalsForQuota(new Batch(8, 1, List.of(Request.of(List.of(create))))), "no such session");
        assertNull(store.refusalsForQuota(Batch.untagged(List.of(new Request("idem", 60_000, List.of(create))))),
                "an idempotency key may have results to give back");
        assertEquals(1, store.refusalsForQuota(Batch.untagged(List.of(Request.of(List.of(create))))).size());
    }

    @Test
    void loweringTheQuotaBelowWhatIsUsedRefusesGrowthButRemovesNothing() {
        CompareExchangeStore store = storeWithQuota(QUOTA * 4);
        for (int i = 0; i < 2_000; i++) {
            apply(store, new Command.Put("k/" + i, KILOBYTE, 0, null));
        }
        long used = store.used();
        Result.Quota set = assertInstanceOf(Result.Quota.class, apply(store, new Command.SetQuota(QUOTA, false)));
        assertEquals(new Result.Quota(used, QUOTA), set);
        assertTrue(set.alarm());
        assertEquals(2_000, store.size());
        assertInstanceOf(Result.QuotaExceeded.class, apply(store, new Command.Put("k/new", "1", 0, null)));
        assertTrue(((Result.Write) apply(store, new Command.Delete("k/0", store.get("k/0").index()))).successful());
    }

    @Test
    void aQuotaProposedAtBootstrapDoesNotOverrideOneAnOperatorSet() {
        CompareExchangeStore store = new CompareExchangeStore();
        assertEquals(new Result.Quota(0, 8L << 20), apply(store, new Command.SetQuota(8L << 20, true)));
        assertEquals(new Result.Quota(0, 8L << 20), apply(store, new Command.SetQuota(16L << 20, true)));
        assertEquals(new Result.Quota(0, 16L << 20), apply(store, new Command.SetQuota(16L << 20, false)));
    }

    /** Every part of the state counts, and what is added and then removed leaves nothing counted. */
    @Test
    void everyPartOfTheStateIsCountedAndRemovingItAllCountsZero() {
        CompareExchangeStore store = new CompareExchangeStore();
        apply(store, new Command.Put("Mixed/Case", "{\"a\":\"é\"}", 0, "{\"owner\":\"n1\"}"));
        apply(store, new Command.Put("lease", "1", 0, null, 5_000, false));
        apply(store, new Command.Transaction(List.of(new Command.PutDocument("users/1", "{}", 0))));
        long withItems = store.used();
        assertEquals(Footprint.item(store.get("mixed/case")) + Footprint.item(store.get("lease"))
                + Footprint.item(store.get("rvn-atomic/users/1")) + Footprint.document(store.document("users/1")),
                withItems);
        assertTrue(withItems > 3 * Footprint.ITEM + Footprint.EXPIRY + Footprint.DOCUMENT);

        // an idempotent write is remembered, and a session keeps its last results
        store.applyEntry(Entry.untagged(stamp++, List.of(new Request("idem", 1_000, List.of(
                new Command.Put("x", "1", 0, null))))), ++index);
        store.applyEntry(Entry.untagged(stamp++, List.of(Request.of(List.of(new Command.OpenSession(7, 2_000))))),
                ++index);
        store.applyEntry(new Entry(stamp++, List.of(new Batch(7, 1, List.of(Request.of(List.of(
                new Command.Put("y", "2", 0, null))))))), ++index);
        assertTrue(store.used() > withItems + Footprint.REMEMBERED + Footprint.SESSION);

        for (String key : List.of("mixed/case", "lease", "x", "y")) {
            apply(store, new Command.Delete(key, store.get(key).index()));
        }
        apply(store, new Command.Transaction(List.of(
                new Command.DeleteDocument("users/1", store.get("rvn-atomic/users/1").index()))));
        // the remembered request and the session lapse with cluster time
        stamp += 10_000;
        apply(store, new Command.Sweep(List.of()));
        assertEquals(0, store.size());
        assertEquals(0, store.sessionCount());
        assertEquals(0, store.used());
    }

    /**
     * The leader skips its early quota check while the state is further under the quota than a batch's
     * {@code mostGrowth}: the bound must exceed what any batch really adds, whatever its keys and values.
     */
    @Test
    void noBatchAddsAsMuchAsItsBoundSays() {
        CompareExchangeStore store = new CompareExchangeStore();
        SplittableRandom random = new SplittableRandom(27);
        String[] texts = {"a", "İstanbul/Ünïcode", "\uD83D\uDE00-emoji-😀", "{\"n\":1e2}", "x".repeat(300)};
        for (int i = 0; i < 500; i++) {
            String key = texts[random.nextInt(texts.length)] + "/" + i;
            String value = Json.write(texts[random.nextInt(texts.length)]);
            String metadata = random.nextBoolean() ? null : "{\"tag\": \"" + texts[random.nextInt(2)] + "\", \"n\": 1e2}";
            Command.Op op = switch (random.nextInt(4)) {
                case 0 -> new Command.Put(key, value, 0, metadata);
                case 1 -> new Command.Put(key, value, 0, metadata, 5_000, false);
                case 2 -> new Command.PutDocument(key, "{\"v\":" + value + "}", 0);
                default -> new Command.Put(key.toUpperCase(java.util.Locale.ROOT), value, 0, metadata, 1_000, true);
            };
            // A document save travels as a transaction; a put either way.
            Command command = op instanceof Command.Put put && random.nextBoolean() ? put : new Command.Transaction(List.of(op));
            Batch batch = Batch.untagged(List.of(Request.of(List.of(command))));
            long before = store.used();
            store.applyEntry(new Entry(stamp++, List.of(batch)), ++index);
            long added = store.used() - before;
            assertTrue(added > 0, "it was applied and grew the state: " + command);
            assertTrue(added <= Footprint.mostGrowth(batch), added + " > bound " + Footprint.mostGrowth(batch) + ": " + command);
        }
    }

    /** Two replicas that apply the same entries refuse the same writes, and count the same. */
    @Test
    void replicasApplyingTheSameEntriesRefuseTheSameWrites() {
        CompareExchangeStore a = storeWithQuota(QUOTA);
        index = 0;
        stamp = 1_000;
        CompareExchangeStore b = storeWithQuota(QUOTA);
        SplittableRandom random = new SplittableRandom(42);
        List<Result> fromA = new ArrayList<>();
        List<Result> fromB = new ArrayList<>();
        long refused = 0;
        for (int i = 0; i < 5_000; i++) {
            String key = "k/" + random.nextInt(1_500);
            Command command;
            if (random.nextInt(4) == 0 && a.get(key) != null) {
                command = new Command.Delete(key, a.get(key).index());
            } else {
                long at = a.get(key) == null ? 0 : a.get(key).index();
                command = new Command.Put(key, "\"" + "v".repeat(random.nextInt(2_000)) + "\"", at, null);
            }
            Entry e = entry(stamp++, command);
            index++;
            fromA.addAll(a.applyEntry(e, index));
            fromB.addAll(b.applyEntry(e, index));
            refused += fromA.get(fromA.size() - 1) instanceof Result.QuotaExceeded ? 1 : 0;
        }
        assertTrue(refused > 100, "the quota was reached often, not " + refused + " times");
        assertEquals(fromA, fromB);
        assertEquals(a.used(), b.used());
        assertEquals(a.list("", 0, Integer.MAX_VALUE), b.list("", 0, Integer.MAX_VALUE));
    }

    @Test
    void theQuotaAndTheCountSurviveASnapshot() throws IOException {
        CompareExchangeStore store = storeWithQuota(QUOTA);
        apply(store, new Command.Put("a", KILOBYTE, 0, "{\"m\":1}", 60_000, false));
        apply(store, new Command.Transaction(List.of(new Command.PutDocument("users/1", "{}", 0))));
        store.applyEntry(Entry.untagged(stamp++, List.of(new Request("idem", 60_000, List.of(
                new Command.Put("b", "1", 0, null))))), ++index);
        store.applyEntry(Entry.untagged(stamp++, List.of(Request.of(List.of(new Command.OpenSession(7, 60_000))))),
                ++index);
        store.applyEntry(new Entry(stamp++, List.of(new Batch(7, 1, List.of(Request.of(List.of(
                new Command.Put("c", KILOBYTE, 0, null))))))), ++index);
        fill(store); // the last result in the snapshot's history is a refusal: it is kept like any other

        Path file = dir.resolve("snapshot.1_" + index);
        SnapshotFile.write(store, file);
        CompareExchangeStore copy = SnapshotFile.read(file);
        assertEquals(QUOTA, copy.quota());
        assertTrue(copy.quotaSet());
        assertEquals(store.used(), copy.used());
        // and the copy refuses what the original refuses
        Command next = new Command.Put("after", KILOBYTE, 0, null);
        assertEquals(apply(store, next), copy.applyEntry(entry(stamp - 1, next), index).get(0));
    }

    @Test
    void aSnapshotOfAFormatBeforeQuotasHasTheDefault() throws IOException {
        Path file = dir.resolve("format-3.snapshot");
        try (InputStream in = QuotaTest.class.getResourceAsStream("/snapshots/format-3.snapshot")) {
            Files.copy(in, file);
        }
        CompareExchangeStore old = SnapshotFile.read(file);
        assertEquals(Limits.DEFAULT_QUOTA_BYTES, old.quota());
        assertFalse(old.quotaSet());
        assertTrue(old.used() > 0);
    }
}
