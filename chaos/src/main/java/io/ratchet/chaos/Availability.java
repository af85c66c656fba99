package io.ratchet.chaos;

import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.OpType;
import io.ratchet.chaos.nemesis.NemesisLoop;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * How long each fault stopped the clients: for every fault injected, the gap in answered writes (and
 * reads) around it, from the last one answered before the fault to the first answered after. An
 * answer counts whatever it said (a failed condition is an answer: the cluster served the call);
 * watches do not count, as they wait by design, nor do the final reads after the run.
 *
 * @param writeGapsMillis each fault's write gap, in the order of the faults
 * @param readGapsMillis  each fault's read gap
 */
record Availability(List<Long> writeGapsMillis, List<Long> readGapsMillis) {
    private static final Set<String> READS = Set.of("read", "holder", "list");
    private static final Set<String> NOT_COUNTED = Set.of("watch");

    static Availability of(List<Op> history) {
        List<Long> faults = new ArrayList<>();
        List<Long> writes = new ArrayList<>();
        List<Long> reads = new ArrayList<>();
        for (Op op : history) {
            if (NemesisLoop.PROCESS.equals(op.workload())) {
                if (op.type() == OpType.OK && "fault".equals(op.f())) {
                    faults.add(op.time());
                }
            } else if (op.type() == OpType.OK && !"final".equals(op.process()) && !NOT_COUNTED.contains(op.f())) {
                (READS.contains(op.f()) ? reads : writes).add(op.time());
            }
        }
        return new Availability(gaps(faults, writes), gaps(faults, reads));
    }

    /** Per fault: first answer after it minus last answer before it (times in history order, so sorted). */
    private static List<Long> gaps(List<Long> faults, List<Long> answers) {
        List<Long> gaps = new ArrayList<>();
        for (long fault : faults) {
            long before = -1;
            long after = -1;
            for (long t : answers) {
                if (t <= fault) {
                    before = t;
                } else {
                    after = t;
                    break;
                }
            }
            if (before >= 0 && after >= 0) {
                gaps.add((after - before) / 1_000_000);
            }
        }
        return gaps;
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
        return String.format(Locale.ROOT, "writes: median %s ms, worst %s ms %s; reads: median %s ms, worst %s ms %s",
                median(writeGapsMillis), worst(writeGapsMillis), writeGapsMillis,
                median(readGapsMillis), worst(readGapsMillis), readGapsMillis);
    }
}
