package io.ratchet.chaos;

import io.ratchet.chaos.cluster.Cluster;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scripts/chaos}: one chaos run against a fresh local cluster. Prints the readable report, then
 * the JSON summary as the last line; exits 0 only when the run is valid.
 */
@Command(name = "chaos", mixinStandardHelpOptions = true, sortOptions = false, version = "ratchet chaos 0.1.0",
        subcommands = CheckCommand.class,
        description = {"Starts a fresh local cluster, runs concurrent clients while a nemesis injects faults, heals, "
                + "reads the end state, checks the history, stops everything, and prints a report and one JSON line, last.",
                "Exit: 0 valid, 1 anomalies found, 2 usage error, 3 undecided or skipped, 4 the harness failed."})
public final class ChaosCommand implements Callable<Integer> {
    /**
     * Each node's JVM options unless {@code RATCHET_NODE_OPTS} gives others: the heap and collector of a
     * released node (its conf/jvm.options; under load the serial collector's full collections stopped a
     * leader 0.3 to 0.9 s, long enough for every group it led to elect again), and C1 alone, unlike a
     * released node: the run's nodes share the machine's cores, and C2 compiling in a restarted node took
     * them from the other two (docs/CHAOS.md, "The nodes' JVM").
     */
    static final String DEFAULT_NODE_OPTIONS = "-Xms256m -Xmx512m -XX:+UseG1GC -XX:TieredStopAtLevel=1";

    @Option(names = "--groups", defaultValue = "1",
            description = "Raft groups the cluster's keys spread over (default ${DEFAULT-VALUE}); with several, bank's transfers are transactions across groups")
    int groups;

    @Option(names = "--nodes", defaultValue = "3", description = "cluster size: 3 or 5 (default ${DEFAULT-VALUE})")
    int nodes;

    @Option(names = "--duration", defaultValue = "60s", converter = DurationConverter.class,
            description = "how long the clients run while the nemesis acts (default ${DEFAULT-VALUE})")
    Duration duration;

    @Option(names = "--nemesis", defaultValue = "kill-leader", completionCandidates = NemesisNames.class,
            description = "${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE})")
    String nemesis;

    @Option(names = "--workload", defaultValue = "register", completionCandidates = WorkloadNames.class,
            description = "${COMPLETION-CANDIDATES}, or several comma-separated (default ${DEFAULT-VALUE})")
    String workload;

    /** The nemeses --help lists: those {@link NemesisKind#parse} accepts, so that the two cannot drift apart. */
    static final class NemesisNames implements Iterable<String> {
        @Override
        public java.util.Iterator<String> iterator() {
            return Arrays.stream(NemesisKind.values()).map(NemesisKind::cliName).iterator();
        }
    }

    /** The workloads --help lists: those {@link Workloads#check} accepts. */
    static final class WorkloadNames implements Iterable<String> {
        @Override
        public java.util.Iterator<String> iterator() {
            return Arrays.asList(Workloads.NAMES.split(", ")).iterator();
        }
    }

    @Option(names = "--seed", description = "seed for the harness' random choices (default: a random one, printed)")
    Long seed;

    @Option(names = "--rate", defaultValue = "30", description = "operations a second per workload (default ${DEFAULT-VALUE})")
    double rate;

    @Option(names = "--concurrency", defaultValue = "5", description = "client processes per workload (default ${DEFAULT-VALUE})")
    int concurrency;

    @Option(names = "--out", description = "the run's directory, new or empty (default target/chaos/<time>-...)")
    Path out;

    @Option(names = "--interval", defaultValue = "3s", converter = DurationConverter.class,
            description = "mean quiet time between faults (default ${DEFAULT-VALUE})")
    Duration interval;

    @Option(names = "--warmup", defaultValue = "5s", converter = DurationConverter.class,
            description = "how long the clients run before the first fault, part of --duration (default ${DEFAULT-VALUE})")
    Duration warmup;

    @Option(names = "--renew-lease", defaultValue = "5s", converter = DurationConverter.class,
            description = "the lease of the renew workload's locks, renewed every third of it (default ${DEFAULT-VALUE})")
    Duration renewLease;

    @Option(names = "--fault-duration", defaultValue = "4s", converter = DurationConverter.class,
            description = "mean time a fault lasts before it is healed (default ${DEFAULT-VALUE})")
    Duration faultDuration;

    @Option(names = "--op-timeout", defaultValue = "10s", converter = DurationConverter.class,
            description = "the most one client operation may take, retries included (default ${DEFAULT-VALUE})")
    Duration opTimeout;

    @Option(names = "--check-budget", defaultValue = "60s", converter = DurationConverter.class,
            description = "the most the linearizability search may take; past it a key is reported undecided (default ${DEFAULT-VALUE})")
    Duration checkBudget;

    @Option(names = "--snapshot-threshold", defaultValue = "1000",
            description = "log entries between node snapshots; low so that runs exercise snapshots (default ${DEFAULT-VALUE})")
    long snapshotThreshold;

    @Option(names = "--ratchet-jar", defaultValue = "node/target/ratchet-node.jar", description = "the node jar (default ${DEFAULT-VALUE})")
    Path ratchetJar;

    @Option(names = "--tls", description = "TLS on every port: the run makes a CA and a certificate per node (scripts/certs), "
            + "and every client trusts that CA")
    boolean tls;

    @Option(names = "--auth", description = "authentication on (needs --tls, since tokens sent in plaintext can be read on the wire): "
            + "each workload runs as its own user, allowed to write its own key prefixes only, the harness as root; "
            + "any refusal for a token or a permission is an anomaly")
    boolean auth;

