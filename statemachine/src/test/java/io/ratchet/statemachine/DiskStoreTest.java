package io.ratchet.statemachine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import io.ratchet.statemachine.kv.Changes;
import io.ratchet.statemachine.kv.RocksKeyValueStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The store on disk is the store in memory: one random history of every kind of command, applied to
 * both, gives the same results entry by entry and the same state after; and the disk store, closed and
 * opened again at any point, goes on exactly where it was (counters, sessions, remembered results,
 * tombstones and the permission table included).
 */
class DiskStoreTest {
    private static final RocksKeyValueStore.Settings SMALL = new RocksKeyValueStore.Settings(8 << 20, 2 << 20);

    @TempDir
    Path dir;

    /** A reproducible history: commands on a few keys so that conditions hold and fail, expire, repeat. */
    private static final class History {
        private final Random random;
        private final List<String> keys = new ArrayList<>();
        private long stamp = 1_000_000;
        private long sequence;
        private static final long SESSION = 77;

        History(long seed) {
            random = new Random(seed);
            for (int i = 0; i < 40; i++) {
                keys.add((i % 3 == 0 ? "Locks/" : "items/") + "k" + i);
            }
        }

        Entry next(CompareExchangeStore reference, long index) {
            stamp += random.nextInt(400);
            List<Batch> batches = new ArrayList<>();
            if (index == 1) {
                return Entry.untagged(stamp, List.of(Request.of(List.of(new Command.OpenSession(SESSION, 60_000),
                        new Command.SetQuota(Limits.MIN_QUOTA_BYTES, false)))));
            }
            int requests = 1 + random.nextInt(4);
            List<Request> untagged = new ArrayList<>();
            for (int r = 0; r < requests; r++) {
                Command c = command(reference);
                if (random.nextInt(5) == 0) {
                    untagged.add(new Request("idem-" + random.nextInt(6), 1 + random.nextInt(5_000), List.of(c)));
                } else {
                    untagged.add(Request.of(List.of(c)));
                }
            }
            batches.add(Batch.untagged(untagged));
            if (random.nextInt(3) == 0) {
                // A session's message, sometimes sent again (a resend), sometimes an old one.
                long seq = random.nextInt(4) == 0 ? sequence : ++sequence;
                batches.add(new Batch(SESSION, seq, List.of(Request.of(List.of(command(reference))))));
            }
            return new Entry(stamp, batches);
        }

        private Command command(CompareExchangeStore reference) {
            String key = keys.get(random.nextInt(keys.size()));
            Item current = reference.get(key);
            long index = current == null ? 0 : (random.nextInt(6) == 0 ? current.index() + 1 : current.index());
            return switch (random.nextInt(10)) {
                case 0 -> new Command.Delete(key, Math.max(1, index));
                case 1 -> new Command.Put(key, "{\"v\":" + random.nextInt(100) + "}", index, null, 1 + random.nextInt(2_000), true);
                case 2 -> new Command.Transaction(List.of(new Command.Put(key, "1", index, null),
                        new Command.Check(keys.get((keys.indexOf(key) + 1) % keys.size()), 0)));
                case 3 -> new Command.Transaction(List.of(new Command.PutDocument("docs/" + random.nextInt(5),
                        "{\"n\":" + random.nextInt(9) + "}", guardIndex(reference))));
                case 4 -> new Command.Sweep(reference.expiredAt(stamp, 10));
                case 5 -> new Command.Put(key, "\"" + "x".repeat(random.nextInt(200_000)) + "\"", index, null);
                // adds to integers, to objects (refused) and past the range (refused): remembered results of each
                case 6 -> new Command.Add(key, random.nextInt(8) == 0 ? Long.MAX_VALUE : random.nextInt(2_000) - 1_000);
                default -> new Command.Put(key, Integer.toString(random.nextInt(1000)), index, null);
            };
        }

        private long guardIndex(CompareExchangeStore reference) {
            Item guard = reference.get("rvn-atomic/docs/" + random.nextInt(5));
            return guard == null ? 0 : guard.index();
        }
    }

