package io.ratchet.chaos.checker;

import java.util.Optional;

/**
 * The sequential specification of one Ratchet item as a register with a version: absent, or a value
 * at an index. A put at index 0 succeeds only on an absent item (create-only), a put or delete at
 * index {@code i > 0} only on an item at index {@code i}; a failed condition changes nothing and reports
 * the current value and index. Indexes only move forward: a successful write never lands at an index
 * below the item's current one, or, for an absent item, below the index of the item that was deleted.
 */
public final class VersionedRegister implements LinearizabilityChecker.Model<VersionedRegister.State, VersionedRegister.Call> {

    /** The item's state. */
    public sealed interface State permits Absent, Present {
    }

    /** No item; {@code floor} is the index of the last item deleted (0 if none), which a new one cannot go below. */
    public record Absent(long floor) implements State {
        @Override
        public String toString() {
            return "absent" + (floor == 0 ? "" : " (last deleted at index " + floor + ")");
        }
    }

    /** An item with {@code value} (compact JSON) at {@code index}. */
    public record Present(String value, long index) implements State {
        @Override
        public String toString() {
            return value + " at index " + index;
        }
    }

    public enum Kind { READ, PUT, DELETE }

    /**
     * One operation as the model reads it.
     *
     * @param kind     read, put or delete
     * @param expected a write's condition: 0 for create-only, else the index the item must be at
     * @param value    a put's value, compact JSON
     * @param known    whether the operation got an answer
     * @param applied  for an answered write: whether its condition held
     * @param index    answered read or failed write: the item's index (0 if absent); successful put: its
     *                 new index; put with unknown outcome: the index its value was seen at (the value is
     *                 unique, so any observation of it names the entry that wrote it)
     * @param observed answered read or failed write: the item's value, or null when absent
     * @param line     the history index of the operation's invocation
     * @param label    how the report names the operation
     */
    public record Call(Kind kind, long expected, String value, boolean known, boolean applied, long index,
                       String observed, long line, String label) {
        @Override
        public String toString() {
            return label;
        }
    }

    @Override
    public State initial() {
        return new Absent(0);
    }

    @Override
    public Optional<State> step(State state, Call op) {
        if (op.kind() == Kind.READ) {
            return shows(state, op) ? Optional.of(state) : Optional.empty();
        }
        boolean holds = conditionHolds(state, op);
        if (!op.known()) {
            // It may have taken effect here (only if its condition held) or not at all; not at all is the
            // same as taking effect after everything else, which the search tries last.
            return Optional.of(holds ? after(state, op).orElse(state) : state);
        }
        if (op.applied()) {
            return holds ? after(state, op) : Optional.empty();
        }
        return !holds && shows(state, op) ? Optional.of(state) : Optional.empty();
    }

    private static boolean conditionHolds(State state, Call op) {
        if (op.kind() == Kind.PUT && op.expected() == 0) {
            return state instanceof Absent;
        }
        return state instanceof Present p && p.index() == op.expected();
    }

    /** The state a write whose condition holds leaves; empty when its reported index would move backwards. */
    private static Optional<State> after(State state, Call op) {
        long current = state instanceof Present p ? p.index() : ((Absent) state).floor();
        if (op.kind() == Kind.DELETE) {
            return Optional.of(new Absent(current));
        }
        return op.index() >= current ? Optional.of(new Present(op.value(), op.index())) : Optional.empty();
    }

    /** Whether an answer that reports the item as {@code op.index()}/{@code op.observed()} matches {@code state}. */
    private static boolean shows(State state, Call op) {
        if (op.index() == 0) {
            return state instanceof Absent;
        }
        return state instanceof Present p && p.index() == op.index() && p.value().equals(op.observed());
    }
}