    @Option(names = "--resources", defaultValue = "0s", converter = DurationConverter.class,
            description = "sample each node's heap after a full GC, threads, open files and disk use this often, into "
                    + "resources.jsonl, and compare the run's start and end in the report (a soak); 0s: never (default ${DEFAULT-VALUE})")
    Duration resources;

    @Option(names = "--abandon", defaultValue = "0.005",
            description = "share of the bank's transfers and the append workload's transactions across groups whose coordinator "
                    + "goes away half way, as a process killed mid-commit would (default ${DEFAULT-VALUE}); above 0, with several groups, "
                    + "those two workloads' gaps are reported apart and not held to --max-gap")
    double abandon;

    @Option(names = "--load", defaultValue = "0",
            description = "client instances (each its own client, as processes would have) running reserve and update at full "
                    + "speed beside the workloads, unchecked, so that gaps are measured on a busy cluster (the cluster's storage quota is "
                    + Cluster.LOADED_QUOTA_MIB + " MiB then, not " + Cluster.QUOTA_MIB + ": the load's fresh keys outgrow that); 0: none "
                    + "(default ${DEFAULT-VALUE})")
    int load;

    @Option(names = "--max-gap", converter = DurationConverter.class,
            description = "fail the run (exit 1, as an anomaly does) when a fault kept a workload waiting longer than this "
                    + "for a successful write or read (docs/CHAOS.md, \"Availability gaps\"); default: no limit")
    Duration maxGap;

    /** Test only: proves the harness can fail. Hidden, and named in the summary when on. */
    @Option(names = "--test-break-conditional-puts", hidden = true)
    boolean breakConditionalPuts;

    /** Test only: append transactions without the checks of the keys they only read. */
    @Option(names = "--test-skip-read-checks", hidden = true)
    boolean skipReadChecks;

    /** Test only: append reads across groups taken once, group after group. */
    @Option(names = "--test-read-groups-once", hidden = true)
    boolean readGroupsOnce;

    /** The one deliberately broken client asked for, if any. */
    private TestMode testMode() {
        List<TestMode> asked = new ArrayList<>();
        if (breakConditionalPuts) {
            asked.add(TestMode.UNCONDITIONAL_PUTS);
        }
        if (skipReadChecks) {
            asked.add(TestMode.UNCHECKED_READS);
        }
        if (readGroupsOnce) {
            asked.add(TestMode.READS_ONCE);
        }
        if (asked.size() > 1) {
            throw new CommandLine.ParameterException(new CommandLine(this), "one test mode at a time, not " + asked);
        }
        return asked.isEmpty() ? TestMode.NONE : asked.get(0);
    }

    @Override
    public Integer call() throws Exception {
        NemesisKind kind = NemesisKind.parse(nemesis);
        Workloads.check(workload);
        if (!Files.isRegularFile(ratchetJar)) {
            throw new CommandLine.ParameterException(new CommandLine(this), "no node jar at " + ratchetJar
                    + "; build it with mvn -B -DskipTests package (scripts/chaos does)");
        }
        long runSeed = seed != null ? seed : ThreadLocalRandom.current().nextLong(1, 1_000_000);
        Path dir = out != null ? out : Path.of("target", "chaos", LocalDateTime.now()
                .format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")) + "-" + workload + "-" + kind.cliName());
        if (Files.isDirectory(dir)) {
            try (var entries = Files.list(dir)) {
                if (entries.findAny().isPresent()) {
                    // An old run's node data would be recovered by the new nodes and confuse every check.
                    throw new CommandLine.ParameterException(new CommandLine(this), dir + " already holds files; give --out a new directory");
                }
            }
        }
        Files.createDirectories(dir);
        // The client's own logging (Ratis retries and fail-overs) goes to a file in the run, not the terminal.
        System.setProperty("ratchet.chaos.log", dir.resolve("client.log").toAbsolutePath().toString());
        String nodeOptions = System.getenv().getOrDefault("RATCHET_NODE_OPTS", DEFAULT_NODE_OPTIONS);
        RunSettings settings = new RunSettings(nodes, duration, kind, workload, runSeed, rate, concurrency, dir, ratchetJar,
                interval, faultDuration, opTimeout, checkBudget, snapshotThreshold,
                Arrays.stream(nodeOptions.trim().split("\\s+")).filter(s -> !s.isEmpty()).toList(), testMode(),
                tls, auth, resources, groups, abandon, load, maxGap, warmup, renewLease);
        ChaosRun.Result result = ChaosRun.execute(settings, System.err);
        PrintStream stdout = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        stdout.print(result.report());
        stdout.println(result.summary().toJson());
        return result.summary().exitCode();
    }

    public static void main(String[] args) {
        CommandLine cli = new CommandLine(new ChaosCommand());
        cli.setParameterExceptionHandler((e, a) -> {
            cli.getErr().println("chaos: " + e.getMessage());
            cli.getErr().println("usage: " + String.join(" ", List.of("scripts/chaos", "--nodes 3|5", "--duration 60s",
                    "--nemesis " + NemesisKind.names().replace(", ", "|"), "--workload " + Workloads.NAMES.replace(", ", "|"),
                    "[--seed N] [--rate N]   (--help for all options)")));
            return 2;
        });
        cli.setExecutionExceptionHandler((e, c, p) -> {
            if (e instanceof IllegalArgumentException) {
                c.getErr().println("chaos: " + e.getMessage());
                return 2;
            }
            // Still one JSON line last, so that whoever reads it learns the harness failed.
            e.printStackTrace(c.getErr());
            c.getOut().println(Summary.JSON.createObjectNode().put("valid", false).put("result", "error")
                    .put("error", e.toString()));
            c.getOut().flush();
            return 4;
        });
        System.exit(cli.execute(args));
    }
}
