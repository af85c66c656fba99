package io.ratchet.chaos.checker;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.chaos.history.Operation;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Checks the reservations workload: create-only puts of unique owners on keys that are never deleted.
 * No key may ever have two acknowledged owners; every acknowledged reservation must be present, with
 * its owner and index, at the end; a key reserved at the end must have been reserved by an attempt that
 * was acknowledged or whose outcome is unknown; a refused attempt must name the key's real owner, and
 * cannot have been refused before that owner asked.
 *
 * <p>History lines it reads:
 * <ul>
 *   <li>{@code reserve}: key the item; input {@code {"owner":o}}; output {@code {"successful":b,"index":i,"value":owner}}
 *       (on a refusal, the current owner and index);</li>
 *   <li>{@code list} by process {@code final}: input {@code {"start":s,"page_size":n}}; output
 *       {@code {"items":[{"key":k,"value":owner,"index":i},...]}}; pages from start 0 until a short one.</li>
 * </ul>
 */
public final class ReservationChecker implements Checker {
    public static final String WORKLOAD = "reservations";

    /** The end state of one key: who holds it at which index. */
    private record Holder(String owner, long index) {
    }

    @Override
    public String workload() {
        return WORKLOAD;
    }

    @Override
    public CheckResult checkOperations(List<Operation> operations) {
        Map<String, Holder> finalState = finalState(operations);
        Map<String, List<Operation>> byKey =
                Operation.byKey(operations, op -> "reserve".equals(op.f()) && !op.failed());
        List<Anomaly> anomalies = new ArrayList<>();
        int acknowledged = 0;
        for (Map.Entry<String, List<Operation>> e : byKey.entrySet()) {
            acknowledged += checkKey(e.getKey(), e.getValue(), finalState, anomalies);
        }
        List<String> notes = new ArrayList<>();
        notes.add(byKey.size() + " keys contended, " + acknowledged + " acknowledged reservations"
                + (finalState == null ? "" : ", " + finalState.size() + " keys reserved at the end"));
        if (finalState == null) {
            notes.add("undecided: no complete final read of the reservations");
            return CheckResult.of(WORKLOAD, anomalies, Validity.UNKNOWN, notes);
        }
        for (String key : finalState.keySet()) {
            if (!byKey.containsKey(key)) {
                anomalies.add(new Anomaly(WORKLOAD, "phantom-reservation", key,
                        "reserved at the end by " + finalState.get(key).owner() + ", but nobody tried to reserve it", List.of()));
            }
        }
        return CheckResult.of(WORKLOAD, anomalies, Validity.VALID, notes);
    }

    /** Returns how many acknowledged reservations the key had. */
    private static int checkKey(String key, List<Operation> attempts, Map<String, Holder> finalState, List<Anomaly> anomalies) {
        List<Operation> granted = attempts.stream()
                .filter(op -> op.ok() && op.completion().output().path("successful").asBoolean()).toList();
        if (granted.size() > 1) {
            anomalies.add(new Anomaly(WORKLOAD, "double-reservation", key, granted.size()
                    + " create-only reservations were acknowledged: " + owners(granted), lines(granted)));
        }
        if (finalState == null) {
            return granted.size();
        }
        Holder end = finalState.get(key);
        if (granted.size() == 1) {
            Operation owner = granted.get(0);
            Holder acknowledged = new Holder(owner(owner), owner.completion().output().path("index").asLong());
            if (end == null) {
                anomalies.add(new Anomaly(WORKLOAD, "lost-reservation", key, "the acknowledged reservation by "
                        + acknowledged.owner() + " at index " + acknowledged.index() + " is gone at the end", lines(granted)));
            } else if (!end.equals(acknowledged)) {
                anomalies.add(new Anomaly(WORKLOAD, "reservation-changed", key, "acknowledged for " + acknowledged.owner()
                        + " at index " + acknowledged.index() + ", but held by " + end.owner() + " at index "
                        + end.index() + " at the end", lines(granted)));
            }
        } else if (granted.isEmpty() && end != null) {
            boolean mayHaveReserved = attempts.stream().anyMatch(op -> op.unknown() && owner(op).equals(end.owner()));
            if (!mayHaveReserved) {
                anomalies.add(new Anomaly(WORKLOAD, "phantom-reservation", key, "held by " + end.owner()
                        + " at the end, but no attempt by that owner was acknowledged or left unanswered", List.of()));
            }
        }
        Operation winner = attempts.stream().filter(op -> end != null && owner(op).equals(end.owner()))
                .min(Comparator.comparingLong(Operation::callIndex)).orElse(null);
        for (Operation refusal : attempts) {
            if (!refusal.ok() || refusal.completion().output().path("successful").asBoolean()) {
                continue;
            }
            JsonNode out = refusal.completion().output();
            Holder named = new Holder(out.path("value").asText(null), out.path("index").asLong());
            if (named.index() == 0) {
                anomalies.add(new Anomaly(WORKLOAD, "refused-while-free", key, "a create-only reservation by "
                        + owner(refusal) + " was refused although the key was absent", List.of(refusal.completion().index())));
            } else if (end == null) {
                anomalies.add(new Anomaly(WORKLOAD, "lost-reservation", key, "a refusal named " + named.owner()
                        + " at index " + named.index() + " as the owner, but the key is absent at the end",
                        List.of(refusal.completion().index())));
            } else if (!named.equals(end)) {
                anomalies.add(new Anomaly(WORKLOAD, "wrong-owner-reported", key, "a refusal named " + named.owner()
                        + " at index " + named.index() + ", but " + end.owner() + " at index " + end.index()
                        + " holds the key", List.of(refusal.completion().index())));
            } else if (winner != null && refusal.completion().index() < winner.callIndex()) {
                anomalies.add(new Anomaly(WORKLOAD, "refused-before-reserved", key, "refused in favour of " + end.owner()
                        + " before " + end.owner() + " had even asked", List.of(refusal.completion().index(), winner.callIndex())));
            }
        }
        return granted.size();
    }

    /** Every key reserved at the end, from the final list pages; null unless the pages cover the whole prefix. */
    private static Map<String, Holder> finalState(List<Operation> operations) {
        List<Operation> pages = operations.stream()
                .filter(op -> "list".equals(op.f()) && "final".equals(op.process()) && op.ok())
                .sorted(Comparator.comparingLong(op -> op.invoke().input().path("start").asLong()))
                .toList();
        Map<String, Holder> state = new TreeMap<>();
        Set<Long> starts = new HashSet<>();
        long next = 0;
        for (Operation page : pages) {
            long start = page.invoke().input().path("start").asLong();
            int size = page.invoke().input().path("page_size").asInt();
            if (!starts.add(start)) {
                continue;
            }
            if (start != next) {
                return null;
            }
            JsonNode items = page.completion().output().path("items");
            for (JsonNode item : items) {
                state.put(normal(item.path("key").asText()), new Holder(item.path("value").asText(), item.path("index").asLong()));
            }
            if (items.size() < size) {
                return state;
            }
            next = start + items.size();
        }
        return null;
    }

    private static String owner(Operation op) {
        return op.invoke().input().path("owner").asText();
    }

    private static String owners(List<Operation> ops) {
        return String.join(", ", ops.stream().map(op -> owner(op) + " at index "
                + op.completion().output().path("index").asLong()).toList());
    }

    private static List<Long> lines(List<Operation> ops) {
        return ops.stream().map(op -> op.completion().index()).toList();
    }

    private static String normal(String key) {
        return key.toLowerCase(Locale.ROOT);
    }
}
