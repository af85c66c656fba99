package io.ratchet.cli;

import io.ratchet.bench.BenchReport;
import io.ratchet.bench.CpuMeter;
import io.ratchet.bench.LoadRunner;
import io.ratchet.bench.Workload;
import io.ratchet.common.Durations;
import io.ratchet.client.RatchetClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
    @Option(names = "--workload", description = "reserve, reserve-batch, update, hot, hot-update, add, sharded-add, read, lock, fair-lock or pair")
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
    @Option(names = "--acked", description = "reserve: write each key the cluster acknowledged creating to this file, "
            + "a line per client (its key prefix, then the numbers), after the run (for --verify-acked)")
    Path acked;
    @Option(names = "--verify-acked", description = "instead of a run: read every key a --acked file says was "
            + "acknowledged and print how many are missing (exit 0 when none, 1 otherwise)")
    Path verifyAcked;

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
        if (verifyAcked != null) {
            return verify(c);
        }
        if (workload == null) {
            throw new ParameterException(spec.commandLine(), "--workload is required (or --verify-acked)");
        }
        Workload w = Workload.parse(workload);
        BenchReport report;
        try {
            LoadRunner runner = new LoadRunner(instances(c), w, clients, System.err, new CpuMeter(nodePids));
            report = run == null ? runner.run(Durations.parse(warmup), Durations.parse(duration))
                    : runner.run(run, Durations.parse(warmup), Durations.parse(duration));
            if (acked != null) {
                List<String> lines = new ArrayList<>();
                runner.acknowledged().forEach((prefix, numbers) -> lines.add(prefix + "\t"
                        + numbers.stream().mapToObj(Integer::toString).collect(java.util.stream.Collectors.joining(","))));
                Files.write(acked, lines);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + acked, e);
        } finally {
            extra.forEach(RatchetClient::close);
        }
        out().println(report.toJsonLine());
        out().flush();
        return ExitCode.DONE;
    }

    /** Reads back, in pages of keys, every key each prefix of the file says was acknowledged up to its number. */
    private int verify(RatchetClient c) {
        long acknowledged = 0;
        long missing = 0;
        List<String> firstMissing = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(verifyAcked)) {
                if (line.isBlank()) {
                    continue;
                }
                String[] parts = line.split("\t", -1);
                String prefix = parts[0];
                List<String> all = parts[1].isEmpty() ? List.of()
                        : java.util.Arrays.stream(parts[1].split(",")).map(n -> prefix + n).toList();
                for (int from = 0; from < all.size(); from += 500) {
                    List<String> keys = all.subList(from, Math.min(all.size(), from + 500));
                    java.util.Set<String> found = new java.util.HashSet<>();
                    c.getAll(keys).forEach(item -> found.add(item.key()));
                    for (String k : keys) {
                        acknowledged++;
                        if (!found.contains(k)) {
                            missing++;
                            if (firstMissing.size() < 10) {
                                firstMissing.add(k);
                            }
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + verifyAcked, e);
        }
        out().printf("{\"acknowledged\":%d,\"missing\":%d,\"first_missing\":%s}%n", acknowledged, missing,
                firstMissing.stream().map(k -> "\"" + k + "\"").toList());
        out().flush();
        return missing == 0 ? ExitCode.DONE : ExitCode.CONDITION_FAILED;
    }
}
