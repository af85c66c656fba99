package io.ratchet.chaos.workload;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.chaos.checker.Checker;
import io.ratchet.chaos.checker.RegisterChecker;
import io.ratchet.chaos.history.History;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.IntStream;

/**
 * Reads, create-only puts, conditional puts and deletes on a few items, each item a versioned register;
 * the history must be linearizable ({@link RegisterChecker}). Every put writes a number no other put
 * writes. A process conditions its writes on the index it last saw for the item, which under contention
 * is often stale: that is what makes a lost update visible.
 */
public final class RegisterWorkload implements Workload {
    public static final String PREFIX = RegisterChecker.WORKLOAD + "/";

    private final List<String> keys;
    private final Function<RatchetClient, RegisterClient> connect;
    private final Duration checkBudget;
    private final AtomicLong values = new AtomicLong();

    /**
     * @param keys              how many items the processes contend on
     * @param unconditionalPuts the deliberately broken test mode ({@link UnconditionalPuts})
     * @param checkBudget       the most the linearizability search may take
     */
    public RegisterWorkload(int keys, boolean unconditionalPuts, Duration checkBudget) {
        this.keys = IntStream.range(0, keys).mapToObj(i -> PREFIX + "k" + i).toList();
        this.connect = unconditionalPuts ? UnconditionalPuts::new : RegisterClient::of;
        this.checkBudget = checkBudget;
    }

    @Override
    public String name() {
        return RegisterChecker.WORKLOAD;
    }

    @Override
    public Worker newWorker() {
        return new Worker() {
            /** The index this process last saw for each item: what its next write is conditioned on. */
            private final Map<String, Long> lastSeen = new HashMap<>();

            @Override
            public void step(ClientProcess process) {
                Random random = process.random();
                RegisterClient client = connect.apply(process.client());
                String key = keys.get(random.nextInt(keys.size()));
                long known = lastSeen.getOrDefault(key, 0L);
                int roll = random.nextInt(10);
                if (roll < 4 || (roll == 9 && known == 0)) {
                    read(process, client, key).ifPresent(index -> lastSeen.put(key, index));
                } else if (roll == 9) {
                    write(process, "delete", key, input(known, null), () -> client.delete(key, known));
                } else {
                    long index = roll == 4 ? 0 : known;
                    LongNode value = LongNode.valueOf(values.incrementAndGet());
                    write(process, "put", key, input(index, value), () -> client.put(key, value, index));
                }
            }

            private void write(ClientProcess process, String f, String key, ObjectNode input,
                               Supplier<CompareExchangeResult> call) {
                Outcome<CompareExchangeResult> out = process.write(f, key, input, call, RegisterWorkload::output);
                if (out.ok()) {
                    lastSeen.put(key, out.value().index());
                }
            }
        };
    }

    @Override
    public void finalReads(ClientProcess reader) {
        RegisterClient client = connect.apply(reader.client());
        for (String key : keys) {
            for (int attempt = 0; attempt < 10 && read(reader, client, key).isEmpty(); attempt++) {
                Pause.briefly();
            }
        }
    }

    /** Reads one item; returns its index (0 when absent), or empty when the read got no answer. */
    private static Optional<Long> read(ClientProcess process, RegisterClient client, String key) {
        Outcome<Optional<Item>> out = process.read("read", key, History.object(), () -> client.get(key), item -> {
            ObjectNode o = History.object().put("index", item.map(Item::index).orElse(0L));
            item.ifPresent(i -> o.set("value", i.valueNode()));
            return o;
        });
        return out.ok() ? Optional.of(out.value().map(Item::index).orElse(0L)) : Optional.empty();
    }

    private static ObjectNode input(long index, JsonNode value) {
        ObjectNode o = History.object().put("index", index);
        if (value != null) {
            o.set("value", value);
        }
        return o;
    }

    /** A compare-exchange answer as the checkers read it. */
    static JsonNode output(CompareExchangeResult r) {
        ObjectNode o = History.object().put("successful", r.successful()).put("index", r.index());
        if (r.value() != null) {
            o.set("value", Json.parse(r.value()));
        }
        return o;
    }

    @Override
    public Checker checker() {
        return new RegisterChecker(checkBudget);
    }
}
