package io.ratchet.chaos.workload;

import io.ratchet.chaos.checker.Checker;
import java.util.List;
import java.util.Optional;

/**
 * A kind of client traffic with an invariant: the operations its workers run, the reads that end it,
 * and the checker that decides whether its history kept the invariant. Each workload keeps to its own
 * key prefix, so several can share a cluster.
 */
public interface Workload {
    String name();

    /**
     * Every key prefix this workload's operations touch (setup, workers and final reads), and no other:
     * with authentication on, the workload runs as a user whose role may write these and nothing else, so
     * an operation outside them is refused and the run says so. By default the one prefix its name and a
     * slash make: a workload's keys live under its name.
     */
    default List<String> keyPrefixes() {
        return List.of(name() + "/");
    }

    /** Why this workload cannot run against the cluster as it is today, or empty when it can. */
    default Optional<String> unavailableReason() {
        return Optional.empty();
    }

    /** Creates what the workers start from (recorded in the history), before any fault. */
    default void prepare(ClientProcess setup) {
    }

    Worker newWorker();

    /**
     * Runs after the faults healed and the cluster settled: reads of the end state, which the checker
     * compares with what was acknowledged. Retries a read that gets no answer, a bounded number of times.
     */
    void finalReads(ClientProcess reader);

    Checker checker();
}
