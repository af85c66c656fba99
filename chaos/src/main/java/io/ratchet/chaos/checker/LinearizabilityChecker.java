package io.ratchet.chaos.checker;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Decides whether concurrent operations on independent objects are linearizable: whether each object's
 * operations fit in one sequential order that respects real time (an operation that returned before
 * another was invoked comes first) and that a sequential {@link Model} accepts, outcome by outcome.
 *
 * <p>The search is Wing and Gong's, with Lowe's memoisation of (operations linearized so far, model
 * state), the way Porcupine and Knossos do it. The history is split by object first: a history is
 * linearizable exactly when each object's sub-history is, and small searches are what keeps this cheap.
 *
 * <p>An operation with an unknown outcome may take effect at any point after its invocation, or never.
 * Its return is placed after every other event; once every operation with a known return is linearized,
 * the open ones are taken never to have happened.
 *
 * <p>The search is exponential in the worst case. It stops at a time budget, or when it has remembered
 * more states than a size budget allows (each costs memory), and says {@link Validity#UNKNOWN} for the
 * object rather than hang or run out of memory.
 *
 * @param <S> the model's state: immutable, with {@code equals} and {@code hashCode}
 * @param <O> an operation as the model reads it
 */
public final class LinearizabilityChecker<S, O> {

    /** A sequential specification of one object. */
    public interface Model<S, O> {
        S initial();

        /**
         * The state after {@code op} takes effect in {@code state}, or empty when {@code op} could not have
         * given the outcome it reported there.
         */
        Optional<S> step(S state, O op);
    }

    /**
     * One operation in an object's history.
     *
     * @param call where it was invoked, in history order
     * @param ret  where it returned, in history order; {@link Long#MAX_VALUE} when its outcome is unknown
     */
    public record Entry<O>(O op, long call, long ret) {
        public Entry {
            if (ret <= call) {
                throw new IllegalArgumentException("an operation returns after its call: " + call + " .. " + ret);
            }
        }

        boolean openEnded() {
            return ret == Long.MAX_VALUE;
        }
    }

    /**
     * The verdict on one object.
     *
     * @param operations       how many operations the object had
     * @param explored         search steps taken
     * @param stuckAt          when not linearizable: the operation that returned before it could be placed,
     *                         at the deepest point the search reached
     * @param stateThere       the model's state at that point
     * @param linearizedBefore how many operations the search had placed at that point
     */
    public record Verdict<S, O>(Validity validity, int operations, long explored, Duration took,
                                O stuckAt, S stateThere, int linearizedBefore) {
    }

    /** About a few hundred megabytes of remembered states at most, per object. */
    public static final int DEFAULT_MAX_STATES = 2_000_000;

    private final Model<S, O> model;
    private final int maxStates;

    public LinearizabilityChecker(Model<S, O> model) {
        this(model, DEFAULT_MAX_STATES);
    }

    /** @param maxStates the most (operations placed, state) pairs one object's search may remember */
    public LinearizabilityChecker(Model<S, O> model, int maxStates) {
        this.model = model;
        this.maxStates = maxStates;
    }

    /**
     * Checks every object, the smallest first, within {@code budget} in all. Each object gets an equal
     * share of what is left, so one hard object cannot starve the others of their (usually tiny) searches.
     */
    public Map<String, Verdict<S, O>> check(Map<String, List<Entry<O>>> objects, Duration budget) {
        List<Map.Entry<String, List<Entry<O>>>> bySize = new ArrayList<>(objects.entrySet());
        bySize.sort(Comparator.comparingInt(e -> e.getValue().size()));
        long deadline = System.nanoTime() + budget.toNanos();
        Map<String, Verdict<S, O>> verdicts = new LinkedHashMap<>();
        int left = bySize.size();
        for (Map.Entry<String, List<Entry<O>>> object : bySize) {
            long share = Math.max(0, deadline - System.nanoTime()) / left--;
            verdicts.put(object.getKey(), check(object.getValue(), System.nanoTime() + share));
        }
        return verdicts;
    }

    /** Checks one object's operations until {@code deadlineNanos} (on {@link System#nanoTime()}). */
    public Verdict<S, O> check(List<Entry<O>> entries, long deadlineNanos) {
        long started = System.nanoTime();
        Node head = eventList(entries);
        BitSet linearized = new BitSet(entries.size());
        Set<Visited<S>> visited = new HashSet<>();
        Deque<Frame<S>> placed = new ArrayDeque<>();
        S state = model.initial();
        Node node = head.next;
        long explored = 0;
        int deepest = -1;
        O stuckAt = null;
        S stateThere = null;
        while (head.next != null) {
            if (((++explored & 0x3ff) == 0 && System.nanoTime() > deadlineNanos) || visited.size() > maxStates) {
                return new Verdict<>(Validity.UNKNOWN, entries.size(), explored, since(started), null, null, 0);
            }
            if (node.call) {
                Optional<S> next = model.step(state, entries.get(node.id).op());
                if (next.isPresent()) {
                    linearized.set(node.id);
                    if (visited.add(new Visited<>((BitSet) linearized.clone(), next.get()))) {
                        placed.push(new Frame<>(node, state));
                        state = next.get();
                        node.lift();
                        node = head.next;
                        continue;
                    }
                    linearized.clear(node.id);
                }
                node = node.next;
                continue;
            }
            // A return: its operation had to take effect before here, and could not in this order.
            if (node.openEnded) {
                // Every operation with a known return is placed; the open ones may never have happened.
                return new Verdict<>(Validity.VALID, entries.size(), explored, since(started), null, null, 0);
            }
            if (placed.size() > deepest) {
                deepest = placed.size();
                stuckAt = entries.get(node.id).op();
                stateThere = state;
            }
            if (placed.isEmpty()) {
                return new Verdict<>(Validity.INVALID, entries.size(), explored, since(started), stuckAt, stateThere, deepest);
            }
            Frame<S> undo = placed.pop();
            state = undo.stateBefore();
            linearized.clear(undo.node().id);
            undo.node().unlift();
            node = undo.node().next;
        }
        return new Verdict<>(Validity.VALID, entries.size(), explored, since(started), null, null, 0);
    }

    /** Calls and returns in history order, open-ended returns last, linked behind a sentinel head. */
    private static <O> Node eventList(List<Entry<O>> entries) {
        record Event(int id, boolean call, long at) {
        }
        List<Event> events = new ArrayList<>(entries.size() * 2);
        for (int i = 0; i < entries.size(); i++) {
            events.add(new Event(i, true, entries.get(i).call()));
            events.add(new Event(i, false, entries.get(i).ret()));
        }
        events.sort(Comparator.comparingLong(Event::at).thenComparingInt(Event::id));
        Node head = new Node(-1, false, false);
        Node[] calls = new Node[entries.size()];
        Node last = head;
        for (Event e : events) {
            Node n = new Node(e.id(), e.call(), !e.call() && entries.get(e.id()).openEnded());
            if (e.call()) {
                calls[e.id()] = n;
            } else {
                calls[e.id()].match = n;
            }
            n.prev = last;
            last.next = n;
            last = n;
        }
        return head;
    }

    private static Duration since(long started) {
        return Duration.ofNanos(System.nanoTime() - started);
    }

    /** A call or return event in the doubly linked list the search removes placed operations from. */
    private static final class Node {
        final int id;
        final boolean call;
        final boolean openEnded;
        Node prev;
        Node next;
        /** For a call: its return. */
        Node match;

        Node(int id, boolean call, boolean openEnded) {
            this.id = id;
            this.call = call;
            this.openEnded = openEnded;
        }

        /** Takes this call and its return out of the list. */
        void lift() {
            prev.next = next;
            next.prev = prev;
            match.prev.next = match.next;
            if (match.next != null) {
                match.next.prev = match.prev;
            }
        }

        /** Puts them back, in the reverse order of {@link #lift()}. */
        void unlift() {
            match.prev.next = match;
            if (match.next != null) {
                match.next.prev = match;
            }
            prev.next = this;
            next.prev = this;
        }
    }

    private record Frame<S>(Node node, S stateBefore) {
    }

    private record Visited<S>(BitSet linearized, S state) {
    }
}
