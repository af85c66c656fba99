package io.ratchet.chaos.checker;

import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.Operation;
import java.util.List;

/** Decides whether one workload's history kept the workload's invariants. */
public interface Checker {
    /** The workload this checker judges, as results name it. */
    String workload();

    /**
     * @param operations the workload's operations, each invocation paired with its completion
     * @return the verdict
     */
    CheckResult checkOperations(List<Operation> operations);

    /**
     * @param history the workload's lines (its clients' and its final reads'), in history order
     * @return the verdict; never throws on a bad history: one whose lines do not pair is undecided
     */
    default CheckResult check(List<Op> history) {
        List<Operation> operations;
        try {
            operations = Operation.pair(history);
        } catch (IllegalArgumentException e) {
            return new CheckResult(workload(), Validity.UNKNOWN, List.of(), List.of("malformed history: " + e.getMessage()));
        }
        return checkOperations(operations);
    }
}
