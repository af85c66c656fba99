package io.ratchet.chaos.checker;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A directed graph over transactions whose edges are dependencies between them: each edge has a
 * {@link Kind} and the key and value that made it. Nodes are numbered from 0; besides the transactions a
 * graph may hold helper nodes (real-time order is a chain of them, see {@link ListAppendChecker}). Edges are
 * added first; the first query freezes the graph into arrays (compressed rows), so that a graph of
 * hundreds of thousands of edges is searched without an object per edge.
 *
 * <p>Every query takes a mask of the kinds of edge it may follow ({@link Kind#bit}), so one graph answers
 * for the dependencies alone and for them with real-time order.
 */
final class DependencyGraph {
    /** What makes an edge {@code a -> b}. */
    enum Kind {
        /** b appended the version after a's to a key. */
        WW("ww"),
        /** b read the version a appended. */
        WR("wr"),
        /** a read a version of a key and b appended the next one: an anti-dependency. */
        RW("rw"),
        /** a ended before b began, and the model orders them so (within a group). */
        RT_GROUP("rt"),
        /** a ended before b began (any transactions). */
        RT_ALL("rt");

        final String label;

        Kind(String label) {
            this.label = label;
        }

        int bit() {
            return 1 << ordinal();
        }

        boolean realTime() {
            return this == RT_GROUP || this == RT_ALL;
        }

        static int mask(Kind... kinds) {
            int m = 0;
            for (Kind k : kinds) {
                m |= k.bit();
            }
            return m;
        }
    }

    private static final Kind[] KINDS = Kind.values();

    private int nodes;
    private int edges;
    private int[] from = new int[1024];
    private int[] to = new int[1024];
    private byte[] kind = new byte[1024];
    private String[] key = new String[1024];
    private long[] value = new long[1024];
    /** Frozen: node v's edges are {@code adjacency[start[v] .. start[v+1])}. */
    private int[] start;
    private int[] adjacency;
    /** Breadth-first search state, reused: a node is seen in the current search when {@code seen[v] == search}. */
    private int[] seen;
    private int[] via;
    private int search;

    DependencyGraph(int nodes) {
        this.nodes = nodes;
    }

    int nodes() {
        return nodes;
    }

    /** Adds {@code n} helper nodes; returns the first one's number. */
    int addNodes(int n) {
        requireOpen();
        int first = nodes;
        nodes += n;
        return first;
    }

    /** Adds {@code a -> b}; a loop ({@code a == b}) says nothing about order and is dropped. */
    void add(int a, int b, Kind k, String onKey, long withValue) {
        requireOpen();
        if (a == b) {
            return;
        }
        if (edges == from.length) {
            int n = edges * 2;
            from = Arrays.copyOf(from, n);
            to = Arrays.copyOf(to, n);
            kind = Arrays.copyOf(kind, n);
            key = Arrays.copyOf(key, n);
            value = Arrays.copyOf(value, n);
        }
        from[edges] = a;
        to[edges] = b;
        kind[edges] = (byte) k.ordinal();
        key[edges] = onKey;
        value[edges] = withValue;
        edges++;
    }

    int from(int edge) {
        return from[edge];
    }

    int to(int edge) {
        return to[edge];
    }

    Kind kind(int edge) {
        return KINDS[kind[edge]];
    }

    String key(int edge) {
        return key[edge];
    }

    long value(int edge) {
        return value[edge];
    }

    private void requireOpen() {
        if (start != null) {
            throw new IllegalStateException("the graph was searched already; add every node and edge first");
        }
    }

    private void freeze() {
        if (start != null) {
            return;
        }
        start = new int[nodes + 1];
        for (int e = 0; e < edges; e++) {
            start[from[e] + 1]++;
        }
        for (int v = 0; v < nodes; v++) {
            start[v + 1] += start[v];
        }
        adjacency = new int[edges];
        int[] next = Arrays.copyOf(start, nodes);
        for (int e = 0; e < edges; e++) {
            adjacency[next[from[e]]++] = e;
        }
        seen = new int[nodes];
        via = new int[nodes];
    }

    /**
     * The strongly connected components of more than one node, over edges of the kinds in {@code mask}
     * (Tarjan's algorithm, iterative so that a long chain cannot overflow the stack). {@code componentOf}
     * receives each node's component number, -1 for a node in no such component.
     */
    List<int[]> components(int mask, int[] componentOf) {
        freeze();
        int[] index = new int[nodes];
        int[] low = new int[nodes];
        Arrays.fill(index, -1);
        Arrays.fill(componentOf, -1);
        boolean[] onStack = new boolean[nodes];
        int[] stack = new int[nodes];
        int top = 0;
        int[] callNode = new int[nodes];
        int[] callNext = new int[nodes];
        int calls = 0;
        int counter = 0;
        List<int[]> components = new ArrayList<>();
        for (int root = 0; root < nodes; root++) {
            if (index[root] != -1) {
                continue;
            }
            index[root] = low[root] = counter++;
            stack[top++] = root;
            onStack[root] = true;
            callNode[calls] = root;
            callNext[calls++] = start[root];
            while (calls > 0) {
                int v = callNode[calls - 1];
                int p = callNext[calls - 1];
                if (p < start[v + 1]) {
                    callNext[calls - 1] = p + 1;
                    int e = adjacency[p];
                    if ((mask & (1 << kind[e])) == 0) {
                        continue;
                    }
                    int w = to[e];
                    if (index[w] == -1) {
                        index[w] = low[w] = counter++;
                        stack[top++] = w;
                        onStack[w] = true;
                        callNode[calls] = w;
                        callNext[calls++] = start[w];
                    } else if (onStack[w]) {
                        low[v] = Math.min(low[v], index[w]);
                    }
                    continue;
                }
                if (low[v] == index[v]) {
                    int size = 0;
                    while (stack[top - 1 - size] != v) {
                        size++;
                    }
                    size++;
                    int[] members = Arrays.copyOfRange(stack, top - size, top);
                    top -= size;
                    for (int m : members) {
                        onStack[m] = false;
                    }
                    if (size > 1) {
                        Arrays.sort(members);
                        for (int m : members) {
                            componentOf[m] = components.size();
                        }
                        components.add(members);
                    }
                }
                calls--;
                if (calls > 0) {
                    int parent = callNode[calls - 1];
                    low[parent] = Math.min(low[parent], low[v]);
                }
            }
        }
        return components;
    }

    /** The edges of the kinds in {@code mask} between members of component {@code c} ({@code members}). */
    List<Integer> edgesWithin(int[] members, int mask, int[] componentOf, int c) {
        freeze();
        List<Integer> out = new ArrayList<>();
        for (int v : members) {
            for (int p = start[v]; p < start[v + 1]; p++) {
                int e = adjacency[p];
                if ((mask & (1 << kind[e])) != 0 && componentOf[to[e]] == c) {
                    out.add(e);
                }
            }
        }
        return out;
    }

    /**
     * The shortest path (fewest edges) from {@code source} to {@code target} over edges of the kinds in
     * {@code mask} that stays inside component {@code c}, as edge numbers in order; null when there is none.
     * A cycle through an edge {@code a -> b} is that edge and the shortest path from b back to a.
     */
    int[] shortestPath(int source, int target, int mask, int[] componentOf, int c) {
        freeze();
        if (++search == 0) { // wrapped: forget every earlier search
            Arrays.fill(seen, 0);
            search = 1;
        }
        int[] queue = new int[16];
        int head = 0;
        int tail = 0;
        queue[tail++] = source;
        seen[source] = search;
        via[source] = -1;
        while (head < tail) {
            int v = queue[head++];
            if (v == target) {
                break;
            }
            for (int p = start[v]; p < start[v + 1]; p++) {
                int e = adjacency[p];
                int w = to[e];
                if ((mask & (1 << kind[e])) == 0 || componentOf[w] != c || seen[w] == search) {
                    continue;
                }
                seen[w] = search;
                via[w] = e;
                if (tail == queue.length) {
                    queue = Arrays.copyOf(queue, tail * 2);
                }
                queue[tail++] = w;
            }
        }
        if (seen[target] != search) {
            return null;
        }
        int length = 0;
        for (int v = target; v != source; v = from[via[v]]) {
            length++;
        }
        int[] path = new int[length];
        for (int v = target, i = length - 1; v != source; v = from[via[v]], i--) {
            path[i] = via[v];
        }
        return path;
    }
}
