package io.ratchet.chaos.history;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * An invocation with its completion. The completion is null when none was recorded (the run ended, or
 * the harness gave up waiting): like an {@code info} one, the operation may or may not have taken effect.
 */
public record Operation(Op invoke, Op completion) {

    /** It got an answer. */
    public boolean ok() {
        return completion != null && completion.type() == OpType.OK;
    }

    /** It certainly had no effect. */
    public boolean failed() {
        return completion != null && completion.type() == OpType.FAIL;
    }

    /** No answer: it may or may not have taken effect, at any time after its invocation. */
    public boolean unknown() {
        return completion == null || completion.type() == OpType.INFO;
    }

    public String process() {
        return invoke.process();
    }

    public String f() {
        return invoke.f();
    }

    public String key() {
        return invoke.key();
    }

    /** Where the operation starts in the history's real-time order. */
    public long callIndex() {
        return invoke.index();
    }

    /** Where it ends; {@link Long#MAX_VALUE} when its outcome is unknown (it may take effect any time later). */
    public long returnIndex() {
        return unknown() ? Long.MAX_VALUE : completion.index();
    }

    public String describe() {
        return completion == null ? invoke.describe() + " (never completed)" : completion.describe();
    }

    /**
     * The operations {@code which} picks that name a key, grouped by key with case folded (keys are
     * case-insensitive), keys in order and each key's operations in the order given.
     */
    public static SortedMap<String, List<Operation>> byKey(List<Operation> operations, Predicate<Operation> which) {
        SortedMap<String, List<Operation>> byKey = new TreeMap<>();
        for (Operation op : operations) {
            if (op.key() != null && which.test(op)) {
                byKey.computeIfAbsent(op.key().toLowerCase(Locale.ROOT), k -> new ArrayList<>()).add(op);
            }
        }
        return byKey;
    }

    /**
     * Pairs each invocation with its process' next completion, in invocation order.
     *
     * @throws IllegalArgumentException when a process invokes twice without completing, or completes
     *                                  what it never invoked: the history is malformed, not the cluster
     */
    public static List<Operation> pair(List<Op> ops) {
        Map<String, Integer> open = new HashMap<>();
        List<Op> invokes = new ArrayList<>();
        List<Op> completions = new ArrayList<>();
        for (Op op : ops) {
            if (op.isInvoke()) {
                if (open.containsKey(op.process())) {
                    throw new IllegalArgumentException("process " + op.process() + " invoked " + op.describe()
                            + " while " + invokes.get(open.get(op.process())).describe() + " was open");
                }
                open.put(op.process(), invokes.size());
                invokes.add(op);
                completions.add(null);
            } else {
                Integer at = open.remove(op.process());
                if (at == null) {
                    throw new IllegalArgumentException("completion without an invocation: " + op.describe());
                }
                completions.set(at, op);
            }
        }
        List<Operation> pairs = new ArrayList<>(invokes.size());
        for (int i = 0; i < invokes.size(); i++) {
            pairs.add(new Operation(invokes.get(i), completions.get(i)));
        }
        return pairs;
    }
}
