package io.ratchet.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.chaos.checker.ListAppendChecker;
import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.OpType;
import io.ratchet.chaos.nemesis.NemesisLoop;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * How long each fault stopped the clients: for every fault injected, the longest gap in answered writes
 * (and reads) while it was being injected, counted from the last answer before it began. A kill takes a
 * moment, so its gap runs from the last answer before it to the first after; a membership change takes
 * seconds (a node starts, catches up, the configuration commits), and its gap is the longest wait for an
 * answer from its start to its end. An answer counts whatever it said (a failed condition is an answer:
 * the cluster served the call); watches do not count, as they wait by design, nor do the final reads
 * after the run.
 *
 * @param faults each fault's gaps, in the order the faults were done
 */
record Availability(List<FaultGap> faults) {
    private static final Set<String> READS = Set.of("read", "holder", "list");
    private static final Set<String> NOT_COUNTED = Set.of("watch");

    /**
     * One fault's gaps.
     *
     * @param kind        the fault's kind ({@code kill}, {@code grow}, ...)
     * @param writeMillis the longest gap in answered writes, null when no answer came before or after it
     * @param readMillis  likewise for reads
     */
    record FaultGap(String kind, Long writeMillis, Long readMillis) {
    }

    private record Window(long start, long end, String kind) {
    }

    static Availability of(List<Op> history) {
        List<Window> windows = new ArrayList<>();
        Map<String, Op> injecting = new HashMap<>();
        List<Long> writes = new ArrayList<>();
        List<Long> reads = new ArrayList<>();
        for (Op op : history) {
            if (NemesisLoop.PROCESS.equals(op.workload())) {
                if (!"fault".equals(op.f())) {
                    continue;
                }
                if (op.isInvoke()) {
                    injecting.put(op.process(), op);
                } else {
                    Op invoke = injecting.remove(op.process());
                    if (op.type() == OpType.OK) {
                        String kind = op.output() == null ? "fault" : op.output().path("kind").asText("fault");
                        windows.add(new Window(invoke == null ? op.time() : invoke.time(), op.time(), kind));
                    }
                }
            } else if (op.type() == OpType.OK && !"final".equals(op.process()) && !NOT_COUNTED.contains(op.f())) {
                (isRead(op) ? reads : writes).add(op.time());
            }
        }
        List<FaultGap> gaps = new ArrayList<>();
        for (Window w : windows) {
            gaps.add(new FaultGap(w.kind(), gap(w, writes), gap(w, reads)));
        }
        return new Availability(gaps);
    }

    /** A read, or a transaction that only reads (the append workload's {@code getAll}). */
    private static boolean isRead(Op op) {
        if (READS.contains(op.f())) {
            return true;
        }
        if (!ListAppendChecker.TXN.equals(op.f()) || op.input() == null) {
            return false;
        }
        for (JsonNode m : op.input().path("ops")) {
            if ("append".equals(m.path(0).asText())) {
                return false;
            }
        }
        return true;
    }

    /**
     * The longest time between two consecutive answers, from the last one at or before the window's start
     * to the first one after its end; null without an answer on both sides (times are in history order,
     * so sorted).
     */
    private static Long gap(Window w, List<Long> answers) {
        int i = 0;
        while (i + 1 < answers.size() && answers.get(i + 1) <= w.start()) {
            i++;
        }
        if (answers.isEmpty() || answers.get(i) > w.start()) {
            return null;
        }
        long longest = -1;
        for (; i + 1 < answers.size() && answers.get(i) <= w.end(); i++) {
            longest = Math.max(longest, answers.get(i + 1) - answers.get(i));
        }
        return longest < 0 ? null : longest / 1_000_000;
    }

    /** Each fault's write gap, in the order of the faults (faults without one left out). */
    List<Long> writeGapsMillis() {
        return faults.stream().map(FaultGap::writeMillis).filter(Objects::nonNull).toList();
    }

    List<Long> readGapsMillis() {
        return faults.stream().map(FaultGap::readMillis).filter(Objects::nonNull).toList();
    }

    static Long median(List<Long> values) {
        if (values.isEmpty()) {
            return null;
        }
        List<Long> sorted = values.stream().sorted().toList();
        return sorted.get((sorted.size() - 1) / 2);
    }

    static Long worst(List<Long> values) {
        return values.stream().max(Long::compare).orElse(null);
    }

    String describe() {
        List<Long> w = writeGapsMillis();
        List<Long> r = readGapsMillis();
        String all = String.format(Locale.ROOT, "writes: median %s ms, worst %s ms %s; reads: median %s ms, worst %s ms %s",
                median(w), worst(w), w, median(r), worst(r), r);
        Map<String, List<Long>> byKind = new TreeMap<>();
        faults.stream().filter(f -> f.writeMillis() != null)
                .forEach(f -> byKind.computeIfAbsent(f.kind(), k -> new ArrayList<>()).add(f.writeMillis()));
        if (byKind.size() < 2) {
            return all;
        }
        StringBuilder s = new StringBuilder(all).append("; writes by kind:");
        byKind.forEach((kind, gaps) -> s.append(String.format(Locale.ROOT, " %s median %s ms, worst %s ms %s;",
                kind, median(gaps), worst(gaps), gaps)));
        return s.substring(0, s.length() - 1);
    }
}
