package io.ratchet.chaos.checker;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.chaos.history.History;
import io.ratchet.chaos.history.Op;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * A list-append history made by a simulated database that applies each transaction whole at the moment
 * it completes, so a strictly serializable one, with many processes' transactions overlapping, some
 * aborted, some failed and some with unknown outcomes (half of which apply). Keys are retired after a
 * number of appends, as the workload retires them, and every key is read at the end.
 *
 * <p>With {@code staleShare} above zero, that share of read-only transactions returns what the active keys
 * held some hundreds of steps earlier: a database that serves stale reads.
 */
final class GeneratedAppendHistory {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final int PROCESSES = 10;
    private static final int SLOTS = 8;
    private static final int APPENDS_PER_KEY = 32;

    private final Random random;
    private final double staleShare;
    private final History history = History.inMemory(() -> 0);
    private final Map<String, List<Long>> state = new HashMap<>();
    private final String[] active = new String[SLOTS];
    private final int[] appends = new int[SLOTS];
    private final int[] generation = new int[SLOTS];
    private final Set<String> used = new LinkedHashSet<>();
    private Map<String, List<Long>> snapshot = new HashMap<>();
    private long nextValue;
    private int nextProcess;

    private GeneratedAppendHistory(long seed, double staleShare) {
        this.random = new Random(seed);
        this.staleShare = staleShare;
        for (int i = 0; i < SLOTS; i++) {
            active[i] = key(i);
        }
    }

    /** {@code transactions} worker transactions and then the final reads. */
    static List<Op> of(int transactions, long seed, double staleShare) {
        return new GeneratedAppendHistory(seed, staleShare).run(transactions);
    }

    private String key(int slot) {
        String k = "append/k" + slot + "." + generation[slot];
        used.add(k);
        return k;
    }

    /** A planned micro-operation: a read, or an append (recorded after the read of the same key). */
    private record Planned(String key, Long append) {
    }

    private List<Op> run(int transactions) {
        String[] process = new String[PROCESSES];
        Op[] open = new Op[PROCESSES];
        List<List<Planned>> plans = new ArrayList<>();
        for (int p = 0; p < PROCESSES; p++) {
            process[p] = Integer.toString(nextProcess++);
            plans.add(null);
        }
        int invoked = 0;
        int step = 0;
        while (invoked < transactions || anyOpen(open)) {
            if (++step % 300 == 0) {
                snapshot = copyActive();
            }
            int p = random.nextInt(PROCESSES);
            if (open[p] == null) {
                if (invoked < transactions) {
                    List<Planned> plan = plan();
                    plans.set(p, plan);
                    open[p] = history.invoke(process[p], ListAppendChecker.WORKLOAD, AppendTxn.F, null, input(plan, false, null));
                    invoked++;
                }
                continue;
            }
            List<Planned> plan = plans.get(p);
            boolean readOnly = plan.stream().allMatch(m -> m.append() == null);
            int roll = random.nextInt(100);
            if (readOnly) {
                Map<String, List<Long>> from = random.nextDouble() < staleShare ? snapshot : state;
                history.ok(open[p], output(plan, true, from));
            } else if (roll < 88) {
                ObjectNode out = output(plan, true, state);
                apply(plan);
                history.ok(open[p], out);
            } else if (roll < 92) {
                history.ok(open[p], output(plan, false, state));
            } else if (roll < 96) {
                history.fail(open[p], "ClusterUnavailableException: nothing applied");
            } else {
                if (random.nextBoolean()) {
                    apply(plan);
                }
                history.info(open[p], "UnknownOutcomeException: no answer");
                process[p] = Integer.toString(nextProcess++);
            }
            open[p] = null;
        }
        List<String> keys = new ArrayList<>(used);
        for (int i = 0; i < keys.size(); i += 100) {
            List<Planned> plan = keys.subList(i, Math.min(keys.size(), i + 100)).stream().map(k -> new Planned(k, null)).toList();
            Op read = history.invoke("final", ListAppendChecker.WORKLOAD, AppendTxn.F, null, input(plan, false, null));
            history.ok(read, output(plan, true, state));
        }
        return history.ops();
    }

    private static boolean anyOpen(Op[] open) {
        for (Op op : open) {
            if (op != null) {
                return true;
            }
        }
        return false;
    }

    private Map<String, List<Long>> copyActive() {
        Map<String, List<Long>> copy = new HashMap<>();
        for (String k : active) {
            copy.put(k, List.copyOf(state.getOrDefault(k, List.of())));
        }
        return copy;
    }

    /** One to four distinct active keys, each read, or read and appended to. */
    private List<Planned> plan() {
        List<Planned> plan = new ArrayList<>();
        Set<Integer> slots = new LinkedHashSet<>();
        int n = 1 + random.nextInt(4);
        while (slots.size() < n) {
            slots.add(random.nextInt(SLOTS));
        }
        for (int slot : slots) {
            String k = active[slot];
            if (random.nextBoolean()) {
                plan.add(new Planned(k, ++nextValue));
                if (++appends[slot] == APPENDS_PER_KEY) {
                    appends[slot] = 0;
                    generation[slot]++;
                    active[slot] = key(slot);
                }
            } else {
                plan.add(new Planned(k, null));
            }
        }
        return plan;
    }

    private void apply(List<Planned> plan) {
        for (Planned m : plan) {
            if (m.append() != null) {
                state.computeIfAbsent(m.key(), k -> new ArrayList<>()).add(m.append());
            }
        }
    }

    private static ObjectNode input(List<Planned> plan, boolean answered, Map<String, List<Long>> from) {
        ObjectNode o = History.object();
        ArrayNode ops = o.putArray("ops");
        for (Planned m : plan) {
            ArrayNode read = ops.addArray().add("r").add(m.key());
            if (answered) {
                ArrayNode list = read.addArray();
                from.getOrDefault(m.key(), List.of()).forEach(list::add);
            } else {
                read.add(NODES.nullNode());
            }
            if (m.append() != null) {
                ops.addArray().add("append").add(m.key()).add(m.append());
            }
        }
        return o;
    }

    private static ObjectNode output(List<Planned> plan, boolean committed, Map<String, List<Long>> from) {
        ObjectNode o = input(plan, true, from);
        o.put("committed", committed);
        return o;
    }
}
