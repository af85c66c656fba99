package io.ratchet.microbench;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Request;
import io.ratchet.statemachine.CompareExchangeStore;
import io.ratchet.statemachine.SnapshotFile;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What an item costs on the heap: fills a store through {@code applyEntry} with {@code --items} create-only
 * puts of fresh keys ({@code emails/userNNNNNNNN@example.com}, value {@code 1}: the reserve workload's
 * shape), each entry decoded from its bytes as a node decodes it, and reports the heap the store holds after a full collection, per item and beyond each item's
 * key and value bytes; then the snapshot's write time, size and read time. One JSON line on stdout.
 *
 * <pre>scripts/bench --footprint [--items 1000000]</pre>
 */
public final class StoreFootprint {
    private StoreFootprint() {
    }

    public static void main(String[] args) throws IOException {
        int items = 1_000_000;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--items") && i + 1 < args.length) {
                items = Integer.parseInt(args[++i].replace("_", ""));
            } else {
                System.err.println("usage: StoreFootprint [--items N]");
                System.exit(2);
            }
        }
        long before = heapAfterGc();
        CompareExchangeStore store = new CompareExchangeStore();
        long payload = 0;
        long index = 0;
        List<Request> batch = new ArrayList<>();
        for (int i = 0; i < items; i++) {
            String key = String.format(Locale.ROOT, "emails/user%08d@example.com", i);
            payload += key.length() + 1;
            batch.add(Request.of(List.of(new Command.Put(key, "1", 0, null))));
            if (batch.size() == 1000 || i == items - 1) {
                // Through the codec, as a node decodes each entry: every key and value its own String.
                Entry entry = Codec.decodeEntry(Codec.encodeEntry(Entry.untagged(1_000, List.copyOf(batch))));
                store.applyEntry(entry, ++index);
                batch.clear();
            }
        }
        long heap = heapAfterGc() - before;
        Reference.reachabilityFence(store);

        Path dir = Files.createTempDirectory("ratchet-footprint");
        Path file = dir.resolve("snapshot");
        long t0 = System.nanoTime();
        SnapshotFile.write(store, file);
        long written = System.nanoTime() - t0;
        long size = Files.size(file);
        store = null;
        heapAfterGc();
        t0 = System.nanoTime();
        CompareExchangeStore read = SnapshotFile.read(file);
        long readNanos = System.nanoTime() - t0;
        if (read.size() != items) {
            throw new IllegalStateException("read back " + read.size() + " items of " + items);
        }
        Files.delete(file);
        Files.delete(dir);

        System.out.printf(Locale.ROOT, "{\"items\":%d,\"heap_bytes\":%d,\"bytes_per_item\":%.1f,"
                        + "\"key_value_bytes_per_item\":%.1f,\"overhead_per_item\":%.1f,"
                        + "\"snapshot_bytes\":%d,\"snapshot_write_ms\":%d,\"snapshot_read_ms\":%d}%n",
                items, heap, (double) heap / items, (double) payload / items, (double) (heap - payload) / items,
                size, written / 1_000_000, readNanos / 1_000_000);
    }

    private static long heapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
