package io.ratchet.chaos.checker;

import io.ratchet.chaos.history.Op;
import java.util.List;

/** Decides whether one workload's history kept the workload's invariants. */
public interface Checker {
    /**
     * @param history the workload's lines (its clients' and its final reads'), in history order
     * @return the verdict; never throws on a bad history, which is itself reported as an anomaly
     */
    CheckResult check(List<Op> history);
}
