package io.ratchet.chaos;

import io.ratchet.protocol.Groups;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Everything one chaos run is told.
 *
 * @param nodes                cluster size, 3 or 5
 * @param duration             how long the clients run while the nemesis acts
 * @param nemesis              which faults
 * @param workload             a workload's name, or {@code all}
 * @param seed                 drives every random choice of the harness (not the interleavings)
 * @param rate                 operations a second, per workload, over all its processes
 * @param concurrency          client processes per workload
 * @param runDir               where the history, report, node configs, data and logs go
 * @param ratchetJar           the node jar ({@code node/target/ratchet-node.jar})
 * @param quietSpell           the mean time between a heal and the next fault
 * @param faultSpell           the mean time a fault lasts
 * @param operationTimeout     the most one client operation may take, retries included
 * @param checkBudget          the most the linearizability search may take
 * @param snapshotThreshold    log entries between node snapshots
 * @param nodeJvmOptions       options for each node's JVM
 * @param testMode             test-only: a deliberately broken client, or {@link TestMode#NONE}
 * @param tls                  TLS on every port, with a CA and certificates made for the run
 * @param auth                 authentication on, each workload as a user confined to its key prefixes (needs tls)
 * @param resourceInterval     how often each node's heap after GC, threads, open files and disk use are sampled
 *                             ({@code resources.jsonl}); zero: never
 * @param groups               how many Raft groups the cluster's keys spread over ({@code groups} in each node's
 *                             configuration; 1 is a cluster as it always was)
 * @param abandon              the share of the bank's transfers and of the append workload's transactions across
 *                             groups whose coordinator goes away half way, as a process killed mid-commit would
 * @param load                 client instances running reserve and update at full speed beside the workloads,
 *                             unchecked ({@link BackgroundLoad}); 0: none
 * @param maxGap               the longest availability gap a valid run may have ({@link Availability}); null: any
 * @param warmup               how long the clients run before the nemesis starts, part of {@code duration}: faults
 *                             land on a cluster in its stride, not in its start (first connections, sessions and
 *                             every code path compiled for the first time)
 * @param renewLease           the lease of the renew workload's locks (renewed every third of it)
 */
public record RunSettings(int nodes, Duration duration, NemesisKind nemesis, String workload, long seed, double rate,
                          int concurrency, Path runDir, Path ratchetJar, Duration quietSpell, Duration faultSpell,
                          Duration operationTimeout, Duration checkBudget, long snapshotThreshold,
                          List<String> nodeJvmOptions, TestMode testMode, boolean tls, boolean auth,
                          Duration resourceInterval, int groups, double abandon, int load, Duration maxGap,
                          Duration warmup, Duration renewLease) {
    public RunSettings {
        if (nodes != 3 && nodes != 5) {
            throw new IllegalArgumentException("--nodes must be 3 or 5, not " + nodes);
        }
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException("--duration must be positive");
        }
        if (rate <= 0 || concurrency < 1) {
            throw new IllegalArgumentException("--rate must be positive and --concurrency at least 1");
        }
        if (auth && !tls) {
            throw new IllegalArgumentException("--auth needs --tls: tokens sent in plaintext can be read on the wire");
        }
        if (groups < 1 || groups > Groups.MAX) {
            throw new IllegalArgumentException("--groups must be 1.." + Groups.MAX + ", not " + groups);
        }
        if (abandon < 0 || abandon > 1) {
            throw new IllegalArgumentException("--abandon is a share between 0 and 1, not " + abandon);
        }
        if (load < 0) {
            throw new IllegalArgumentException("--load is a number of clients, 0 or more, not " + load);
        }
        if (maxGap != null && (maxGap.isNegative() || maxGap.isZero())) {
            throw new IllegalArgumentException("--max-gap must be positive");
        }
        if (warmup.isNegative() || warmup.compareTo(duration) >= 0) {
            throw new IllegalArgumentException("--warmup must be at least 0 and shorter than --duration (" + duration.toSeconds()
                    + " s), not " + warmup.toMillis() + " ms");
        }
        if (renewLease.toMillis() < 300) {
            throw new IllegalArgumentException("--renew-lease must be at least 300 ms, not " + renewLease.toMillis() + " ms");
        }
        nodeJvmOptions = List.copyOf(nodeJvmOptions);
    }

    /** {@code tls}, {@code tls+auth}, or null for plaintext: what the summary and report name. */
    public String security() {
        return auth ? "tls+auth" : tls ? "tls" : null;
    }
}
