package io.ratchet.chaos.workload;

import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.chaos.checker.Checker;
import io.ratchet.chaos.checker.WatchChecker;
import io.ratchet.chaos.history.History;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.WatchResult;
import io.ratchet.protocol.Item;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

/**
 * Writers and watchers on a few keys: every watcher whose window covers a change must see it, and no
 * watch may overrun its timeout plus {@link RatchetClient#WATCH_SLACK} ({@link WatchChecker}).
 *
 * <p>Each step is a write or a watch, half and half. A write puts a number no other put writes,
 * conditioned on the key's index: read just before (half the time) or the last one this process saw.
 * Keys are never deleted, so every change has an index a put reported. A watch waits from the last index
 * this process saw for the key (0 at first) for 1 to 4 s. Writes go mostly to the first key and seldom
 * to the last, so that watches on the first usually see a change at once or soon, and watches on the last
 * often time out.
 */
public final class WatchWorkload implements Workload {
    public static final String PREFIX = WatchChecker.WORKLOAD + "/";
    /** How often each key is written, relative to the others: hot, warm, cold. */
    private static final int[] WRITE_WEIGHTS = {6, 3, 1};
    private static final int MIN_TIMEOUT_MILLIS = 1_000;
    private static final int MAX_TIMEOUT_MILLIS = 4_000;

    private final List<String> keys;
    private final AtomicLong values = new AtomicLong();

    public WatchWorkload() {
        this.keys = IntStream.range(0, WRITE_WEIGHTS.length).mapToObj(i -> PREFIX + "k" + i).toList();
    }

    @Override
    public String name() {
        return WatchChecker.WORKLOAD;
    }

    @Override
    public Worker newWorker() {
        return new Worker() {
            /** The index this process last saw for each key: what it watches from and writes at. */
            private final Map<String, Long> lastSeen = new HashMap<>();

            @Override
            public void step(ClientProcess process) {
                Random random = process.random();
                if (random.nextBoolean()) {
                    write(process, random);
                } else {
                    watch(process, random);
                }
            }

            private void write(ClientProcess process, Random random) {
                String key = keys.get(weighted(random));
                RatchetClient client = process.client();
                long at = lastSeen.getOrDefault(key, 0L);
                if (random.nextBoolean()) {
                    Optional<Long> read = read(process, client, key);
                    if (read.isEmpty()) {
                        return;
                    }
                    at = read.get();
                    lastSeen.put(key, at);
                }
                long index = at;
                LongNode value = LongNode.valueOf(values.incrementAndGet());
                ObjectNode input = History.object().put("index", index);
                input.set("value", value);
                Outcome<CompareExchangeResult> out = process.write("put", key, input,
                        () -> client.put(key, value, index), RegisterWorkload::output);
                if (out.ok()) {
                    lastSeen.put(key, out.value().index());
                }
            }

            private void watch(ClientProcess process, Random random) {
                String key = keys.get(random.nextInt(keys.size()));
                long after = lastSeen.getOrDefault(key, 0L);
                int timeoutMillis = MIN_TIMEOUT_MILLIS + random.nextInt(MAX_TIMEOUT_MILLIS - MIN_TIMEOUT_MILLIS + 1);
                ObjectNode input = History.object().put("after", after).put("timeoutMillis", timeoutMillis);
                Outcome<WatchResult> out = process.read("watch", key, input,
                        () -> process.client().watch(key, after, Duration.ofMillis(timeoutMillis)), WatchWorkload::output);
                if (out.ok()) {
                    lastSeen.put(key, out.value().lastChange());
                }
            }
        };
    }

    private static int weighted(Random random) {
        int total = 0;
        for (int w : WRITE_WEIGHTS) {
            total += w;
        }
        int roll = random.nextInt(total);
        for (int i = 0; i < WRITE_WEIGHTS.length; i++) {
            roll -= WRITE_WEIGHTS[i];
            if (roll < 0) {
                return i;
            }
        }
        return WRITE_WEIGHTS.length - 1;
    }

    @Override
    public void finalReads(ClientProcess reader) {
        for (String key : keys) {
            for (int attempt = 0; attempt < 10 && read(reader, reader.client(), key).isEmpty(); attempt++) {
                Pause.briefly();
            }
        }
    }

    /** Reads one key; returns its index (0 when absent), or empty when the read got no answer. */
    private static Optional<Long> read(ClientProcess process, RatchetClient client, String key) {
        Outcome<Optional<Item>> out = process.read("read", key, History.object(), () -> client.get(key), item -> {
            ObjectNode o = History.object().put("index", item.map(Item::index).orElse(0L));
            item.ifPresent(i -> o.set("value", i.valueNode()));
            return o;
        });
        return out.ok() ? Optional.of(out.value().map(Item::index).orElse(0L)) : Optional.empty();
    }

    /** A watch's answer as the checker reads it: the item's index is 0 (and no value) when it is absent. */
    static ObjectNode output(WatchResult r) {
        ObjectNode o = History.object().put("changed", r.changed()).put("lastChange", r.lastChange())
                .put("index", r.item().map(Item::index).orElse(0L));
        r.item().ifPresent(i -> o.set("value", i.valueNode()));
        return o;
    }

    @Override
    public Checker checker() {
        return new WatchChecker();
    }
}
