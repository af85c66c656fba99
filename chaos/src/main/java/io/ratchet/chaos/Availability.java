package io.ratchet.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.chaos.checker.Anomaly;
import io.ratchet.chaos.checker.BankChecker;
import io.ratchet.chaos.checker.CheckResult;
import io.ratchet.chaos.checker.ListAppendChecker;
import io.ratchet.chaos.checker.Validity;
import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.OpType;
import io.ratchet.chaos.nemesis.NemesisLoop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How long each fault kept each workload from getting on: for every fault and every workload, the longest
 * that an operation of the workload waited for the workload's next successful write (and, apart, read),
 * from the fault until {@link #SETTLE} after its heal. docs/CHAOS.md ("Availability gaps") gives the
 * definition; in short:
 *
 * <ul>
 *   <li>A fault's window runs from when the nemesis began it (its invocation) to {@link #SETTLE} after its
 *   heal finished (after the change, for a membership change, which has no heal), cut short where the same
 *   nemesis begins its next fault.
 *   <li>Every write (read) of the workload invoked before the window ends and still without a success of
 *   the workload after its invocation when the window began waits from its invocation (or the window's
 *   start, if later) until the first write (read) of the workload, by any of its processes, that succeeded
 *   after that invocation, or until the same nemesis began its next fault, whose own gap the rest of the
 *   wait is. The gap is the longest such wait. Counting from the operations' invocations,
 *   not from the previous success, leaves out the time a workload was not trying (a sparse reader, the
 *   pause between a process' operations); counting until any process' success means one slow operation
 *   is not a gap while the others get through.
 *   <li>A success is an answer from the cluster: a failed condition is one (the cluster served the
 *   compare-exchange), but not an acquire that waited its turn ({@code wait_ms}) and came back without a
 *   grant (the client's own timer ran out, which a stalled cluster also causes; its queue join, when the
 *   output says when it was answered, {@code joined_us}, is a success at that moment), nor a grant given back as
 *   too late ({@code lost}), nor a bank transfer not applied (the ledger answers a transfer from an account
 *   to itself without asking the cluster). Failures and unknown outcomes never are. Watches wait by design
 *   and count neither way; nor do setup and the final reads.
 *   <li>With no success after it before the workload's processes stopped, a wait ends at the workload's
 *   last line and is marked open: the gap is at least that.
 * </ul>
 *
 * <p>Workloads that wait on purpose ({@code apart}: bank and append while they abandon transactions, whose
 * intents hold keys until their lease runs out) are measured and reported apart, and not held to
 * {@code --max-gap}.
 */
final class Availability {
    /** How long after a heal a stall still counts as the fault's: a restarted node catching up under load is a known one. */
    static final Duration SETTLE = Duration.ofSeconds(5);
    /** The check's name in the summary's {@code checks}, with {@code --max-gap}. */
    static final String CHECK = "availability";

    private static final Set<String> READS = Set.of("read", "holder", "list");
    private static final Set<String> NOT_COUNTED = Set.of("watch");
    private static final Set<String> NOT_WORKERS = Set.of("setup", "final");
    private static final Pattern NODE = Pattern.compile("\\bn\\d+\\b");

    /** Writes or reads. */
    enum Of {
        WRITE, READ;

        String json() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * One fault's window.
     *
     * @param line        the history line of the fault's completion (what the timeline names)
     * @param kind        {@code kill}, {@code pause}, {@code grow}, ... ({@code Fault#kind})
     * @param description what was done, naming the node
     * @param node        the first node the description names, or null
     * @param start       when the nemesis began it, nanoseconds into the history: the window's start
     * @param done        when it was done (what the report's timeline shows)
     * @param end         when the window ends: the heal plus {@link #SETTLE}, or the same nemesis' next fault
     * @param cut         when the same nemesis began its next fault, after which a wait is that fault's; or {@link Long#MAX_VALUE}
     */
    record Fault(long line, String kind, String description, String node, long start, long done, long end, long cut) {
        /** When it was done, as the timeline says it. */
        String at() {
            return String.format(Locale.ROOT, "%.2f s", done / 1e9);
        }
    }

    /**
     * One workload's longest wait in one fault's window.
     *
     * @param waiting the history line of the invocation that waited longest
     * @param ended   the line of the success that ended the wait; -1 when the wait ran into the same nemesis'
     *                next fault (the rest is that fault's) or no success came before the clients stopped
     * @param open    no success came before the workload's processes stopped: the gap is at least this
     * @param apart   the workload waits on purpose: reported apart, not held to {@code --max-gap}
     */
    record Gap(Fault fault, String workload, Of of, long nanos, long waiting, long ended, boolean open, boolean apart) {
        long millis() {
            return nanos / 1_000_000;
        }

        String describe() {
            String how = open ? " or more (no success before the clients stopped)" : ended < 0 ? " (until the next fault began)" : "";
            return String.format(Locale.ROOT, "%s %s %,d ms%s, %s at %s: %s (history lines %d, %d%s)", workload, of.json(),
                    millis(), how, fault.kind(), fault.at(), fault.description(), fault.line(), waiting, ended < 0 ? "" : " -> " + ended);
        }

        /** The history lines that show it: the fault, the invocation that waited, the success that ended the wait. */
        List<Long> lines() {
            return ended < 0 ? List.of(fault.line(), waiting) : List.of(fault.line(), waiting, ended);
        }
    }

    private final List<Fault> faults;
    private final List<Gap> gaps;
    private final Set<String> apart;

    private Availability(List<Fault> faults, List<Gap> gaps, Set<String> apart) {
        this.faults = List.copyOf(faults);
        this.gaps = List.copyOf(gaps);
        this.apart = Set.copyOf(apart);
    }

    /** The times (and lines) of one workload's attempts and successes of one kind, in history order. */
    private static final class Series {
        final List<long[]> attempts = new ArrayList<>();
        final List<long[]> successes = new ArrayList<>();
        long[] attemptTimes;
        long[] successTimes;

        void seal() {
            successes.sort(Comparator.comparingLong(s -> s[0])); // a join's answer comes before its acquire's end
            attemptTimes = attempts.stream().mapToLong(a -> a[0]).toArray();
            successTimes = successes.stream().mapToLong(s -> s[0]).toArray();
        }
    }

    private static final class Traffic {
        final Map<Of, Series> series = new EnumMap<>(Of.class);
        long last;

        Series of(Of of) {
            return series.computeIfAbsent(of, o -> new Series());
        }
    }

    /** A fault as the history tells it, until its window's end is known. */
    private static final class Pending {
        final long line;
        final String kind;
        final String description;
        final long start;
        final long done;
        long healed;
        long next = Long.MAX_VALUE;

        Pending(long line, String kind, String description, long start, long healed) {
            this.line = line;
            this.kind = kind;
            this.description = description;
            this.start = start;
            this.done = healed;
            this.healed = healed;
        }

        Fault fault() {
            Matcher node = NODE.matcher(description);
            return new Fault(line, kind, description, node.find() ? node.group() : null, start, done,
                    Math.min(healed + SETTLE.toNanos(), next), next);
        }
    }

    /**
     * Measures every fault's gaps in {@code history} (in history order, so in time order).
     *
     * @param apart the workloads that wait on purpose
     */
    static Availability of(List<Op> history, Set<String> apart) {
        Map<String, Op> injecting = new HashMap<>();
        Map<String, Pending> latest = new HashMap<>();
        List<Pending> pending = new ArrayList<>();
        Map<String, Traffic> traffic = new TreeMap<>();
        Map<String, Op> invoked = new HashMap<>();
        for (Op op : history) {
            if (NemesisLoop.PROCESS.equals(op.workload())) {
                if ("fault".equals(op.f()) && op.isInvoke()) {
                    injecting.put(op.process(), op);
                } else if ("fault".equals(op.f()) && op.type() == OpType.OK) {
                    Op invoke = injecting.remove(op.process());
                    long start = invoke == null ? op.time() : invoke.time();
                    Pending before = latest.get(op.process());
                    if (before != null) {
                        before.next = start;
                    }
                    JsonNode out = op.output();
                    Pending p = new Pending(op.index(), out == null ? "fault" : out.path("kind").asText("fault"),
                            out == null ? "" : out.path("fault").asText(""), start, op.time());
                    latest.put(op.process(), p);
                    pending.add(p);
                } else if ("heal".equals(op.f()) && !op.isInvoke() && latest.containsKey(op.process())) {
                    latest.get(op.process()).healed = op.time();
                }
                continue;
            }
            if (NOT_WORKERS.contains(op.process())) {
                continue;
            }
            Traffic t = traffic.computeIfAbsent(op.workload(), w -> new Traffic());
            t.last = Math.max(t.last, op.time());
            Of of = of(op);
            if (of == null) {
                continue;
            }
            if (op.isInvoke()) {
                t.of(of).attempts.add(new long[] {op.time(), op.index()});
                invoked.put(op.process(), op);
            } else if (succeeded(op)) {
                t.of(of).successes.add(new long[] {op.time(), op.index()});
            } else {
                long joined = joinAnswered(op, invoked.get(op.process()));
                if (joined != Long.MIN_VALUE) {
                    t.of(of).successes.add(new long[] {joined, op.index()});
                }
            }
        }
        traffic.values().forEach(t -> t.series.values().forEach(Series::seal));
        List<Fault> faults = pending.stream().map(Pending::fault).toList();
        List<Gap> gaps = new ArrayList<>();
        for (Fault f : faults) {
            traffic.forEach((workload, t) -> t.series.forEach((of, s) -> {
                Gap g = longestWait(f, workload, of, s, t.last, apart.contains(workload));
                if (g != null) {
                    gaps.add(g);
                }
            }));
        }
        return new Availability(faults, gaps, apart);
    }

    /** Writes or reads, or null for what counts neither way (watches). */
    private static Of of(Op op) {
        if (NOT_COUNTED.contains(op.f())) {
            return null;
        }
        if (READS.contains(op.f())) {
            return Of.READ;
        }
        if (ListAppendChecker.TXN.equals(op.f()) && op.input() != null) {
            for (JsonNode m : op.input().path("ops")) {
                if ("append".equals(m.path(0).asText())) {
                    return Of.WRITE;
                }
            }
            return Of.READ;
        }
        return Of.WRITE;
    }

    /** An answer that shows the cluster served the operation (the class comment says which do not). */
    static boolean succeeded(Op completion) {
        if (completion.type() != OpType.OK) {
            return false;
        }
        JsonNode out = completion.output();
        if (out == null) {
            return true;
        }
        if (out.path("lost").asBoolean(false)) {
            return false;
        }
        if ("acquire".equals(completion.f()) && !out.path("granted").asBoolean(true)
                && completion.input() != null && completion.input().has("wait_ms")) {
            return false;
        }
        return !("transfer".equals(completion.f()) && !out.path("applied").asBoolean(true));
    }

    /**
     * When the cluster answered the queue join of an acquire that waited its turn and came back without a
     * grant (its output's {@code joined_us} after its {@code invoke}), or {@link Long#MIN_VALUE} when it is
     * not such an acquire, says nothing of its join or its invocation is not known. The join is a write the
     * cluster served, and it is counted when it was answered, not when the wait ran out, which a stalled
     * cluster causes too.
     */
    static long joinAnswered(Op completion, Op invoke) {
        JsonNode out = completion.output();
        if (invoke == null || completion.type() != OpType.OK || out == null || !"acquire".equals(completion.f())
                || out.path("lost").asBoolean(false) || !out.has("joined_us")) {
            return Long.MIN_VALUE;
        }
        return invoke.time() + out.path("joined_us").asLong() * 1_000;
    }

    /** The longest wait in {@code f}'s window for one workload's writes or reads; null when none of them was under way in it. */
    private static Gap longestWait(Fault f, String workload, Of of, Series s, long last, boolean apart) {
        long[] attempts = s.attemptTimes;
        long[] successes = s.successTimes;
        // Attempts invoked before the last success at or before the window's start were served by then.
        int lastBefore = firstAfter(successes, f.start()) - 1;
        long from = lastBefore < 0 ? Long.MIN_VALUE : successes[lastBefore];
        long longest = -1;
        long waiting = -1;
        long ended = -1;
        boolean open = false;
        for (int a = firstAtOrAfter(attempts, from); a < attempts.length && attempts[a] <= f.end(); a++) {
            int next = firstAfter(successes, attempts[a]);
            long until = Math.min(next < successes.length ? successes[next] : last, f.cut());
            long wait = until - Math.max(attempts[a], f.start());
            if (wait > longest) {
                longest = wait;
                waiting = s.attempts.get(a)[1];
                ended = next < successes.length && successes[next] <= f.cut() ? s.successes.get(next)[1] : -1;
                open = next == successes.length && last <= f.cut();
            }
        }
        return longest < 0 ? null : new Gap(f, workload, of, longest, waiting, ended, open, apart);
    }

    private static int firstAfter(long[] sorted, long t) {
        int lo = 0;
        int hi = sorted.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (sorted[mid] <= t) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private static int firstAtOrAfter(long[] sorted, long t) {
        return t == Long.MIN_VALUE ? 0 : firstAfter(sorted, t - 1);
    }

    List<Fault> faults() {
        return faults;
    }

    /** Every gap, the workloads apart included, by fault in the order the faults were done. */
    List<Gap> gaps() {
        return gaps;
    }

    private List<Gap> held() {
        return gaps.stream().filter(g -> !g.apart()).toList();
    }

    /** The longest gap held to {@code --max-gap}, or null. */
    Gap worst() {
        return held().stream().max(Comparator.comparingLong(Gap::nanos)).orElse(null);
    }

    /** The gaps held to {@code --max-gap} that are longer than it. */
    List<Gap> over(Duration maxGap) {
        return held().stream().filter(g -> g.nanos() > maxGap.toNanos()).toList();
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

    private static List<Long> millis(List<Gap> gaps, Of of) {
        return gaps.stream().filter(g -> g.of() == of).map(Gap::millis).toList();
    }

    /** Faults by kind, in order of kind. */
    private Map<String, List<Fault>> faultsByKind() {
        Map<String, List<Fault>> byKind = new TreeMap<>();
        faults.forEach(f -> byKind.computeIfAbsent(f.kind(), k -> new ArrayList<>()).add(f));
        return byKind;
    }

    private static Map<String, List<Gap>> by(List<Gap> gaps, Function<Gap, String> key) {
        Map<String, List<Gap>> grouped = new TreeMap<>();
        gaps.forEach(g -> grouped.computeIfAbsent(key.apply(g), k -> new ArrayList<>()).add(g));
        return grouped;
    }

    /** The summary's {@code gaps}: by fault kind (workloads apart left out), by workload, the worst, and {@code --max-gap}'s verdict. */
    Map<String, Object> json(Duration maxGap) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("settle_ms", SETTLE.toMillis());
        Map<String, List<Gap>> held = by(held(), g -> g.fault().kind());
        Map<String, Object> byFault = new LinkedHashMap<>();
        faultsByKind().forEach((kind, fs) -> {
            Map<String, Object> k = new LinkedHashMap<>();
            k.put("faults", fs.size());
            List<Gap> gs = held.getOrDefault(kind, List.of());
            putFigures(k, gs);
            byFault.put(kind, k);
        });
        json.put("by_fault", byFault);
        Map<String, Object> byWorkload = new LinkedHashMap<>();
        by(gaps, Gap::workload).forEach((workload, gs) -> {
            Map<String, Object> w = new LinkedHashMap<>();
            putFigures(w, gs);
            if (apart.contains(workload)) {
                w.put("apart", true);
            }
            byWorkload.put(workload, w);
        });
        json.put("by_workload", byWorkload);
        Gap worst = worst();
        if (worst != null) {
            json.put("worst", gapJson(worst));
        }
        if (!apart.isEmpty()) {
            json.put("apart", new TreeSet<>(apart));
        }
        if (maxGap != null) {
            json.put("max_ms", maxGap.toMillis());
            json.put("over_max", over(maxGap).size());
        }
        return json;
    }

    private static void putFigures(Map<String, Object> into, List<Gap> gaps) {
        for (Of of : Of.values()) {
            List<Long> ms = millis(gaps, of);
            if (!ms.isEmpty()) {
                Map<String, Long> figures = new LinkedHashMap<>();
                figures.put("median", median(ms));
                figures.put("worst", worst(ms));
                into.put(of.json() + "_ms", figures);
            }
        }
    }

    private static Map<String, Object> gapJson(Gap g) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("of", g.of().json());
        json.put("ms", g.millis());
        json.put("workload", g.workload());
        json.put("fault", g.fault().kind());
        json.put("at_s", Math.round(g.fault().done() / 1e7) / 100.0);
        if (g.fault().node() != null) {
            json.put("node", g.fault().node());
        }
        if (g.open()) {
            json.put("open", true);
        }
        json.put("lines", g.lines());
        return json;
    }

    /** The report's section: a table by fault kind, one by workload, the worst gap, the workloads apart. */
    List<String> report(Duration maxGap) {
        List<String> lines = new ArrayList<>();
        lines.add("Availability: per fault and workload, the longest an operation waited for the workload's next");
        lines.add("successful write (read), from the fault until " + SETTLE.toSeconds() + " s after its heal (docs/CHAOS.md, \"Availability gaps\"):");
        lines.add(row("fault", "faults", "write median", "worst", "read median", "worst"));
        Map<String, List<Gap>> held = by(held(), g -> g.fault().kind());
        faultsByKind().forEach((kind, fs) -> lines.add(row(kind, Integer.toString(fs.size()), held.getOrDefault(kind, List.of()))));
        lines.add(row("workload", "", "write median", "worst", "read median", "worst"));
        by(gaps, Gap::workload).forEach((workload, gs) -> lines.add(row(workload + (apart.contains(workload) ? " *" : ""), "", gs)));
        Gap worst = worst();
        lines.add("  worst: " + (worst == null ? "none measured" : worst.describe()));
        if (!apart.isEmpty()) {
            lines.add("  * apart, not in the fault rows nor held to --max-gap: they abandon transactions on purpose (--abandon),");
            lines.add("    and a transaction that meets an abandoned one's intent waits for its lease; --abandon 0 holds them too");
        }
        if (maxGap != null) {
            List<Gap> over = over(maxGap);
            lines.add("  --max-gap " + maxGap.toMillis() + " ms: " + (over.isEmpty() ? "no gap longer" : over.size() + " gaps longer (anomalies)"));
        }
        return lines;
    }

    private static String row(String name, String faults, List<Gap> gaps) {
        List<Long> w = millis(gaps, Of.WRITE);
        List<Long> r = millis(gaps, Of.READ);
        return row(name, faults, ms(median(w)), ms(worst(w)), ms(median(r)), ms(worst(r)));
    }

    private static String row(String name, String faults, String wMedian, String wWorst, String rMedian, String rWorst) {
        return String.format(Locale.ROOT, "  %-15s %6s %13s %9s %12s %9s", name, faults, wMedian, wWorst, rMedian, rWorst);
    }

    private static String ms(Long millis) {
        return millis == null ? "-" : String.format(Locale.ROOT, "%,d ms", millis);
    }

    /**
     * {@code --max-gap}'s check: each gap held to it and longer is an anomaly of its workload ({@code gap-over-max}),
     * naming the fault, the operation that waited and the success that ended the wait.
     */
    CheckResult check(Duration maxGap) {
        List<Anomaly> anomalies = new ArrayList<>();
        for (Gap g : over(maxGap)) {
            anomalies.add(new Anomaly(g.workload(), "gap-over-max", null, String.format(Locale.ROOT,
                    "%s waited %,d ms%s for a successful %s, over --max-gap %,d ms, after %s at %s (%s)", g.workload(), g.millis(),
                    g.open() ? " or more" : "", g.of().json(), maxGap.toMillis(), g.fault().kind(), g.fault().at(),
                    g.fault().description()), g.lines()));
        }
        Gap worst = worst();
        String note = faults.isEmpty() ? "no faults: no gap to hold to --max-gap " + maxGap.toMillis() + " ms"
                : String.format(Locale.ROOT, "--max-gap %,d ms: %d faults, %d gaps held to it, the worst %s", maxGap.toMillis(),
                faults.size(), held().size(), worst == null ? "none" : String.format(Locale.ROOT, "%,d", worst.millis()) + " ms (" + worst.workload() + " "
                        + worst.of().json() + ", " + worst.fault().kind() + " at " + worst.fault().at() + ")");
        return CheckResult.of(CHECK, anomalies, Validity.VALID, List.of(note));
    }

    /** The workloads of {@code names} that wait on purpose in a run with {@code settings}: see {@link #of}. */
    static Set<String> apart(List<String> names, RunSettings settings) {
        Predicate<String> abandons = name -> settings.abandon() > 0 && settings.groups() > 1
                && (name.equals(BankChecker.WORKLOAD) || name.equals(ListAppendChecker.WORKLOAD));
        return new TreeSet<>(names.stream().filter(abandons).toList());
    }
}
