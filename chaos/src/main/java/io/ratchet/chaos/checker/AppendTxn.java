package io.ratchet.chaos.checker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import io.ratchet.chaos.history.Operation;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * One transaction of a list-append history, as {@link ListAppendChecker} reads it: what it did (its
 * micro-operations, reads with the lists they returned when it answered), how it ended, and where it
 * sits in the history's real-time order.
 *
 * @param id        its position among the history's transactions
 * @param status    committed, aborted (certainly nothing applied) or indeterminate (no answer)
 * @param mops      its reads and appends in order; a read's values are null when it gave no answer
 * @param groups    the Raft groups its keys are in; empty when the history does not say (one group)
 * @param last      one of the final reads, made after every fault healed and the cluster settled
 * @param invoked   the history index of its invocation
 * @param completed the history index of its completion; {@link Long#MAX_VALUE} when it has none that
 *                  bounds it (an unknown outcome may take effect at any later time)
 * @param line      the history line that shows it best: its completion, else its invocation
 */
record AppendTxn(int id, Status status, List<Mop> mops, Set<Integer> groups, boolean last, long invoked, long completed,
                 long line) {

    /** How a transaction ended. */
    enum Status { COMMITTED, ABORTED, INDETERMINATE }

    /** A micro-operation: a read of a key's whole list, or an append of one value to it. */
    sealed interface Mop permits Read, Append {
        String key();
    }

    /** {@code values} is the list read, oldest first; null when the read's answer is unknown. */
    record Read(String key, List<Long> values) implements Mop {
    }

    record Append(String key, long value) implements Mop {
    }

    static final String F = ListAppendChecker.TXN;

    /** It is in one group: its keys' group when the history names one, group 0 when it names none. */
    boolean singleGroup() {
        return groups.size() <= 1;
    }

    /** The one group of a single-group transaction. */
    int group() {
        return groups.isEmpty() ? 0 : groups.iterator().next();
    }

    boolean readOnly() {
        return mops.stream().allMatch(m -> m instanceof Read);
    }

    /** How reports name it: by its line in the history. */
    String label() {
        return "T" + line;
    }

    /**
     * The transactions among {@code operations} ({@code f} is {@link #F}), in invocation order.
     *
     * <p>Input {@code {"ops":[["r",key,null],["append",key,v],...],"groups":[g,...]}}; output, on an answer,
     * {@code {"committed":b,"ops":[["r",key,[v,...]],["append",key,v],...]}} (committed defaults to true: a
     * read-only transaction always commits). An answer with {@code committed} false, or a {@code fail}
     * completion, is an abort; no answer is an unknown outcome.
     *
     * @throws IllegalArgumentException when a transaction's micro-operations cannot be read
     */
    static List<AppendTxn> parse(List<Operation> operations) {
        List<AppendTxn> txns = new ArrayList<>();
        for (Operation op : operations) {
            if (!F.equals(op.f())) {
                continue;
            }
            JsonNode input = op.invoke().input() == null ? MissingNode.getInstance() : op.invoke().input();
            JsonNode output = op.ok() && op.completion().output() != null ? op.completion().output() : MissingNode.getInstance();
            Status status = op.unknown() ? Status.INDETERMINATE
                    : op.failed() || !output.path("committed").asBoolean(true) ? Status.ABORTED
                    : Status.COMMITTED;
            JsonNode source = op.ok() ? output : input;
            List<Mop> mops = mops(source.path("ops"), op.ok(), op);
            Set<Integer> groups = new TreeSet<>();
            input.path("groups").forEach(g -> groups.add(g.asInt()));
            txns.add(new AppendTxn(txns.size(), status, List.copyOf(mops), Set.copyOf(groups), "final".equals(op.process()),
                    op.callIndex(), op.returnIndex(), op.completion() == null ? op.invoke().index() : op.completion().index()));
        }
        return txns;
    }

    private static List<Mop> mops(JsonNode ops, boolean answered, Operation op) {
        if (!ops.isArray() || ops.isEmpty()) {
            throw new IllegalArgumentException("a transaction without micro-operations: " + op.describe());
        }
        List<Mop> mops = new ArrayList<>();
        for (JsonNode m : ops) {
            if (!m.isArray() || m.size() != 3 || !m.get(1).isTextual()) {
                throw new IllegalArgumentException("a micro-operation is [f, key, value], not " + m + ": " + op.describe());
            }
            // Keys compare case-insensitively, as the cluster compares them.
            String key = m.get(1).asText().toLowerCase(Locale.ROOT);
            switch (m.get(0).asText()) {
                case "r" -> {
                    JsonNode v = m.get(2);
                    if (answered && !v.isArray()) {
                        throw new IllegalArgumentException("an answered read holds a list, not " + v + ": " + op.describe());
                    }
                    List<Long> values = null;
                    if (answered) {
                        values = new ArrayList<>(v.size());
                        for (JsonNode e : v) {
                            values.add(e.asLong());
                        }
                    }
                    mops.add(new Read(key, values == null ? null : List.copyOf(values)));
                }
                case "append" -> {
                    if (!m.get(2).canConvertToLong()) {
                        throw new IllegalArgumentException("an append's value is a number, not " + m.get(2) + ": " + op.describe());
                    }
                    mops.add(new Append(key, m.get(2).asLong()));
                }
                default -> throw new IllegalArgumentException("unknown micro-operation " + m.get(0) + ": " + op.describe());
            }
        }
        return mops;
    }
}
