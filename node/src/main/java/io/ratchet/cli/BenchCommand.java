package io.ratchet.cli;

import io.ratchet.client.Durations;
import io.ratchet.bench.BenchReport;
import io.ratchet.bench.LoadRunner;
import io.ratchet.bench.Workload;
import io.ratchet.client.RatchetClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ratchet bench}: drives a running cluster with one of the peerbench workloads and prints one
 * JSON line of figures last (progress goes to stderr). {@code scripts/bench --start} wraps it with a
 * fresh local cluster.
 */
@Command(name = "bench", description = "Measure throughput and latency of a workload against a running cluster; "
        + "prints one JSON line last.")
final class BenchCommand extends ClientCommand {
    @Option(names = "--workload", required = true, description = "reserve, update, hot, read or lock")
    String workload;
    @Option(names = "--clients", defaultValue = "16", description = "concurrent closed-loop clients (default ${DEFAULT-VALUE})")
    int clients;
    @Option(names = "--duration", defaultValue = "10s", description = "measured time (default ${DEFAULT-VALUE})")
    String duration;
    @Option(names = "--warmup", defaultValue = "30s", description = "time run but not measured first: the JIT needs it (default ${DEFAULT-VALUE})")
    String warmup;

    @Override
    int run(RatchetClient c) {
        Workload w = Workload.parse(workload);
        BenchReport report;
        try {
            report = new LoadRunner(c, w, clients, System.err).run(Durations.parse(warmup), Durations.parse(duration));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        out().println(report.toJsonLine());
        out().flush();
        return ExitCode.DONE;
    }
}
