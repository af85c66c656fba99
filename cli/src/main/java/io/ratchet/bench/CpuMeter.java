package io.ratchet.bench;

import java.time.Duration;
import java.util.List;

/**
 * The CPU time the node processes on this machine and the bench process itself have used, read from the
 * operating system ({@link ProcessHandle.Info#totalCpuDuration}, user and system time; on Linux from
 * {@code /proc/PID/stat}). Taken before and after the measured seconds, it gives what an operation costs
 * in CPU, which, unlike throughput, does not move with what else the machine's cores are doing: on a
 * 2-core machine shared by three nodes and the bench, throughput drifts by half from one run to the next,
 * and a cost (TLS, an authorization check) is lost in the drift.
 */
public final class CpuMeter {
    /** CPU used so far; {@code nodes} is null when a node's was not readable. */
    public record Reading(Duration nodes, Duration bench) {
    }

    private final List<Long> nodePids;

    /** @param nodePids the node JVMs' process ids; empty to measure the bench process alone */
    public CpuMeter(List<Long> nodePids) {
        this.nodePids = List.copyOf(nodePids);
    }

    public Reading read() {
        Duration nodes = nodePids.isEmpty() ? null : Duration.ZERO;
        for (long pid : nodePids) {
            Duration used = ProcessHandle.of(pid).flatMap(p -> p.info().totalCpuDuration()).orElse(null);
            nodes = used == null || nodes == null ? null : nodes.plus(used);
        }
        return new Reading(nodes, ProcessHandle.current().info().totalCpuDuration().orElse(Duration.ZERO));
    }

    /** Microseconds of CPU per operation between two readings; NaN when unknown or nothing committed. */
    static double microsPerOperation(Duration before, Duration after, long operations) {
        if (before == null || after == null || operations == 0) {
            return Double.NaN;
        }
        return after.minus(before).toNanos() / 1000.0 / operations;
    }
}
