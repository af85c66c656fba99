package io.ratchet.chaos.checker;

import io.ratchet.chaos.checker.AppendTxn.Append;
import io.ratchet.chaos.checker.AppendTxn.Mop;
import io.ratchet.chaos.checker.AppendTxn.Read;
import io.ratchet.chaos.checker.AppendTxn.Status;
import io.ratchet.chaos.checker.Cycles.Cycle;
import io.ratchet.chaos.checker.Cycles.Step;
import io.ratchet.chaos.checker.DependencyGraph.Kind;
import io.ratchet.chaos.history.Operation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Checks a list-append history for isolation anomalies, in the manner of Elle (Kingsbury and Alvaro,
 * "Elle: Inferring Isolation Anomalies from Experimental Observations"): keys hold lists, transactions
 * read whole lists and append values no other append writes, so every value read names the transaction
 * that wrote it, and every list read is a prefix of the key's version order.
 *
 * <p>What it reports, each anomaly with the transactions that form it:
 * <ul>
 *   <li>observations no serial history explains: a value nobody appended ({@code phantom-value}), one
 *       appended twice to a list ({@code duplicate-append}), a read of an aborted transaction's append
 *       ({@code G1a}) or of a version a transaction overwrote itself ({@code G1b}), a transaction that
 *       does not see its own appends ({@code internal}), two reads of a key neither of which is a prefix
 *       of the other ({@code incompatible-order}), and a committed append missing from the final read of
 *       its key ({@code lost-append});</li>
 *   <li>cycles of write-write, write-read and read-write dependencies between the transactions that took
 *       effect ({@code G0}, {@code G1c}, {@code G-single}, {@code G2-item}, see {@link Cycles}): each
 *       shows the history is not serializable;</li>
 *   <li>cycles that need real-time order between transactions of one group ({@code ...-realtime}): the
 *       history is serializable but not strictly so within a group, which docs/DESIGN.md promises (a
 *       group's transactions are entries of one log and its reads are linearizable).</li>
 * </ul>
 * Across groups docs/DESIGN.md promises serializability; a cycle that needs real-time order between
 * transactions of different groups is therefore no anomaly, but it caps the model the notes report:
 * {@value #STRICT} when no cycle exists even with real-time order between every two transactions,
 * {@value #STRICT_PER_GROUP} when only such cross-group ones do.
 *
 * <p>Transactions whose outcome is unknown are taken as Elle takes them: their appends may or may not
 * have happened. One whose append some read saw took effect, and then all of it did: it joins the graph
 * (with its appends, its reads being unknown), and each of its appends must be in the final reads. One
 * nobody saw is left out: nothing can have depended on it. An aborted transaction (a failed condition, or
 * a certain failure) took no effect, and its appends must never be seen.
 *
 * <p>Pure: transactions in, a verdict out. The cycle search stops at the budget's end; a cycle left
 * unexplained then is still reported, as {@code cycle}, with its transactions.
 */
public final class ListAppendChecker implements Checker {
    public static final String WORKLOAD = "append";
    /** The history's operation name for a transaction, a read-only one and a final read included. */
    public static final String TXN = "txn";
    static final String STRICT = "strict-serializable";
    static final String STRICT_PER_GROUP = "serializable+strict-per-group";
    static final String SERIALIZABLE = "serializable";
    static final String NONE = "none";
    /** Anomalies of one type listed in full; the rest are counted in the notes. */
    private static final int LISTED = 10;

    private final Duration budget;

    /** @param budget the most the cycle search may take */
    public ListAppendChecker(Duration budget) {
        this.budget = budget;
    }

    @Override
    public String workload() {
        return WORKLOAD;
    }

    @Override
    public CheckResult checkOperations(List<Operation> operations) {
        List<AppendTxn> txns;
        try {
            txns = AppendTxn.parse(operations);
        } catch (IllegalArgumentException e) {
            return new CheckResult(WORKLOAD, Validity.UNKNOWN, List.of(), List.of("malformed history: " + e.getMessage()));
        }
        return new Analysis(txns, System.nanoTime() + budget.toNanos()).run();
    }

    /** Who appended a value to a key: the transaction, and which of its appends to that key it was. */
    private record Writer(AppendTxn txn, int ordinal, int of) {
        boolean lastOfItsTxn() {
            return ordinal == of - 1;
        }
    }

    /** A read that answered: the transaction and its list. */
    private record Observation(AppendTxn txn, String key, List<Long> values) {
    }

    /** One check of one history. */
    private static final class Analysis {
        private final List<AppendTxn> txns;
        private final long deadline;
        private final List<Anomaly> anomalies = new ArrayList<>();
        private final List<String> notes = new ArrayList<>();
        private Validity undecided = Validity.VALID;
        /** Key, then value: who appended it. */
        private final Map<String, Map<Long, Writer>> writers = new HashMap<>();
        private final Map<String, List<Observation>> reads = new TreeMap<>();
        /** Each key's version order: its longest list read. */
        private final Map<String, List<Long>> orders = new HashMap<>();
        /** By identity: two reads of one list by one transaction are two observations. */
        private final Set<Observation> incompatible = Collections.newSetFromMap(new IdentityHashMap<>());
        /** Transactions whose outcome is unknown that some read saw take effect. */
        private final Set<AppendTxn> seen = Collections.newSetFromMap(new IdentityHashMap<>());

        Analysis(List<AppendTxn> txns, long deadline) {
            this.txns = txns;
            this.deadline = deadline;
        }

        CheckResult run() {
            indexWriters();
            for (AppendTxn t : txns) {
                internal(t);
                if (t.status() != Status.INDETERMINATE) {
                    for (Mop m : t.mops()) {
                        if (m instanceof Read r && r.values() != null) {
                            Observation o = new Observation(t, r.key(), r.values());
                            reads.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(o);
                            observe(o);
                        }
                    }
                }
            }
            versionOrders();
            List<AppendTxn> effective = txns.stream()
                    .filter(t -> t.status() == Status.COMMITTED || seen.contains(t)).toList();
            lostAppends(effective);
            boolean observed = !anomalies.isEmpty();
            String cycles = cycles(effective);
            // What a single read shows wrong (an aborted write seen, an append lost) no serial order explains either.
            String model = observed ? NONE : cycles;
            counts(model);
            return CheckResult.of(WORKLOAD, capped(), undecided, notes, details(model));
        }

        private void add(String type, String key, String detail, AppendTxn... involved) {
            TreeSet<Long> lines = new TreeSet<>();
            for (AppendTxn t : involved) {
                lines.add(t.line());
            }
            anomalies.add(new Anomaly(WORKLOAD, type, key, detail, List.copyOf(lines)));
        }

        /** Every append's writer; a value appended twice makes the history unfit for this check. */
        private void indexWriters() {
            for (AppendTxn t : txns) {
                Map<String, Integer> of = new HashMap<>();
                t.mops().forEach(m -> {
                    if (m instanceof Append a) {
                        of.merge(a.key(), 1, Integer::sum);
                    }
                });
                Map<String, Integer> ordinal = new HashMap<>();
                for (Mop m : t.mops()) {
                    if (m instanceof Append a) {
                        int i = ordinal.merge(a.key(), 1, Integer::sum) - 1;
                        Writer before = writers.computeIfAbsent(a.key(), k -> new HashMap<>())
                                .putIfAbsent(a.value(), new Writer(t, i, of.get(a.key())));
                        if (before != null) {
                            undecided = undecided.and(Validity.UNKNOWN);
                            notes.add("undecided: " + a.value() + " is appended to " + a.key() + " by " + before.txn().label()
                                    + " and " + t.label() + "; the check needs every appended value unique");
                        }
                    }
                }
            }
        }

        /** A transaction's own reads of a key after it appended to it must show those appends, in order. */
        private void internal(AppendTxn t) {
            Map<String, List<Long>> known = new HashMap<>();
            Map<String, List<Long>> appended = new HashMap<>();
            for (Mop m : t.mops()) {
                if (m instanceof Append a) {
                    List<Long> list = known.get(a.key());
                    if (list != null) {
                        list.add(a.value());
                    } else {
                        appended.computeIfAbsent(a.key(), k -> new ArrayList<>()).add(a.value());
                    }
                } else if (m instanceof Read r && r.values() != null) {
                    List<Long> expected = known.get(r.key());
                    List<Long> mine = appended.getOrDefault(r.key(), List.of());
                    boolean consistent = expected != null ? expected.equals(r.values())
                            : r.values().size() >= mine.size()
                            && r.values().subList(r.values().size() - mine.size(), r.values().size()).equals(mine);
                    if (!consistent) {
                        add("internal", r.key(), t.label() + " read " + r.values() + " where its own earlier reads and appends give "
                                + (expected != null ? expected : "a list ending in " + mine), t);
                    }
                    known.put(r.key(), new ArrayList<>(r.values()));
                    appended.remove(r.key());
                }
            }
        }

        /** What one read alone shows: a duplicate, a value nobody appended, an aborted or intermediate version. */
        private void observe(Observation o) {
            Map<Long, Writer> ofKey = writers.getOrDefault(o.key(), Map.of());
            Set<Long> distinct = new HashSet<>();
            for (long v : o.values()) {
                if (!distinct.add(v)) {
                    add("duplicate-append", o.key(), o.txn().label() + " read " + v + " twice in " + o.key() + ": " + o.values(), o.txn());
                }
                Writer w = ofKey.get(v);
                if (w == null) {
                    add("phantom-value", o.key(), o.txn().label() + " read " + v + " in " + o.key() + ", which no transaction appended"
                            + " to it: " + o.values(), o.txn());
                } else if (w.txn() != o.txn()) {
                    if (w.txn().status() == Status.ABORTED) {
                        add("G1a", o.key(), o.txn().label() + " read " + v + " in " + o.key() + ", appended by " + w.txn().label()
                                + ", which aborted", o.txn(), w.txn());
                    } else if (w.txn().status() == Status.INDETERMINATE) {
                        seen.add(w.txn());
                    }
                }
            }
            if (!o.values().isEmpty()) {
                Writer w = ofKey.get(o.values().get(o.values().size() - 1));
                if (w != null && w.txn() != o.txn() && !w.lastOfItsTxn()) {
                    add("G1b", o.key(), o.txn().label() + " read " + o.key() + " ending in " + o.values().get(o.values().size() - 1)
                            + ", an intermediate version: " + w.txn().label() + " appended more to it afterwards", o.txn(), w.txn());
                }
            }
        }

        /** Each key's longest list is its version order; every other read of it must be a prefix of that. */
        private void versionOrders() {
            for (Map.Entry<String, List<Observation>> e : reads.entrySet()) {
                Observation longest = e.getValue().get(0);
                for (Observation o : e.getValue()) {
                    if (o.values().size() > longest.values().size()) {
                        longest = o;
                    }
                }
                orders.put(e.getKey(), longest.values());
                for (Observation o : e.getValue()) {
                    if (!isPrefix(o.values(), longest.values())) {
                        incompatible.add(o);
                        add("incompatible-order", e.getKey(), o.txn().label() + " read " + o.values() + " and " + longest.txn().label()
                                + " read " + longest.values() + " of " + e.getKey() + ": neither is a prefix of the other,"
                                + " so no one order of its appends explains both", o.txn(), longest.txn());
                    }
                }
            }
        }

        private static boolean isPrefix(List<Long> prefix, List<Long> of) {
            return prefix.size() <= of.size() && of.subList(0, prefix.size()).equals(prefix);
        }

        /**
         * An append that took effect must be in the final read of its key: a committed one, and every append
         * of an unknown outcome some read saw (one seen means the whole transaction applied).
         */
        private void lostAppends(List<AppendTxn> effective) {
            Map<String, Observation> finals = new HashMap<>();
            for (List<Observation> ofKey : reads.values()) {
                for (Observation o : ofKey) {
                    if (o.txn().last() && o.txn().status() == Status.COMMITTED) {
                        finals.merge(o.key(), o, (a, b) -> b.txn().invoked() > a.txn().invoked() ? b : a);
                    }
                }
            }
            Set<String> unread = new TreeSet<>();
            for (AppendTxn t : effective) {
                for (Mop m : t.mops()) {
                    if (m instanceof Append a) {
                        Observation last = finals.get(a.key());
                        if (last == null) {
                            unread.add(a.key());
                        }
                        if (last != null && last.txn().invoked() > t.invoked() && !last.values().contains(a.value())) {
                            add("lost-append", a.key(), t.label() + (t.status() == Status.COMMITTED ? ", committed,"
                                    : ", whose outcome was unknown but which other reads saw take effect,") + " appended "
                                    + a.value() + " to " + a.key() + ", which the final read " + last.values() + " lacks", t, last.txn());
                        }
                    }
                }
            }
            if (!unread.isEmpty() && !finals.isEmpty()) {
                undecided = undecided.and(Validity.UNKNOWN);
                notes.add("undecided: " + unread.size() + " keys with appends that took effect have no final read, so their"
                        + " lost appends cannot be told: " + unread.stream().limit(5).toList());
            }
        }

        /**
         * Builds the dependency graph of the transactions that took effect, with real-time order as chains
         * of helper nodes, finds its cycles, and returns the strongest model the history supports.
         */
        private String cycles(List<AppendTxn> effective) {
            Map<AppendTxn, Integer> node = new IdentityHashMap<>();
            for (AppendTxn t : effective) {
                node.put(t, node.size());
            }
            DependencyGraph graph = new DependencyGraph(effective.size());
            dependencies(graph, node);
            Map<Integer, List<AppendTxn>> byGroup = new TreeMap<>();
            for (AppendTxn t : effective) {
                if (t.singleGroup()) {
                    byGroup.computeIfAbsent(t.group(), g -> new ArrayList<>()).add(t);
                }
            }
            byGroup.values().forEach(inGroup -> realTime(graph, node, inGroup, Kind.RT_GROUP));
            realTime(graph, node, effective, Kind.RT_ALL);

            Cycles search = new Cycles(graph, effective.size(), deadline);
            List<Cycle> serializability = search.ofDependencies();
            List<Cycle> perGroup = search.withRealTime(Kind.RT_GROUP);
            List<Cycle> strict = serializability.isEmpty() && perGroup.isEmpty() ? search.withRealTime(Kind.RT_ALL) : List.of();
            for (Cycle c : serializability) {
                report(c, effective, "not serializable");
            }
            for (Cycle c : perGroup) {
                report(c, effective, "not strictly serializable within a group");
            }
            if (!strict.isEmpty()) {
                notes.add(strict.size() + " cycles need real-time order between transactions of different groups, which"
                        + " docs/DESIGN.md does not promise (serializable across groups); the first: " + describe(strict.get(0), effective));
            }
            if (search.cut()) {
                notes.add("the check budget ran out while cycles were explained; unexplained ones are reported as 'cycle'");
            }
            return !serializability.isEmpty() ? NONE : !perGroup.isEmpty() ? SERIALIZABLE
                    : !strict.isEmpty() ? STRICT_PER_GROUP : STRICT;
        }

        /**
         * Write-write edges between consecutive versions of each key; write-read from the writer of the
         * version a read saw to the reader; read-write from the reader to the writer of the next version.
         * Reads that fit no version order, and versions whose writer did not take effect, give none.
         */
        private void dependencies(DependencyGraph graph, Map<AppendTxn, Integer> node) {
            for (Map.Entry<String, List<Long>> e : orders.entrySet()) {
                String key = e.getKey();
                List<Long> order = e.getValue();
                Map<Long, Writer> ofKey = writers.getOrDefault(key, Map.of());
                int[] writer = new int[order.size()];
                for (int i = 0; i < order.size(); i++) {
                    Writer w = ofKey.get(order.get(i));
                    Integer n = w == null ? null : node.get(w.txn());
                    writer[i] = n == null ? -1 : n;
                    if (i > 0 && writer[i - 1] >= 0 && writer[i] >= 0) {
                        graph.add(writer[i - 1], writer[i], Kind.WW, key, order.get(i));
                    }
                }
                for (Observation o : reads.getOrDefault(key, List.of())) {
                    Integer reader = node.get(o.txn());
                    if (reader == null || incompatible.contains(o)) {
                        continue;
                    }
                    int j = o.values().size();
                    if (j > 0 && writer[j - 1] >= 0) {
                        graph.add(writer[j - 1], reader, Kind.WR, key, order.get(j - 1));
                    }
                    if (j < order.size() && writer[j] >= 0) {
                        graph.add(reader, writer[j], Kind.RW, key, order.get(j));
                    }
                }
            }
        }

        /**
         * Real-time order among {@code scope}: a ended before b began. Each two such would be an edge, too
         * many; instead a chain of helper nodes, one per completion in history order: a transaction points at
         * its completion's node, each node at the next, and each node at the transactions invoked after it and
         * before the next completion. So a reaches b exactly when a ended before b began, with a few edges a
         * transaction. A transaction whose outcome is unknown never ended.
         */
        private static void realTime(DependencyGraph graph, Map<AppendTxn, Integer> node, List<AppendTxn> scope, Kind kind) {
            List<AppendTxn> ended = scope.stream().filter(t -> t.completed() != Long.MAX_VALUE)
                    .sorted((a, b) -> Long.compare(a.completed(), b.completed())).toList();
            if (ended.isEmpty()) {
                return;
            }
            long[] at = new long[ended.size()];
            int first = graph.addNodes(ended.size());
            for (int i = 0; i < ended.size(); i++) {
                at[i] = ended.get(i).completed();
                graph.add(node.get(ended.get(i)), first + i, kind, null, 0);
                if (i > 0) {
                    graph.add(first + i - 1, first + i, kind, null, 0);
                }
            }
            for (AppendTxn t : scope) {
                int before = Arrays.binarySearch(at, t.invoked());
                // Not found (an index is one line): -(insertion point) - 1; the completion just before it.
                int i = (before >= 0 ? before : -before - 1) - 1;
                if (i >= 0) {
                    graph.add(first + i, node.get(t), kind, null, 0);
                }
            }
        }

        private void report(Cycle c, List<AppendTxn> effective, String meaning) {
            AppendTxn[] involved = c.steps().isEmpty()
                    ? Arrays.stream(c.component()).limit(LISTED).mapToObj(effective::get).toArray(AppendTxn[]::new)
                    : c.steps().stream().map(s -> effective.get(s.from())).toArray(AppendTxn[]::new);
            add(c.type(), null, meaning + ": " + describe(c, effective), involved);
        }

        private static String describe(Cycle c, List<AppendTxn> effective) {
            if (c.steps().isEmpty()) {
                return "a cycle among " + c.component().length + " transactions, left unexplained when the check budget ran out";
            }
            StringBuilder s = new StringBuilder();
            for (Step step : c.steps()) {
                String a = effective.get(step.from()).label();
                String b = effective.get(step.to()).label();
                if (s.length() > 0) {
                    s.append("; ");
                }
                s.append(switch (step.kind()) {
                    case WW -> b + " appended " + step.value() + " to " + step.key() + " after " + a + "'s append (ww)";
                    case WR -> b + " read " + a + "'s append of " + step.value() + " to " + step.key() + " (wr)";
                    case RW -> a + " read " + step.key() + " without " + b + "'s append of " + step.value() + ", the next (rw)";
                    case RT_GROUP, RT_ALL -> a + " ended before " + b + " began (rt)";
                });
            }
            return s.toString();
        }

        /** The anomalies, at most {@link #LISTED} of each type; how many more there were goes to the notes. */
        private List<Anomaly> capped() {
            Map<String, Integer> count = new LinkedHashMap<>();
            List<Anomaly> listed = new ArrayList<>();
            for (Anomaly a : anomalies) {
                if (count.merge(a.type(), 1, Integer::sum) <= LISTED) {
                    listed.add(a);
                }
            }
            if (!anomalies.isEmpty()) {
                notes.add("anomalies by type: " + count);
            }
            return listed;
        }

        private void counts(String model) {
            List<AppendTxn> worker = txns.stream().filter(t -> !t.last()).toList();
            long committed = worker.stream().filter(t -> t.status() == Status.COMMITTED).count();
            long aborted = worker.stream().filter(t -> t.status() == Status.ABORTED).count();
            long unknown = worker.stream().filter(t -> t.status() == Status.INDETERMINATE).count();
            long crossGroup = worker.stream().filter(t -> !t.singleGroup()).count();
            long readOnly = worker.stream().filter(AppendTxn::readOnly).count();
            long finals = txns.size() - worker.size();
            notes.add(0, String.format(Locale.ROOT, "%d transactions (%d committed, %d aborted, %d unknown of which %d seen to"
                            + " take effect; %d read-only, %d across groups), %d final reads, %d keys; model: %s",
                    worker.size(), committed, aborted, unknown, seen.size(), readOnly, crossGroup, finals, orders.size(), model));
            if (finals == 0) {
                undecided = undecided.and(Validity.UNKNOWN);
                notes.add("undecided: no final read, so lost appends cannot be told");
            }
        }

        private Map<String, Object> details(String model) {
            List<AppendTxn> worker = txns.stream().filter(t -> !t.last()).toList();
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("transactions", worker.size());
            d.put("committed", worker.stream().filter(t -> t.status() == Status.COMMITTED).count());
            d.put("aborted", worker.stream().filter(t -> t.status() == Status.ABORTED).count());
            d.put("unknown", worker.stream().filter(t -> t.status() == Status.INDETERMINATE).count());
            d.put("unknown_applied", seen.size());
            d.put("read_only", worker.stream().filter(AppendTxn::readOnly).count());
            d.put("cross_group", worker.stream().filter(t -> !t.singleGroup()).count());
            d.put("model", model);
            return d;
        }
    }
}
