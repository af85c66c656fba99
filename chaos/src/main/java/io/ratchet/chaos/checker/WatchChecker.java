package io.ratchet.chaos.checker;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.chaos.history.Operation;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Checks the watch workload: a watch whose window covers a change sees it, its answer agrees with
 * itself, and it ends by its timeout plus the client's slack.
 *
 * <p>History lines it reads ({@code key} is the watched or written key):
 * <ul>
 *   <li>{@code put}: input {@code {"index":expected,"value":v}}, output {@code {"successful":b,"index":i,"value":v}}
 *       (on a failed condition, the key's current index and value);</li>
 *   <li>{@code read}: output {@code {"index":i,"value":v}}, index 0 and no value when absent;</li>
 *   <li>{@code watch}: input {@code {"after":a,"timeoutMillis":t}}, output
 *       {@code {"changed":b,"lastChange":l,"index":i,"value":v}} ({@code index} the item's, 0 and no value when absent).</li>
 * </ul>
 *
 * <p>Per key, for every watch from {@code after = A}:
 * <ul>
 *   <li>{@code missed-change}: an operation that completed before the watch was invoked (by history
 *       index) saw the key at an index {@code K > A} (a successful put's own index, or the current index a
 *       failed put, a read or an earlier watch reported: all linearizable). The change was there before
 *       the watch was sent, so the watch must answer {@code changed} with {@code lastChange >= K}.</li>
 *   <li>{@code stale-answer}: likewise with {@code K <= A}: {@code lastChange} may not be below {@code K}.</li>
 *   <li>{@code invalid-answer}: {@code changed} with {@code lastChange <= A}, unchanged with
 *       {@code lastChange > A}, or an item whose index is not {@code lastChange} (the last change of a
 *       present item is its own put).</li>
 *   <li>{@code phantom-value}: the item in the answer holds a value that no put on the key invoked before
 *       the watch completed wrote, or that an acknowledged put wrote at another index.</li>
 *   <li>{@code overran}: any completed watch, answered or not, that took longer than its timeout plus
 *       {@link #WATCH_SLACK_MILLIS} plus {@link #TOLERANCE_MILLIS} on the harness' clock. A watch that
 *       never completed (the run ended) is left out.</li>
 * </ul>
 * Puts and reads that got no answer are not observations; a put without an answer may explain a value.
 */
public final class WatchChecker implements Checker {
    public static final String WORKLOAD = "watch";
    /** {@code RatchetClient.WATCH_SLACK}: how long past its timeout the client may take to end a watch. */
    public static final long WATCH_SLACK_MILLIS = 1_000;
    /** Room for a loaded 2-core machine to schedule the harness' own threads, beyond the promised slack. */
    public static final long TOLERANCE_MILLIS = 2_000;

    /** The highest index seen for a key so far, and the operation that saw it. */
    private record Seen(long index, Operation by) {
    }

    @Override
    public String workload() {
        return WORKLOAD;
    }

    @Override
    public CheckResult checkOperations(List<Operation> operations) {
        Map<String, List<Operation>> byKey =
                Operation.byKey(operations, op -> List.of("put", "read", "watch").contains(op.f()));
        List<Anomaly> anomalies = new ArrayList<>();
        Counts counts = new Counts();
        for (Map.Entry<String, List<Operation>> e : byKey.entrySet()) {
            checkKey(e.getKey(), e.getValue(), anomalies, counts);
        }
        List<String> notes = new ArrayList<>();
        notes.add(counts.watches + " watches on " + byKey.size() + " keys: " + counts.changed + " saw a change, "
                + counts.timedOut + " timed out, " + counts.failed + " failed, " + counts.open + " never completed; "
                + counts.puts + " puts acknowledged (" + counts.written + " applied)");
        notes.add(counts.owed + " watches had a change to report before they were sent"
                + (counts.longestPast == Long.MIN_VALUE ? "" : "; the longest watch ended " + counts.longestPast
                + " ms past its timeout (allowed " + (WATCH_SLACK_MILLIS + TOLERANCE_MILLIS) + ")"));
        return CheckResult.of(WORKLOAD, anomalies, Validity.VALID, notes);
    }

    private static final class Counts {
        int watches;
        int changed;
        int timedOut;
        int failed;
        int open;
        int owed;
        int puts;
        int written;
        long longestPast = Long.MIN_VALUE;
    }

    private static void checkKey(String key, List<Operation> ops, List<Anomaly> anomalies, Counts counts) {
        // What each operation knew before it was invoked: the highest index completed before it.
        record Event(long line, boolean completion, Operation op) {
        }
        List<Event> events = new ArrayList<>();
        Map<String, Operation> writers = new HashMap<>();
        for (Operation op : ops) {
            if ("watch".equals(op.f())) {
                events.add(new Event(op.callIndex(), false, op));
            }
            if (op.ok()) {
                events.add(new Event(op.completion().index(), true, op));
            }
            if ("put".equals(op.f())) {
                writers.put(text(op.invoke().input().get("value")), op);
                if (op.ok()) {
                    counts.puts++;
                    if (op.completion().output().path("successful").asBoolean()) {
                        counts.written++;
                    }
                }
            }
        }
        events.sort(Comparator.comparingLong(Event::line));
        Seen known = new Seen(0, null);
        for (Event event : events) {
            Operation op = event.op();
            if (event.completion()) {
                long index = observed(op);
                if (index > known.index()) {
                    known = new Seen(index, op);
                }
            } else {
                checkWatch(key, op, known, writers, anomalies, counts);
            }
        }
    }

    /** The key's index an answered operation saw: a put's result, a read's item, a watch's last change. */
    private static long observed(Operation op) {
        JsonNode out = op.completion().output();
        return "watch".equals(op.f()) ? out.path("lastChange").asLong() : out.path("index").asLong();
    }

    private static void checkWatch(String key, Operation watch, Seen known, Map<String, Operation> writers,
                                   List<Anomaly> anomalies, Counts counts) {
        counts.watches++;
        JsonNode in = watch.invoke().input();
        long after = in.path("after").asLong();
        long timeoutMillis = in.path("timeoutMillis").asLong();
        if (watch.completion() == null) {
            counts.open++;
            return;
        }
        long tookMillis = (watch.completion().time() - watch.invoke().time()) / 1_000_000;
        counts.longestPast = Math.max(counts.longestPast, tookMillis - timeoutMillis);
        if (tookMillis > timeoutMillis + WATCH_SLACK_MILLIS + TOLERANCE_MILLIS) {
            anomalies.add(new Anomaly(WORKLOAD, "overran", key, "a watch with a timeout of " + timeoutMillis
                    + " ms ended " + (watch.ok() ? "with an answer" : "without an answer") + " after " + tookMillis
                    + " ms, past its timeout plus the " + WATCH_SLACK_MILLIS + " ms slack (and " + TOLERANCE_MILLIS
                    + " ms tolerance)", List.of(watch.callIndex(), watch.completion().index())));
        }
        if (!watch.ok()) {
            counts.failed++;
            return;
        }
        JsonNode out = watch.completion().output();
        boolean changed = out.path("changed").asBoolean();
        long lastChange = out.path("lastChange").asLong();
        long itemIndex = out.path("index").asLong();
        if (changed) {
            counts.changed++;
        } else {
            counts.timedOut++;
        }
        List<Long> lines = List.of(watch.callIndex(), watch.completion().index());
        if (changed && lastChange <= after) {
            anomalies.add(new Anomaly(WORKLOAD, "invalid-answer", key, "a watch from index " + after
                    + " answered changed with the last change at " + lastChange + ", not after it", lines));
        } else if (!changed && lastChange > after) {
            anomalies.add(new Anomaly(WORKLOAD, "invalid-answer", key, "a watch from index " + after
                    + " answered unchanged with the last change at " + lastChange + ", after it", lines));
        }
        if (itemIndex > 0 && itemIndex != lastChange) {
            anomalies.add(new Anomaly(WORKLOAD, "invalid-answer", key, "a watch answered with the item at index "
                    + itemIndex + " but its last change at " + lastChange, lines));
        }
        if (known.index() > after) {
            counts.owed++;
        }
        if (known.by() != null && lastChange < known.index()) {
            List<Long> both = List.of(known.by().completion().index(), watch.callIndex(), watch.completion().index());
            if (known.index() > after) {
                anomalies.add(new Anomaly(WORKLOAD, "missed-change", key, known.by().f() + " saw the key at index "
                        + known.index() + " before a watch from index " + after + " was sent, but the watch answered "
                        + (changed ? "changed" : "unchanged") + " with the last change at " + lastChange, both));
            } else {
                anomalies.add(new Anomaly(WORKLOAD, "stale-answer", key, known.by().f() + " saw the key at index "
                        + known.index() + " before a watch from index " + after + " was sent, but the watch answered"
                        + " with the last change at " + lastChange + ", before it", both));
            }
        } else if (known.index() > after && !changed) {
            // lastChange >= K > A yet unchanged: already an invalid answer, and a missed change too.
            anomalies.add(new Anomaly(WORKLOAD, "missed-change", key, known.by().f() + " saw the key at index "
                    + known.index() + " before a watch from index " + after + " was sent, but the watch answered unchanged",
                    List.of(known.by().completion().index(), watch.callIndex(), watch.completion().index())));
        }
        if (itemIndex > 0) {
            checkValue(key, watch, text(out.get("value")), itemIndex, writers, anomalies);
        }
    }

    /**
     * The value a watch answered with must come from a put on the key that was invoked before the watch
     * completed and was applied (acknowledged as successful, at that very index) or may have been (no
     * answer).
     */
    private static void checkValue(String key, Operation watch, String value, long itemIndex, Map<String, Operation> writers,
                                   List<Anomaly> anomalies) {
        Operation writer = writers.get(value);
        List<Long> lines = List.of(watch.callIndex(), watch.completion().index());
        if (writer == null || writer.callIndex() > watch.completion().index()) {
            anomalies.add(new Anomaly(WORKLOAD, "phantom-value", key, "a watch answered with the value " + value
                    + " at index " + itemIndex + ", which no put on the key " + (writer == null ? "ever wrote" : "had asked for yet"),
                    lines));
            return;
        }
        List<Long> both = List.of(writer.callIndex(), watch.callIndex(), watch.completion().index());
        if (writer.failed()) {
            anomalies.add(new Anomaly(WORKLOAD, "phantom-value", key, "a watch answered with the value " + value
                    + ", which only a put that certainly failed asked to write", both));
        } else if (writer.ok()) {
            JsonNode result = writer.completion().output();
            if (!result.path("successful").asBoolean()) {
                anomalies.add(new Anomaly(WORKLOAD, "phantom-value", key, "a watch answered with the value " + value
                        + ", which only a put whose condition failed asked to write", both));
            } else if (result.path("index").asLong() != itemIndex) {
                anomalies.add(new Anomaly(WORKLOAD, "phantom-value", key, "a watch answered with the value " + value
                        + " at index " + itemIndex + ", which a put wrote at index " + result.path("index").asLong(), both));
            }
        }
    }

    private static String text(JsonNode value) {
        return value == null || value.isNull() ? null : value.toString();
    }
}