    private static String state(CompareExchangeStore s) {
        return String.join("\n", s.list("", 0, 10_000).toString(), s.documents().toString(), s.tombstones().toString(),
                Long.toString(s.tombstoneWatermark()), s.remembered().toString(), Long.toString(s.used()),
                Long.toString(s.size()), Long.toString(s.quota()), Long.toString(s.clusterTime()),
                Long.toString(s.lastEntryIndex()), Integer.toString(s.sessionCount()), s.auth().toString(),
                s.answer(new Query.Stats(), s.lastEntryIndex()).toString());
    }

    @Test
    void theSameHistoryGivesTheSameResultsAndStateOnDiskAsInMemory() {
        CompareExchangeStore memory = new CompareExchangeStore();
        Path db = dir.resolve("db");
        RocksKeyValueStore kv = RocksKeyValueStore.open(db, SMALL);
        CompareExchangeStore disk = new CompareExchangeStore(kv);
        History history = new History(7);
        Random reopen = new Random(8);
        int refusedForQuota = 0;
        try {
            for (long index = 1; index <= 3_000; index++) {
                Entry entry = history.next(memory, index);
                List<Result> expected = memory.applyEntry(entry, index, 3);
                List<Result> actual = disk.applyEntry(entry, index, 3);
                assertEquals(expected, actual, "entry " + index);
                assertEquals(memory.changedKeys(), disk.changedKeys(), "entry " + index + " changed the same keys");
                refusedForQuota += (int) expected.stream().filter(r -> r instanceof Result.QuotaExceeded).count();
                if (reopen.nextInt(300) == 0) {
                    String before = state(disk);
                    kv.close();
                    kv = RocksKeyValueStore.open(db, SMALL);
                    disk = new CompareExchangeStore(kv);
                    assertEquals(before, state(disk), "reopened at " + index);
                }
            }
            assertEquals(state(memory), state(disk));
            assertEquals(3, disk.lastEntryTerm());
            assertTrue(refusedForQuota > 0, "the history reached the quota, so refusals were compared too");
            assertTrue(!disk.tombstones().isEmpty() && !disk.remembered().isEmpty() && disk.sessionCount() == 1,
                    "the history exercised every part of the state");
        } finally {
            kv.close();
        }
        assertTrue(Files.isDirectory(db));
    }

    @Test
    void aStoreOpenedAgainGoesOnFromItsLastEntry() {
        Path db = dir.resolve("again");
        try (RocksKeyValueStore kv = RocksKeyValueStore.open(db, SMALL)) {
            CompareExchangeStore store = new CompareExchangeStore(kv);
            store.applyEntry(CompareExchangeStoreTest.entry(5_000, new Command.Put("a", "1", 0, null)), 4, 2);
        }
        try (RocksKeyValueStore kv = RocksKeyValueStore.open(db, SMALL)) {
            CompareExchangeStore store = new CompareExchangeStore(kv);
            assertEquals(4, store.lastEntryIndex());
            assertEquals(2, store.lastEntryTerm());
            assertEquals(5_000, store.clusterTime());
            assertEquals(1, store.size());
            Result.Write w = (Result.Write) store.applyEntry(
                    CompareExchangeStoreTest.entry(6_000, new Command.Put("a", "2", 4, null)), 5, 2).get(0);
            assertTrue(w.successful());
            assertEquals(5, store.get("a").index());
        }
    }

    @Test
    void aStoreALaterReleaseLaidOutIsRefusedSayingSoAndLeftAsItIs() {
        Path db = dir.resolve("later");
        try (RocksKeyValueStore kv = RocksKeyValueStore.open(db, SMALL)) {
            new CompareExchangeStore(kv).applyEntry(CompareExchangeStoreTest.entry(5_000, new Command.Put("a", "1", 0, null)), 4, 2);
            byte[] meta = kv.get(StoreMeta.key());
            meta[0] = (byte) (StateKeys.FORMAT + 1);
            Changes later = new Changes();
            later.put(StoreMeta.key(), meta);
            kv.write(later);
        }
        try (RocksKeyValueStore kv = RocksKeyValueStore.open(db, SMALL)) {
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> new CompareExchangeStore(kv));
            assertEquals("the store holds state in layout " + (StateKeys.FORMAT + 1) + ", which a later release wrote; this"
                    + " release reads layout " + StateKeys.FORMAT + ": run that release (or a later one) on this storage, or"
                    + " restore a backup into an empty one", refused.getMessage());
            assertEquals(StateKeys.FORMAT + 1, kv.get(StoreMeta.key())[0], "nothing rewritten");
        }
    }
}
