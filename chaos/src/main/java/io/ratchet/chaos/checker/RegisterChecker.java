package io.ratchet.chaos.checker;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.chaos.checker.LinearizabilityChecker.Entry;
import io.ratchet.chaos.checker.LinearizabilityChecker.Verdict;
import io.ratchet.chaos.checker.VersionedRegister.Call;
import io.ratchet.chaos.checker.VersionedRegister.Kind;
import io.ratchet.chaos.checker.VersionedRegister.State;
import io.ratchet.chaos.history.Operation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Checks the register workload: every item's reads, create-only puts, conditional puts and deletes must
 * be linearizable as a {@link VersionedRegister}.
 *
 * <p>History lines it reads ({@code key} is the item):
 * <ul>
 *   <li>{@code read}: output {@code {"index":i,"value":v}}, index 0 and no value when absent;</li>
 *   <li>{@code put}: input {@code {"index":expected,"value":v}}, output {@code {"successful":b,"index":i,"value":v}};</li>
 *   <li>{@code delete}: input {@code {"index":expected}}, output as for put.</li>
 * </ul>
 * Every put writes a value no other put writes, so a value seen anywhere names the write it came from.
 * That names the index of a put whose answer was lost, when its value was seen; a lost put whose value
 * nobody ever saw is dropped, since no later operation could have depended on it (a later write needs
 * its index, a read would show its value).
 */
public final class RegisterChecker implements Checker {
    public static final String WORKLOAD = "register";
    private static final Set<String> OPERATIONS = Set.of("read", "put", "delete");

    private final Duration budget;

    /** @param budget the most the linearizability search may take, over all keys */
    public RegisterChecker(Duration budget) {
        this.budget = budget;
    }

    @Override
    public String workload() {
        return WORKLOAD;
    }

    @Override
    public CheckResult checkOperations(List<Operation> operations) {
        Map<String, List<Operation>> byKey =
                Operation.byKey(operations, op -> !op.failed() && OPERATIONS.contains(op.f()));
        List<Anomaly> anomalies = new ArrayList<>();
        Map<String, List<Entry<Call>>> objects = new TreeMap<>();
        int unknown = 0;
        int dropped = 0;
        for (Map.Entry<String, List<Operation>> key : byKey.entrySet()) {
            Map<String, TreeSet<Long>> seenAt = observations(key.getKey(), key.getValue(), anomalies);
            List<Entry<Call>> entries = new ArrayList<>();
            for (Operation op : key.getValue()) {
                Call call = toCall(op, seenAt);
                if (op.unknown() && !"read".equals(op.f())) {
                    unknown++;
                    if (call == null) {
                        dropped++;
                    }
                }
                if (call != null) {
                    entries.add(new Entry<>(call, op.callIndex(), op.returnIndex()));
                }
            }
            objects.put(key.getKey(), entries);
        }

        LinearizabilityChecker<State, Call> search = new LinearizabilityChecker<>(new VersionedRegister());
        Map<String, Verdict<State, Call>> verdicts = search.check(objects, budget);
        Validity undecided = Validity.VALID;
        List<String> notes = new ArrayList<>();
        long explored = 0;
        Duration took = Duration.ZERO;
        for (Map.Entry<String, Verdict<State, Call>> v : verdicts.entrySet()) {
            Verdict<State, Call> verdict = v.getValue();
            explored += verdict.explored();
            took = took.plus(verdict.took());
            if (verdict.validity() == Validity.INVALID) {
                Call stuck = verdict.stuckAt();
                anomalies.add(new Anomaly(WORKLOAD, "not-linearizable", v.getKey(),
                        "no order of the " + verdict.operations() + " operations on this key fits a versioned register:"
                                + " after placing " + verdict.linearizedBefore() + " of them, " + stuck.label()
                                + " returned before it could take effect; the item was " + verdict.stateThere() + " there",
                        List.of(stuck.line())));
            } else if (verdict.validity() == Validity.UNKNOWN) {
                undecided = Validity.UNKNOWN;
                notes.add("key " + v.getKey() + ": undecided, the search budget ran out after "
                        + verdict.explored() + " steps over " + verdict.operations() + " operations");
            }
        }
        notes.add(0, objects.size() + " keys, " + objects.values().stream().mapToInt(List::size).sum()
                + " operations checked for linearizability (" + unknown + " writes without an answer, " + dropped
                + " of them never observed and so dropped); " + explored + " search steps in " + took.toMillis() + " ms");
        return CheckResult.of(WORKLOAD, anomalies, undecided, notes);
    }

    /**
     * Where each value was seen: reads, failed writes (which report the current item) and successful
     * puts. A value is written once, and whatever overwrites it moves the index, so seeing one value at
     * two indexes is itself an anomaly.
     */
    private static Map<String, TreeSet<Long>> observations(String key, List<Operation> ops, List<Anomaly> anomalies) {
        Map<String, TreeSet<Long>> seenAt = new TreeMap<>();
        Map<String, List<Long>> lines = new TreeMap<>();
        for (Operation op : ops) {
            if (!op.ok()) {
                continue;
            }
            JsonNode out = op.completion().output();
            long index = out.path("index").asLong();
            String value = out.hasNonNull("value") ? out.get("value").toString() : null;
            if ("put".equals(op.f()) && out.path("successful").asBoolean()) {
                String written = op.invoke().input().get("value").toString();
                if (!written.equals(value)) {
                    anomalies.add(new Anomaly(WORKLOAD, "wrong-echo", key, "a successful put of " + written
                            + " reported the value " + value, List.of(op.completion().index())));
                }
                value = written;
            }
            if (index > 0 && value != null) {
                seenAt.computeIfAbsent(value, v -> new TreeSet<>()).add(index);
                lines.computeIfAbsent(value, v -> new ArrayList<>()).add(op.completion().index());
            }
        }
        seenAt.forEach((value, indexes) -> {
            if (indexes.size() > 1) {
                anomalies.add(new Anomaly(WORKLOAD, "value-at-two-indexes", key, "the value " + value
                        + " (written once) was seen at indexes " + indexes, lines.get(value)));
            }
        });
        return seenAt;
    }

    /** The model's view of one read, put or delete, or null when it can be left out. */
    private static Call toCall(Operation op, Map<String, TreeSet<Long>> seenAt) {
        JsonNode in = op.invoke().input();
        long expected = in == null ? 0 : in.path("index").asLong();
        String label = op.describe();
        long line = op.callIndex();
        switch (op.f()) {
            case "read" -> {
                if (!op.ok()) {
                    return null; // a read without an answer changed nothing
                }
                JsonNode out = op.completion().output();
                return new Call(Kind.READ, 0, null, true, false, out.path("index").asLong(), text(out.get("value")), line, label);
            }
            default -> {
                Kind kind = "put".equals(op.f()) ? Kind.PUT : Kind.DELETE;
                String value = kind == Kind.PUT ? in.get("value").toString() : null;
                if (op.ok()) {
                    JsonNode out = op.completion().output();
                    boolean applied = out.path("successful").asBoolean();
                    return new Call(kind, expected, value, true, applied, out.path("index").asLong(),
                            applied ? null : text(out.get("value")), line, label);
                }
                if (kind == Kind.DELETE) {
                    return new Call(kind, expected, null, false, false, 0, null, line, label);
                }
                TreeSet<Long> seen = seenAt.get(value);
                return seen == null ? null : new Call(kind, expected, value, false, false, seen.first(), null, line, label);
            }
        }
    }

    private static String text(JsonNode value) {
        return value == null || value.isNull() ? null : value.toString();
    }
}
