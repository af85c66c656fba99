package io.ratchet.microbench;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Request;
import io.ratchet.statemachine.CompareExchangeStore;
import io.ratchet.statemachine.Directories;
import io.ratchet.statemachine.kv.RocksKeyValueStore;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * What an item costs in the disk store, and that the heap does not grow with the items: fills a RocksDB
 * store through {@code applyEntry} with {@code --items} create-only puts of fresh keys
 * ({@code emails/userNNNNNNNN@example.com}, value {@code 1}: the reserve workload's shape), 1,000 to an
 * entry, each entry decoded from its bytes as a node decodes it, and reports: the apply rate, the heap
 * after a full collection with the store open (against before it was opened), the store's bytes on disk
 * per item once flushed and compacted, and how long closing and opening it again take (a restart). One
 * JSON line on stdout.
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
        Path dir = Files.createTempDirectory("ratchet-footprint");
        Path db = dir.resolve("db");
        try {
            long heapBefore = heapAfterGc();
            long payload = 0;
            long index = 0;
            long t0 = System.nanoTime();
            RocksKeyValueStore kv = RocksKeyValueStore.open(db, RocksKeyValueStore.Settings.DEFAULT);
            CompareExchangeStore store = new CompareExchangeStore(kv);
            List<Request> batch = new ArrayList<>();
            for (int i = 0; i < items; i++) {
                String key = String.format(Locale.ROOT, "emails/user%08d@example.com", i);
                payload += key.length() + 1;
                batch.add(Request.of(List.of(new Command.Put(key, "1", 0, null))));
                if (batch.size() == 1000 || i == items - 1) {
                    Entry entry = Codec.decodeEntry(Codec.encodeEntry(Entry.untagged(1_000, List.copyOf(batch))));
                    store.applyEntry(entry, ++index, 1);
                    batch.clear();
                }
            }
            long applyNanos = System.nanoTime() - t0;
            long heapOpen = heapAfterGc();
            kv.flush();
            long t1 = System.nanoTime();
            kv.close();
            long closeNanos = System.nanoTime() - t1;
            long disk = bytes(db);
            t1 = System.nanoTime();
            long found;
            try (RocksKeyValueStore again = RocksKeyValueStore.open(db, RocksKeyValueStore.Settings.DEFAULT)) {
                found = new CompareExchangeStore(again).size();
            }
            long openNanos = System.nanoTime() - t1;
            if (found != items) {
                throw new IllegalStateException("read back " + found + " items of " + items);
            }
            System.out.printf(Locale.ROOT, "{\"items\":%d,\"apply_items_per_s\":%.0f,\"heap_before_bytes\":%d,"
                            + "\"heap_open_bytes\":%d,\"disk_bytes\":%d,\"disk_bytes_per_item\":%.1f,"
                            + "\"key_value_bytes_per_item\":%.1f,\"close_ms\":%d,\"open_ms\":%d}%n",
                    items, items / (applyNanos / 1e9), heapBefore, heapOpen, disk, (double) disk / items,
                    (double) payload / items, closeNanos / 1_000_000, openNanos / 1_000_000);
        } finally {
            Directories.delete(dir);
        }
    }

    private static long bytes(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            long sum = 0;
            for (Path f : files.toList()) {
                sum += Files.size(f);
            }
            return sum;
        }
    }

    private static long heapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
