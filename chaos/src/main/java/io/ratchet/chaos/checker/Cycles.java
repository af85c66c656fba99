package io.ratchet.chaos.checker;

import io.ratchet.chaos.checker.DependencyGraph.Kind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Finds the cycles of a {@link DependencyGraph} and names each by the weakest isolation level it breaks,
 * after Adya: a cycle of write-write edges only is G0 (dirty write); with write-read edges but no
 * anti-dependency G1c (circular information flow); with exactly one read-write anti-dependency G-single
 * (read skew, lost update); with more G2-item (write skew). A cycle that needs a real-time edge breaks
 * only strict serializability, and its name says so ({@code G-single-realtime}).
 *
 * <p>How: the strongly connected components first (linear); only a component of two or more transactions
 * holds a cycle, and in a valid history there is none, so what follows costs nothing there. In each
 * component, for each class, the shortest cycle through a seed edge of that class, found breadth first
 * from the seed's head back to its tail, over the edges the class allows. Each component is searched
 * from a bounded number of seeds, and none once the deadline has passed: then the component is reported
 * as an unexplained cycle, which is still an anomaly.
 */
final class Cycles {
    /** Seeds tried per component and class: enough to find a short cycle, bounded in a huge component. */
    private static final int SEEDS = 16;
    private static final int DEPENDENCIES = Kind.mask(Kind.WW, Kind.WR, Kind.RW);

    /** One step of a cycle between two transactions (helper nodes of real-time order folded away). */
    record Step(int from, int to, Kind kind, String key, long value) {
    }

    /**
     * A cycle of transactions.
     *
     * @param type      its anomaly class, e.g. {@code G-single}; {@code cycle} when the deadline left it unexplained
     * @param steps     its edges in order, the last ending where the first begins; empty when unexplained
     * @param component the transactions of the strongly connected component it was found in
     */
    record Cycle(String type, List<Step> steps, int[] component) {
    }

    private final DependencyGraph graph;
    private final int transactions;
    private final long deadline;
    private boolean cut;

    /**
     * @param transactions nodes below this number are transactions; the rest are helpers
     * @param deadline     {@link System#nanoTime()} after which no more cycles are searched for
     */
    Cycles(DependencyGraph graph, int transactions, long deadline) {
        this.graph = graph;
        this.transactions = transactions;
        this.deadline = deadline;
    }

    /** Whether the deadline left some component unexplained. */
    boolean cut() {
        return cut;
    }

    /** The cycles of dependencies alone (no real-time edge): each breaks serializability. */
    List<Cycle> ofDependencies() {
        int[] componentOf = new int[graph.nodes()];
        List<int[]> components = graph.components(DEPENDENCIES, componentOf);
        List<Cycle> cycles = new ArrayList<>();
        if (components.isEmpty()) {
            return cycles;
        }
        cycles.addAll(weakest(Kind.mask(Kind.WW), Kind.WW));
        cycles.addAll(weakest(Kind.mask(Kind.WW, Kind.WR), Kind.WR));
        for (int c = 0; c < components.size(); c++) {
            int[] members = components.get(c);
            List<Integer> rw = graph.edgesWithin(members, Kind.RW.bit(), componentOf, c);
            // One anti-dependency closed by write-write and write-read edges: G-single. Else the shortest
            // cycle through an anti-dependency over all dependencies, which then has two or more: G2-item.
            Cycle found = shortest(rw, Kind.mask(Kind.WW, Kind.WR), componentOf, c, members);
            if (found == null) {
                found = shortest(rw, DEPENDENCIES, componentOf, c, members);
            }
            if (found == null && !rw.isEmpty()) {
                found = unexplained(members);
            }
            if (found != null) {
                cycles.add(found);
            }
        }
        return cycles;
    }

