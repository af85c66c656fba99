package io.ratchet.cli;

import io.ratchet.bench.BenchReport;
import io.ratchet.bench.CpuMeter;
import io.ratchet.bench.LoadRunner;
import io.ratchet.bench.Workload;
import io.ratchet.client.Durations;
import io.ratchet.client.RatchetClient;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * {@code ratchet bench}: drives a running cluster with one of the peerbench workloads and prints one
 * JSON line of figures last (progress goes to stderr). {@code scripts/bench --start} wraps it with a
 * fresh local cluster.
 */
@Command(name = "bench", description = "Measure throughput and latency of a workload against a running cluster; "
        + "prints one JSON line last.")
final class BenchCommand extends ClientCommand {
    @Option(names = "--workload", required = true, description = "reserve, update, hot, hot-update, read, lock or fair-lock")
    String workload;
    @Option(names = "--clients", defaultValue = "16", description = "concurrent closed-loop clients (default ${DEFAULT-VALUE})")
    int clients;
    @Option(names = "--client-instances", defaultValue = "1", description = "spread the clients over this many "
            + "client instances, each with its own connections and session, as that many processes would be "
            + "(default ${DEFAULT-VALUE}: all share one, as one process's threads)")
    int instances;
    @Option(names = "--duration", defaultValue = "10s", description = "measured time (default ${DEFAULT-VALUE})")
    String duration;
    @Option(names = "--warmup", defaultValue = "30s", description = "time run but not measured first: the JIT needs it (default ${DEFAULT-VALUE})")
    String warmup;
    @Option(names = "--run", description = "name the keys the run works on (bench/NAME/): a run of the same name "
            + "reuses the counters an earlier one made (default: a new name each run)")
    String run;
    @Option(names = "--node-pids", split = ",", description = "process ids of the node JVMs, when they run on this "
            + "machine: the line then says what CPU they used per committed operation (scripts/bench --start gives them)")
    List<Long> nodePids = new ArrayList<>();

    private final List<RatchetClient> extra = new ArrayList<>();

    /** {@code c} and as many more instances as asked for; the extra ones are closed after the run. */
    private List<RatchetClient> instances(RatchetClient c) {
        if (instances < 1 || instances > clients) {
            throw new ParameterException(spec.commandLine(), "--client-instances must be 1.." + clients + ", not " + instances);
        }
        List<RatchetClient> all = new ArrayList<>(List.of(c));
        while (all.size() < instances) {
            RatchetClient more = client().connect();
            extra.add(more);
            all.add(more);
        }
        return all;
    }

    @Override
    int run(RatchetClient c) {
        Workload w = Workload.parse(workload);
        BenchReport report;
        try {
            LoadRunner runner = new LoadRunner(instances(c), w, clients, System.err, new CpuMeter(nodePids));
            report = run == null ? runner.run(Durations.parse(warmup), Durations.parse(duration))
                    : runner.run(run, Durations.parse(warmup), Durations.parse(duration));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } finally {
            extra.forEach(RatchetClient::close);
        }
        out().println(report.toJsonLine());
        out().flush();
        return ExitCode.DONE;
    }
}
