package io.ratchet.microbench;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import io.ratchet.statemachine.CompareExchangeStore;
import io.ratchet.statemachine.Directories;
import io.ratchet.statemachine.kv.RocksKeyValueStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The apply path of one node, without Raft: decode a log entry as the state machine gets it, apply it
 * to a store of {@code items} items, encode the results for the reply. {@code requests} puts per
 * entry is the group-commit batch; the time per entry divided by it is the apply cost of one write.
 */
public class StoreApplyBenchmark extends Microbenchmark {
    @Param({"1", "16"})
    public int requests;

    @Param({"100000"})
    public int items;

    /** Where the store keeps its state: the heap (unit tests) or RocksDB (a node). */
    @Param({"rocksdb", "memory"})
    public String backend;

    private CompareExchangeStore store;
    private RocksKeyValueStore rocks;
    private Path dir;
    private long index;
    private long sequence;

    @Setup(Level.Trial)
    public void fill() throws IOException {
        if (backend.equals("rocksdb")) {
            dir = Files.createTempDirectory("ratchet-apply-bench");
            rocks = RocksKeyValueStore.open(dir.resolve("db"), RocksKeyValueStore.Settings.DEFAULT);
            store = new CompareExchangeStore(rocks);
        } else {
            store = new CompareExchangeStore();
        }
        index = StoreFill.users(items, (entry, i) -> store.applyEntry(entry, i));
        sequence = 0;
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        if (rocks != null) {
            rocks.close();
            Directories.delete(dir);
        }
    }

    /** Create-only puts of fresh keys (the reserve workload) as one entry. */
    @Benchmark
    public byte[] reserveEntry() {
        List<Request> batch = new ArrayList<>(requests);
        for (int i = 0; i < requests; i++) {
            batch.add(Request.of(List.of(new Command.Put("emails/" + sequence++ + "@example.com", "\"users/1\"", 0, null))));
        }
        return applyAsTheNodeDoes(Entry.untagged(2_000, batch));
    }

    /** Conditional puts at a stale index on existing keys: each fails and returns the current item (hot). */
    @Benchmark
    public byte[] refusedUpdateEntry() {
        List<Request> batch = new ArrayList<>(requests);
        for (int i = 0; i < requests; i++) {
            // An index no item holds (every item is at or below the last entry's), so each put is refused.
            batch.add(Request.of(List.of(new Command.Put("users/" + (sequence++ % items), "{\"n\":1}", index + 1_000_000, null))));
        }
        return applyAsTheNodeDoes(Entry.untagged(2_000, batch));
    }

    private byte[] applyAsTheNodeDoes(Entry entry) {
        Entry decoded = Codec.decodeEntry(Codec.encodeEntry(entry));
        List<Result> results = store.applyEntry(decoded, ++index);
        return Codec.encodeResults(results);
    }
}