    /**
     * The cycles that need a real-time edge of kind {@code realTime} (with the dependencies): each breaks
     * strict serializability over the transactions that kind orders.
     */
    List<Cycle> withRealTime(Kind realTime) {
        int mask = DEPENDENCIES | realTime.bit();
        int[] componentOf = new int[graph.nodes()];
        List<int[]> components = graph.components(mask, componentOf);
        List<Cycle> cycles = new ArrayList<>();
        for (int c = 0; c < components.size(); c++) {
            int[] members = components.get(c);
            List<Integer> seeds = graph.edgesWithin(members, realTime.bit(), componentOf, c).stream()
                    .filter(e -> graph.from(e) < transactions).toList();
            if (seeds.isEmpty()) {
                continue; // dependencies alone: a cycle ofDependencies reports
            }
            Cycle found = shortest(seeds, mask, componentOf, c, members);
            cycles.add(found != null ? found : unexplained(members));
        }
        return cycles;
    }

    /**
     * One cycle per component of the edges in {@code mask} that holds an edge of kind {@code seed}: the
     * shortest through such an edge (G0 for write-write edges alone, G1c once write-read edges join).
     */
    private List<Cycle> weakest(int mask, Kind seed) {
        int[] componentOf = new int[graph.nodes()];
        List<int[]> components = graph.components(mask, componentOf);
        List<Cycle> cycles = new ArrayList<>();
        for (int c = 0; c < components.size(); c++) {
            int[] members = components.get(c);
            List<Integer> seeds = graph.edgesWithin(members, seed.bit(), componentOf, c);
            if (seeds.isEmpty()) {
                continue;
            }
            Cycle found = shortest(seeds, mask, componentOf, c, members);
            cycles.add(found != null ? found : unexplained(members));
        }
        return cycles;
    }

    /** The shortest cycle through one of (the first {@link #SEEDS} of) {@code seeds}, or null. */
    private Cycle shortest(List<Integer> seeds, int mask, int[] componentOf, int c, int[] members) {
        int[] best = null;
        for (int i = 0; i < Math.min(SEEDS, seeds.size()); i++) {
            if (System.nanoTime() > deadline) {
                cut = true;
                break;
            }
            int e = seeds.get(i);
            int[] back = graph.shortestPath(graph.to(e), graph.from(e), mask, componentOf, c);
            if (back != null && (best == null || back.length + 1 < best.length)) {
                best = new int[back.length + 1];
                best[0] = e;
                System.arraycopy(back, 0, best, 1, back.length);
            }
        }
        if (best == null) {
            return null;
        }
        List<Step> steps = fold(best);
        return new Cycle(classify(steps), steps, transactionsOf(members));
    }

    private Cycle unexplained(int[] members) {
        cut = true;
        return new Cycle("cycle", List.of(), transactionsOf(members));
    }

    private int[] transactionsOf(int[] members) {
        return Arrays.stream(members).filter(v -> v < transactions).toArray();
    }

    /** The cycle's edges as steps between transactions: a run through helper nodes is one real-time step. */
    private List<Step> fold(int[] edges) {
        int first = 0;
        while (graph.from(edges[first]) >= transactions) {
            first++;
        }
        List<Step> steps = new ArrayList<>();
        int n = edges.length;
        for (int i = 0; i < n; i++) {
            int e = edges[(first + i) % n];
            int a = graph.from(e);
            if (a >= transactions) {
                continue; // inside a run of helpers, folded into the step that entered it
            }
            int b = graph.to(e);
            int j = i;
            while (b >= transactions) {
                j++;
                b = graph.to(edges[(first + j) % n]);
            }
            steps.add(new Step(a, b, graph.kind(e), graph.key(e), graph.value(e)));
        }
        return steps;
    }

    /** Adya's name for a cycle of these steps. */
    static String classify(List<Step> steps) {
        long rw = steps.stream().filter(s -> s.kind() == Kind.RW).count();
        boolean wr = steps.stream().anyMatch(s -> s.kind() == Kind.WR);
        boolean rt = steps.stream().anyMatch(s -> s.kind().realTime());
        String base = rw == 0 ? (wr ? "G1c" : "G0") : rw == 1 ? "G-single" : "G2-item";
        return rt ? base + "-realtime" : base;
    }
}
