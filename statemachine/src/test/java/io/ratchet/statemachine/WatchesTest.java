package io.ratchet.statemachine;

import static io.ratchet.statemachine.CompareExchangeStoreTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.exceptions.ServerNotReadyException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Watches are checked only against the keys an applied entry changed, through the same calls the state
 * machine makes: the store applies an entry, then {@link Watches#fired} takes out what it answered.
 */
class WatchesTest {
    private static final long T0 = 1_700_000_000_000L;
    /** Longer than any test: these watches end by being fired or by close(), never by their timer. */
    private static final long PARKED = TimeUnit.MINUTES.toMillis(10);

    private final CompareExchangeStore store = new CompareExchangeStore();
    private final Watches watches = new Watches();
    private long nextIndex = 1;

    @AfterEach
    void close() {
        watches.close();
    }

    /** Applies one entry and runs the answers it fired, as the state machine does; returns how many fired. */
    private int apply(long stamp, Command... commands) {
        return applyEntry(entry(stamp, commands));
    }

    private int applyEntry(Entry entry) {
        store.applyEntry(entry, nextIndex++);
        List<Runnable> fired = watches.fired(store);
        fired.forEach(Runnable::run);
        return fired.size();
    }

    private long put(String key, String value) {
        long index = nextIndex;
        assertEquals(0, apply(T0, new Command.Put(key, value, 0, null)), "creating " + key + " fires nothing");
        assertEquals(index, store.get(key).index());
        return index;
    }

    /** Registers a watch as the state machine does: only one the store has nothing to report for yet. */
    private CompletableFuture<Result.Watched> watch(String key, long afterIndex) {
        Query.Watch w = new Query.Watch(key, afterIndex, PARKED);
        assertFalse(store.watched(w).changed(), "the store would answer " + w + " at once");
        return watches.register(w, store::watched);
    }

    private static Result.Watched answered(CompletableFuture<Result.Watched> watch) {
        assertTrue(watch.isDone(), "answered");
        return watch.join();
    }

    @Test
    void onlyTheWatchesOfAChangedKeyFire() {
        long a = put("a", "1");
        long b = put("b", "1");
        long c = put("c", "1");
        CompletableFuture<Result.Watched> onA = watch("a", a);
        CompletableFuture<Result.Watched> onAAgain = watch("A", a);
        CompletableFuture<Result.Watched> onB = watch("b", b);
        CompletableFuture<Result.Watched> onC = watch("c", c);

        long changed = nextIndex;
        assertEquals(2, apply(T0, new Command.Put("a", "2", a, null)));
        assertEquals(new Result.Watched(true, changed, store.get("a")), answered(onA));
        assertEquals(answered(onA), answered(onAAgain), "every watch on the key, in any spelling");
        assertFalse(onB.isDone());
        assertFalse(onC.isDone());
        assertEquals(2, watches.size());

        assertEquals(1, apply(T0, new Command.Delete("c", c)));
        assertEquals(new Result.Watched(true, changed + 1, null), answered(onC));
        assertFalse(onB.isDone());
        assertEquals(1, watches.size());
    }

    @Test
    void aWatchIsLookedAtOnlyWhenAnEntryChangesItsKey() {
        long a = put("a", "1");
        CompletableFuture<Result.Watched> onA = watch("a", a);
        // Changed behind the watches' back (no fired call): the store would answer it now...
        store.applyEntry(entry(T0, new Command.Put("a", "2", a, null)), nextIndex++);
        assertTrue(store.watched(new Query.Watch("a", a, PARKED)).changed());
        // ...but an entry that changed another key does not look at it: watches are not all scanned.
        assertEquals(0, apply(T0, new Command.Put("b", "1", 0, null)));
        assertFalse(onA.isDone());
        long second = nextIndex;
        assertEquals(1, apply(T0, new Command.Put("a", "3", a + 1, null)));
        assertEquals(new Result.Watched(true, second, store.get("a")), answered(onA));
    }

    @Test
    void anEntryThatChangesNoWatchedKeyFiresNothing() {
        List<CompletableFuture<Result.Watched>> parked = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            long index = put("w" + i, "1");
            parked.add(watch("w" + i, index));
        }
        assertEquals(0, apply(T0, new Command.Put("other", "1", 0, null)));
        assertEquals(0, apply(T0, new Command.Put("w7", "2", 0, null)), "a put on a watched key refused by its condition");
        assertEquals(0, apply(T0, new Command.Transaction(List.of(new Command.Check("w8", 8)))), "a check");
        assertEquals(100, watches.size());
        assertTrue(parked.stream().noneMatch(CompletableFuture::isDone));
    }

    @Test
    void aWatchAfterALaterIndexStaysWhenItsKeyChangesBelowIt() {
        long k = put("k", "1");
        CompletableFuture<Result.Watched> now = watch("k", k);
        CompletableFuture<Result.Watched> later = watch("k", k + 100);
        assertEquals(1, apply(T0, new Command.Put("k", "2", k, null)));
        assertTrue(answered(now).changed());
        assertFalse(later.isDone(), "its key changed, but not above its index");
        assertEquals(1, watches.size());
    }

    @Test
    void aTransactionFiresTheWatchesOfTheKeysItWrote() {
        long a = put("a", "1");
        long b = put("b", "1");
        long c = put("c", "1");
        CompletableFuture<Result.Watched> onA = watch("a", a);
        CompletableFuture<Result.Watched> onB = watch("b", b);
        CompletableFuture<Result.Watched> onC = watch("c", c);
        CompletableFuture<Result.Watched> onD = watch("d", nextIndex - 1);
        assertEquals(3, apply(T0, new Command.Transaction(List.of(new Command.Put("a", "2", a, null),
                new Command.Delete("b", b), new Command.Check("c", c), new Command.Put("d", "1", 0, null)))));
        assertEquals("2", answered(onA).item().value());
        assertNull(answered(onB).item());
        assertEquals("1", answered(onD).item().value());
        assertFalse(onC.isDone(), "checked, not written");
    }

    @Test
    void aDocumentWriteFiresTheWatchOnItsGuard() {
        String guard = Document.guardKey("users/1");
        CompletableFuture<Result.Watched> onGuard = watch(guard.toUpperCase(), nextIndex - 1);
        long index = nextIndex;
        assertEquals(1, apply(T0, new Command.Transaction(List.of(new Command.PutDocument("Users/1", "{}", 0)))));
        assertEquals(index, answered(onGuard).lastChange());
        assertEquals(guard.replace("users/1", "Users/1"), answered(onGuard).item().key());
    }

    @Test
    void aSweepFiresTheWatchesOfTheLeasesItRemoved() {
        assertEquals(0, apply(T0, new Command.Put("leases/a", "1", 0, null, 1_000, true)));
        long a = nextIndex - 1;
        assertEquals(0, apply(T0, new Command.Put("leases/b", "1", 0, null, 60_000, true)));
        long b = nextIndex - 1;
        CompletableFuture<Result.Watched> onA = watch("leases/a", a);
        CompletableFuture<Result.Watched> onB = watch("leases/b", b);
        assertEquals(1, apply(T0 + 2_000, new Command.Sweep(List.of(
                new Command.KeyIndex("leases/a", a), new Command.KeyIndex("leases/b", b)))));
        assertEquals(new Result.Watched(true, nextIndex - 1, null), answered(onA));
        assertFalse(onB.isDone(), "not expired, so not swept");
    }

    @Test
    void aRiseOfTheTombstoneWatermarkFiresTheWatchesItPassesOnKeysWithNoRecordLeft() {
        List<Request> creates = new ArrayList<>();
        for (int i = 0; i <= CompareExchangeStore.MAX_TOMBSTONES + 1; i++) {
            creates.add(Request.of(List.of(new Command.Put("k" + i, "1", 0, null))));
        }
        long created = nextIndex;
        assertEquals(0, applyEntry(Entry.untagged(T0, creates)));
        // A key that never existed changed last, as far as the store can vouch, at the watermark (0 now).
        CompletableFuture<Result.Watched> ghost = watch("ghost", created + 1);
        CompletableFuture<Result.Watched> ghostLater = watch("ghost", created + 2);
        long firstDelete = nextIndex;
        for (int i = 0; i < CompareExchangeStore.MAX_TOMBSTONES; i++) {
            assertEquals(0, apply(T0, new Command.Delete("k" + i, created)));
        }
        assertEquals(firstDelete, created + 1);
        assertEquals(0, apply(T0, new Command.Delete("k" + CompareExchangeStore.MAX_TOMBSTONES, created)),
                "the watermark rose to " + firstDelete + ", not above either watch's index");
        assertEquals(firstDelete, store.tombstoneWatermark());
        assertEquals(1, apply(T0, new Command.Delete("k" + (CompareExchangeStore.MAX_TOMBSTONES + 1), created)));
        assertEquals(new Result.Watched(true, firstDelete + 1, null), answered(ghost));
        assertFalse(ghostLater.isDone());
        assertEquals(1, watches.size());
    }

    @Test
    void aReplacedStoreIsCheckedForEveryWatch() {
        long a = put("a", "1");
        long b = put("b", "1");
        CompletableFuture<Result.Watched> onA = watch("a", a);
        CompletableFuture<Result.Watched> onB = watch("b", b);
        // As if a snapshot taken later were installed: "a" changed at 9 there, "b" did not.
        CompareExchangeStore installed = CompareExchangeStore.restore(T0, 9,
                List.of(CompareExchangeStoreTest.item("a", "2", 9), CompareExchangeStoreTest.item("b", "1", b)),
                List.of(), Map.of(), 0, Map.of(), List.of());
        assertEquals(List.of(), watches.fired(installed), "no entry applied: fired alone sees nothing");
        List<Runnable> fired = watches.firedByAnyChange(installed);
        assertEquals(1, fired.size());
        fired.forEach(Runnable::run);
        assertEquals(new Result.Watched(true, 9, CompareExchangeStoreTest.item("a", "2", 9)), answered(onA));
        assertFalse(onB.isDone());
    }

    @Test
    void aTimedOutWatchIsAnsweredFromTheStore() throws Exception {
        long k = put("k", "1");
        CompletableFuture<Result.Watched> unchanged = watches.register(new Query.Watch("k", k, 1), store::watched);
        assertEquals(new Result.Watched(false, k, store.get("k")), unchanged.get(10, TimeUnit.SECONDS));
        assertEquals(0, watches.size());

        CompletableFuture<Result.Watched> later = watches.register(new Query.Watch("k", k, 200), store::watched);
        store.applyEntry(entry(T0, new Command.Put("k", "2", k, null)), nextIndex++); // not fired: only the timer answers
        assertEquals(new Result.Watched(true, k + 1, store.get("k")), later.get(10, TimeUnit.SECONDS));
        assertEquals(0, watches.size());
    }

    @Test
    void aWatchRegisteredAsTheLastOtherOnItsKeyTimesOutIsStillAnswered() throws Exception {
        long k = put("k", "1");
        int threads = 4;
        int each = 1_500;
        List<CompletableFuture<Result.Watched>> all = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> registering = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            String key = "k" + t;
            // Each thread registers on its own key about as often as the watches there lapse, so a new one
            // keeps arriving just as the timer takes out the last one before it and drops the key's set.
            Thread thread = new Thread(() -> {
                for (int i = 0; i < each; i++) {
                    all.add(watches.register(new Query.Watch(key, k, 1), store::watched));
                    long until = System.nanoTime() + 900_000 + (i % 21) * 10_000;
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                }
            });
            registering.add(thread);
            thread.start();
        }
        for (Thread thread : registering) {
            thread.join();
        }
        // A watch dropped with its key's set would never be answered: not by apply, not by its timer.
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        assertEquals(threads * each, all.size());
        assertTrue(all.stream().noneMatch(w -> w.join().changed()));
        assertEquals(0, watches.size());
    }

    @Test
    void closeFailsEveryWaitingWatchAndAnyRegisteredAfter() {
        long k = put("k", "1");
        CompletableFuture<Result.Watched> one = watch("k", k);
        CompletableFuture<Result.Watched> other = watch("elsewhere", k);
        watches.close();
        for (CompletableFuture<Result.Watched> w : List.of(one, other)) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> w.get(10, TimeUnit.SECONDS));
            assertInstanceOf(ServerNotReadyException.class, e.getCause());
        }
        assertEquals(0, watches.size());
        CompletableFuture<Result.Watched> late = watch("k", k);
        assertTrue(late.isCompletedExceptionally(), "a watch registered after close is failed, not left waiting");
        assertEquals(0, watches.size());
        assertEquals(0, apply(T0, new Command.Put("k", "2", k, null)), "and none is fired after close");
    }
}
