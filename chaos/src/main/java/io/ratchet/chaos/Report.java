package io.ratchet.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.chaos.checker.Anomaly;
import io.ratchet.chaos.checker.CheckResult;
import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.OpType;
import io.ratchet.chaos.history.Operation;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** The readable account of a run, written beside the JSON summary: what ran, what broke, what was checked. */
final class Report {
    private final List<String> lines = new ArrayList<>();

    Report line(String text) {
        lines.add(text);
        return this;
    }

    Report field(String name, Object value) {
        return line(String.format(Locale.ROOT, "  %-12s %s", name, value));
    }

    Report blank() {
        return line("");
    }

    /** Operation counts per workload and operation, from the history's client lines. */
    Report operations(List<Op> history) {
        Map<String, int[]> counts = new TreeMap<>();
        List<Operation> operations;
        try {
            operations = Operation.pair(history.stream().filter(ChaosRun::isClientOp).toList());
        } catch (IllegalArgumentException e) {
            return line("  (operation counts unavailable: " + e.getMessage() + ")");
        }
        for (Operation op : operations) {
            int[] c = counts.computeIfAbsent(String.format(Locale.ROOT, "%-13s %-9s", op.invoke().workload(), op.f()), k -> new int[4]);
            if (op.ok()) {
                c[0]++;
                if (refused(op.completion().output())) {
                    c[1]++;
                }
            } else if (op.failed()) {
                c[2]++;
            } else {
                c[3]++;
            }
        }
        counts.forEach((what, c) -> line(String.format(Locale.ROOT, "  %s ok %5d%s   failed %4d   unknown %4d",
                what, c[0], c[1] == 0 ? "              " : String.format(Locale.ROOT, " (%5d refused)", c[1]), c[2], c[3])));
        return this;
    }

    /** A compare-exchange whose condition failed, a lock taken, a stale token, a transaction's conflict: an answer, but a no. */
    private static boolean refused(JsonNode output) {
        for (String field : List.of("successful", "granted", "accepted", "released", "committed")) {
            if (output != null && output.has(field) && !output.get(field).asBoolean()) {
                return true;
            }
        }
        return false;
    }

    Report checks(List<CheckResult> results) {
        for (CheckResult r : results) {
            line(String.format(Locale.ROOT, "  %-13s %-8s %s", r.workload(), r.validity().json(),
                    r.notes().isEmpty() ? "" : r.notes().get(0)));
            for (String note : r.notes().subList(Math.min(1, r.notes().size()), r.notes().size())) {
                line("                         " + note);
            }
        }
        return this;
    }

    Report anomalies(List<Anomaly> anomalies, List<Op> history) {
        if (anomalies.isEmpty()) {
            return line("Anomalies: none");
        }
        line("Anomalies: " + anomalies.size());
        for (Anomaly a : anomalies) {
            line("  - " + a);
            for (long index : a.ops()) {
                if (index >= 0 && index < history.size()) {
                    line("      " + history.get((int) index).describe());
                }
            }
        }
        return this;
    }

    static long count(List<Op> history, OpType type) {
        return history.stream().filter(ChaosRun::isClientOp).filter(op -> op.type() == type).count();
    }

    String text() {
        return String.join("\n", lines) + "\n";
    }
}
