package io.ratchet.chaos;

import io.ratchet.chaos.checker.Anomaly;
import io.ratchet.chaos.checker.AuthRefusals;
import io.ratchet.chaos.checker.CheckResult;
import io.ratchet.chaos.checker.Validity;
import io.ratchet.chaos.checker.Verdict;
import io.ratchet.chaos.cluster.Cluster;
import io.ratchet.chaos.cluster.LoopbackNetwork;
import io.ratchet.chaos.cluster.NamespaceNetwork;
import io.ratchet.chaos.cluster.CpuThrottle;
import io.ratchet.chaos.cluster.NodeFaults;
import io.ratchet.chaos.cluster.ResourceSampler;
import io.ratchet.chaos.cluster.Network;
import io.ratchet.chaos.history.History;
import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.OpType;
import io.ratchet.chaos.nemesis.ClockNemesis;
import io.ratchet.chaos.nemesis.DiskNemesis;
import io.ratchet.chaos.nemesis.KillNemesis;
import io.ratchet.chaos.nemesis.MembershipNemesis;
import io.ratchet.chaos.nemesis.MixedNemesis;
import io.ratchet.chaos.nemesis.Nemesis;
import io.ratchet.chaos.nemesis.NemesisLoop;
import io.ratchet.chaos.nemesis.PartitionNemesis;
import io.ratchet.chaos.nemesis.PauseNemesis;
import io.ratchet.chaos.nemesis.SlowNemesis;
import io.ratchet.chaos.workload.ClientProcess;
import io.ratchet.chaos.workload.WorkerPool;
import io.ratchet.chaos.workload.Workload;
import io.ratchet.client.ClientOptions;
import io.ratchet.client.RatchetClient;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * One chaos run from start to end: a fresh cluster, the workloads' clients running while the nemesis
 * acts, then heal, settle, final reads, stop everything, and check the history. Every process and
 * namespace it makes is removed before it returns, and by a shutdown hook if the JVM is told to stop.
 */
public final class ChaosRun {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(60);
    /** Node slots beyond the initial nodes for a membership nemesis to grow into: up to 5 voters from 3. */
    private static final int SPARES = 2;

    private final RunSettings settings;
    private final PrintStream log;
    private final Report report = new Report();
    private final List<String> skipped = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();
    private int faults;
    /** What a membership nemesis changed, for the summary, and its check of the configurations; null without one. */
    private Map<String, Integer> changes;
    private CheckResult membership;
    private History history;
    /** The workloads whose gaps are reported apart ({@link Availability#apart}). */
    private Set<String> apart = Set.of();
    /** What the unchecked load did ({@code --load}); null without one. */
    private BackgroundLoad.Counts load;
    /** The clock and disk fault libraries the nodes run with, as the nemesis needs them. */
    private NodeFaults nodeFaults = NodeFaults.none();
    private final long started = System.nanoTime();

    /** The summary line, and the readable report that goes beside it. */
    public record Result(Summary summary, String report) {
    }

    private ChaosRun(RunSettings settings, PrintStream log) {
        this.settings = settings;
        this.log = log;
    }

    /** Runs, writes {@code history.jsonl}, {@code report.txt} and {@code summary.json} in the run directory, and returns. */
    public static Result execute(RunSettings settings, PrintStream log) throws IOException {
        Files.createDirectories(settings.runDir());
        Result result = new ChaosRun(settings, log).run();
        Files.writeString(settings.runDir().resolve("report.txt"), result.report());
        Files.writeString(settings.runDir().resolve("summary.json"), result.summary().toJson() + "\n");
        return result;
    }

    /** A line of a client workload (not the nemesis). */
    static boolean isClientOp(Op op) {
        return !NemesisLoop.PROCESS.equals(op.workload());
    }

    private Result run() throws IOException {
        report.line("Ratchet chaos run: " + settings.workload() + " under " + settings.nemesis().cliName());
        report.field("run", settings.runDir().toAbsolutePath());
        report.field("cluster", settings.nodes() + " nodes" + (settings.security() == null ? ""
                : settings.auth() ? ", TLS on every port, authentication on" : ", TLS on every port"));
        report.field("duration", settings.duration().toSeconds() + " s, " + trim(settings.rate()) + " ops/s and "
                + settings.concurrency() + " processes per workload, seed " + settings.seed()
                + (settings.warmup().isZero() || settings.nemesis() == NemesisKind.NONE ? ""
                : "; the first fault after " + trim(settings.warmup().toMillis() / 1000.0) + " s"));
        if (settings.load() > 0) {
            report.field("load", settings.load() + " client instances beside the workloads, reserve and update back to back, unchecked");
        }
        if (settings.testMode() != TestMode.NONE) {
            report.field("TEST MODE", settings.testMode().description());
        }
        List<Workload> workloads = new ArrayList<>();
        for (Workload w : Workloads.named(settings.workload(), settings)) {
            Optional<String> why = w.unavailableReason();
            if (why.isPresent()) {
                skipped.add(w.name() + ": " + why.get());
            } else {
                workloads.add(w);
            }
        }
        Optional<String> noNamespaces = settings.nemesis().usesPartitions() ? NamespaceNetwork.unavailableReason() : Optional.empty();
        noNamespaces.ifPresent(why -> skipped.add("partition: skipped: " + why));
        if (settings.nemesis() == NemesisKind.SLOW || settings.nemesis() == NemesisKind.ALL) {
            CpuThrottle.unavailableReason().ifPresent(why -> skipped.add("slow: skipped: " + why));
        }
        if (settings.nemesis().stepsClocks() || settings.nemesis().breaksDisks()) {
            try {
                nodeFaults = NodeFaults.prepare(settings.runDir().resolve("faults"));
            } catch (IOException e) {
                report.blank().line("The harness failed: " + e);
                return finish(List.of(), List.of(), "error", e.toString());
            }
            nodeFaults.unavailable().ifPresent(why -> skipped.add("clock, disk: skipped: " + why));
        }
        boolean cannot = switch (settings.nemesis()) {
            case PARTITION -> noNamespaces.isPresent();
            case CLOCK, DISK -> nodeFaults.unavailable().isPresent();
            case SLOW -> CpuThrottle.unavailableReason().isPresent();
            default -> false;
        };
        skipped.forEach(s -> report.field("skipped", s));
        apart = Availability.apart(workloads.stream().map(Workload::name).toList(), settings);
        if (workloads.isEmpty() || cannot) {
            report.blank().line("Nothing ran: " + String.join("; ", skipped));
            return finish(List.of(), List.of(), "skipped", null);
        }
        try {
            exercise(workloads, noNamespaces.isEmpty() && settings.nemesis().usesPartitions());
        } catch (IOException | RuntimeException e) {
            report.blank().line("The harness failed: " + e);
            return finish(ops(), List.of(), "error", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return finish(ops(), List.of(), "error", "interrupted");
        } finally {
            if (history != null) {
                history.close();
            }
        }
        log("checking the history");
        List<Op> ops = ops();
        List<CheckResult> results = new ArrayList<>();
        for (Workload w : workloads) {
            results.add(w.checker().check(ops.stream().filter(op -> w.name().equals(op.workload())).toList()));
        }
        if (membership != null) {
            results.add(membership);
        }
        if (settings.auth()) {
            results.add(AuthRefusals.check(ops));
        }
        return finish(ops, results, null, null);
    }

    private List<Op> ops() {
        return history == null ? List.of() : history.ops();
    }

    /** Starts the cluster, runs clients and nemesis, heals, settles, reads the end state, stops the cluster. */
    private void exercise(List<Workload> workloads, boolean namespaces) throws IOException, InterruptedException {
        Path nodesDir = settings.runDir().resolve("nodes");
        int spares = settings.nemesis().changesMembership() ? SPARES : 0;
        Network network = namespaces
                ? NamespaceNetwork.create(settings.nodes() + spares, settings.runDir().resolve("netns.txt"))
                : LoopbackNetwork.forNodes(settings.nodes() + spares);
        Cluster cluster;
        try {
            cluster = Cluster.start(settings.nodes(), spares, network, nodesDir, settings.ratchetJar(), settings.nodeJvmOptions(),
                    settings.snapshotThreshold(), settings.tls() ? settings.runDir().resolve("tls") : null, nodeFaults,
                    settings.groups(), settings.load() > 0 ? Cluster.LOADED_QUOTA_MIB : Cluster.QUOTA_MIB);
        } catch (IOException | RuntimeException e) {
            network.close();
            throw e;
        }
        Thread cleanup = new Thread(cluster::close, "chaos-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        try {
            report.field("network", network.describe());
            if (spares > 0) {
                report.field("spares", spares + " node slots (n" + (settings.nodes() + 1) + "..n" + (settings.nodes() + spares)
                        + ") for the membership nemesis to start with --join");
            }
            log("started " + settings.nodes() + " nodes (" + network.describe() + "); waiting for a leader");
            cluster.awaitWritable(START_TIMEOUT);
            log("a write committed");
            // The first status call opens connections to every node, which takes a while; pay for it now
            // rather than in the nemesis' first look for the leader.
            cluster.leader();
            WorkloadUsers users = settings.auth() ? enableAuthentication(cluster, workloads) : null;
            // The history's clock starts here, so its times read as seconds into the run proper.
            history = History.toFile(settings.runDir().resolve("history.jsonl"));
            runClients(workloads, cluster, users);
        } finally {
            log("stopping the cluster");
            cluster.close();
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (IllegalStateException e) {
                // The JVM is shutting down: the hook runs (and finds nothing left to do).
            }
        }
    }

    /**
     * Adds the administrator and one user per workload, turns authentication on, and gives the harness'
     * own clients the administrator's token: before any workload or nemesis runs, so every operation they
     * make is checked.
     */
    private WorkloadUsers enableAuthentication(Cluster cluster, List<Workload> workloads) {
        WorkloadUsers users;
        try (RatchetClient bootstrap = RatchetClient.connect(cluster.options(cluster.peers()))) {
            users = WorkloadUsers.create(bootstrap, workloads);
        }
        cluster.authenticateAs(users.rootToken());
        report.field("users", users.describe());
        log("authentication on: " + (workloads.size() + 1) + " users");
        return users;
    }

    /**
     * Runs the workloads' processes while the nemeses act. With authentication on ({@code users} not null)
     * each workload's processes and its setup run as its own user; the final reads, like every other
     * client of the harness, as the administrator.
     */
    private void runClients(List<Workload> workloads, Cluster cluster, WorkloadUsers users) throws IOException, InterruptedException {
        ClientOptions options = cluster.options(cluster.peers())
                .withTimeouts(Duration.ofSeconds(3), 12, settings.operationTimeout());
        AtomicInteger ids = new AtomicInteger();
        Supplier<String> nextId = () -> Integer.toString(ids.getAndIncrement());
        Random random = new Random(settings.seed());
        BackgroundLoad background = settings.load() == 0 ? null
                : new BackgroundLoad(settings.load(), () -> RatchetClient.connect(options), settings.operationTimeout().plusSeconds(5));
        try (RatchetClient control = RatchetClient.connect(options)) {
            List<WorkerPool> pools = new ArrayList<>();
            for (Workload w : workloads) {
                ClientOptions own = users == null ? options
                        : options.withCredentials(cluster.tlsCredentials().withToken(users.tokenOf(w)));
                try (RatchetClient setup = RatchetClient.connect(own)) {
                    w.prepare(new ClientProcess(history, w.name(), () -> "setup", setup, random));
                }
                pools.add(new WorkerPool(w, settings.concurrency(), settings.rate(), history, nextId,
                        () -> RatchetClient.connect(own), settings.seed() + 1000L * (pools.size() + 1)));
            }
            List<NemesisLoop> loops = loops(nemeses(cluster));
            ResourceSampler resources = settings.resourceInterval().isZero() ? null
                    : new ResourceSampler(cluster, settings.resourceInterval(), settings.runDir().resolve("resources.jsonl"));
            if (resources != null) {
                resources.start();
            }
            log("running " + workloads.stream().map(Workload::name).toList() + " for " + settings.duration().toSeconds()
                    + " s under " + settings.nemesis().cliName());
            if (background != null) {
                background.start();
            }
            pools.forEach(WorkerPool::start);
            // The nemesis waits out the warm-up: the clients' first operations (connections, sessions, every
            // path run for the first time on nodes and harness) take seconds on a small machine, and a fault
            // then measures the start, not the fault.
            Thread.sleep(settings.warmup().toMillis());
            loops.forEach(NemesisLoop::start);
            Thread.sleep(settings.duration().minus(settings.warmup()).toMillis());
            log("stopping the nemesis and the clients");
            if (resources != null) {
                resources.close();
                report.blank().line("Resources (each node, resources.jsonl):");
                resources.summary().forEach(line -> report.line("  " + line));
            }
            NemesisLoop.stopAll(loops);
            int running = 0;
            int errors = 0;
            for (WorkerPool pool : pools) {
                running += pool.stop(settings.operationTimeout().plusSeconds(15));
                errors += pool.harnessErrors();
            }
            if (running > 0) {
                report.field("note", running + " client processes were still busy when the run ended; their open operations count as unknown");
            }
            if (background != null) {
                stopLoad(background);
            }
            if (errors > 0) {
                problems.add(errors + " unexpected errors in the harness' own worker code (see its standard error)");
            }
            IOException unhealed = null;
            for (NemesisLoop loop : loops) {
                try {
                    loop.nemesis().healAll();
                } catch (IOException e) {
                    unhealed = unhealed == null ? e : unhealed;
                }
                faults += loop.faults();
            }
            reportFaults(loops);
            if (unhealed != null) {
                throw unhealed;
            }
            log("healed; waiting for the cluster to settle");
            String settled = cluster.settle(SETTLE_TIMEOUT);
            report.line("After the run: " + settled);
            log("final reads");
            for (Workload w : workloads) {
                w.finalReads(new ClientProcess(history, w.name(), () -> "final", control, random));
            }
        } finally {
            // Also when the run fails: no load client may outlive it.
            if (background != null && load == null) {
                stopLoad(background);
            }
        }
    }

    /** Stops the load, closes its clients, and keeps what it did for the report and the summary. */
    private void stopLoad(BackgroundLoad background) {
        background.close();
        load = background.counts();
        report.blank().line("Load (unchecked): " + load.describe());
        if (background.stillRunning() > 0) {
            report.field("note", background.stillRunning() + " load clients were still busy when the load stopped");
        }
    }

    /** The nemeses that act at once, each on its own loop: none, one, or a membership nemesis and kill-leader. */
    private List<Nemesis> nemeses(Cluster cluster) {
        Optional<PartitionNemesis> partitions = cluster.network() instanceof NamespaceNetwork ns
                ? Optional.of(new PartitionNemesis(cluster, ns)) : Optional.empty();
        return switch (settings.nemesis()) {
            case NONE -> List.of();
            case KILL_LEADER -> List.of(KillNemesis.leader(cluster));
            case KILL_ANY -> List.of(KillNemesis.any(cluster));
            case PAUSE -> List.of(new PauseNemesis(cluster));
            case PARTITION -> List.of(partitions.orElseThrow());
            case MIXED -> {
                List<Nemesis> choices = new ArrayList<>(List.of(KillNemesis.leader(cluster), KillNemesis.any(cluster),
                        new PauseNemesis(cluster)));
                partitions.ifPresent(choices::add);
                yield List.of(new MixedNemesis(choices));
            }
            case MEMBERSHIP -> List.of(new MembershipNemesis(cluster));
            case MEMBERSHIP_KILL_LEADER -> List.of(new MembershipNemesis(cluster), KillNemesis.leader(cluster));
            case CLOCK -> List.of(new ClockNemesis(cluster));
            case DISK -> List.of(new DiskNemesis(cluster));
            case SLOW -> List.of(new SlowNemesis(cluster, CpuThrottle.open().orElseThrow()));
            case ALL -> {
                List<Nemesis> choices = new ArrayList<>(List.of(KillNemesis.leader(cluster), KillNemesis.any(cluster),
                        new PauseNemesis(cluster)));
                partitions.ifPresent(choices::add);
                if (cluster.faults().unavailable().isEmpty()) {
                    choices.add(new ClockNemesis(cluster));
                    choices.add(new DiskNemesis(cluster));
                }
                CpuThrottle.open().ifPresent(cpu -> choices.add(new SlowNemesis(cluster, cpu)));
                yield List.of(new MembershipNemesis(cluster), new MixedNemesis(choices));
            }
        };
    }

    /**
     * One loop a nemesis. A run's only loop draws from the run's seed and writes process {@code nemesis};
     * beside others, each draws from a seed of its own and writes {@code nemesis-<name>}, so that every
     * process has one operation open at a time.
     */
    private List<NemesisLoop> loops(List<Nemesis> nemeses) {
        List<NemesisLoop> loops = new ArrayList<>();
        for (Nemesis n : nemeses) {
            String process = nemeses.size() == 1 ? NemesisLoop.PROCESS : NemesisLoop.PROCESS + "-" + n.name();
            loops.add(new NemesisLoop(n, process, history, settings.quietSpell(), settings.faultSpell(),
                    new Random(settings.seed() + 7919L * loops.size())));
        }
        return loops;
    }

    private void reportFaults(List<NemesisLoop> loops) {
        Map<String, Integer> kinds = new TreeMap<>();
        int refused = 0;
        for (NemesisLoop loop : loops) {
            loop.kinds().forEach((kind, n) -> kinds.merge(kind, n, Integer::sum));
            refused += loop.refused();
        }
        report.blank().line("Faults (" + settings.nemesis().cliName() + "): " + faults
                + (kinds.isEmpty() ? "" : " " + kinds)
                + (refused == 0 ? "" : ", and " + refused + " not done (refused, or found not done after an unknown outcome)"));
        NemesisLoop.timeline(loops).forEach(t -> report.line("  " + t));
        for (NemesisLoop loop : loops) {
            loop.nemesis().notes().forEach(n -> report.line("  " + n));
            if (loop.nemesis() instanceof MembershipNemesis m) {
                changes = m.changes();
                membership = m.check();
            }
        }
    }

    /**
     * Builds the summary and finishes the report.
     *
     * @param forced "skipped" or "error" when no verdict is possible, else null
     */
    private Result finish(List<Op> ops, List<CheckResult> results, String forced, String error) {
        Availability gaps = faults == 0 ? null : Availability.of(ops, apart);
        if (settings.maxGap() != null && forced == null) {
            results = new ArrayList<>(results);
            results.add(gaps == null ? Availability.of(List.of(), apart).check(settings.maxGap()) : gaps.check(settings.maxGap()));
        }
        Verdict verdict = Verdict.of(results);
        List<Anomaly> anomalies = verdict.anomalies();
        Validity validity = problems.isEmpty() ? verdict.validity() : verdict.validity().and(Validity.UNKNOWN);
        String result = forced != null ? forced : validity.json();
        long invoked = Report.count(ops, OpType.INVOKE);
        long ok = Report.count(ops, OpType.OK);
        long failed = Report.count(ops, OpType.FAIL);
        Summary summary = new Summary("valid".equals(result), settings.workload(), settings.nemesis().cliName(),
                invoked, ok, failed, invoked - ok - failed, faults, changes, anomalies, result, verdict.checks(), details(results), skipped,
                settings.seed(), settings.nodes(), settings.duration().toMillis() / 1000.0,
                settings.testMode().json(), error,
                settings.runDir().toAbsolutePath().toString(), gaps == null ? null : gaps.json(settings.maxGap()), load,
                settings.security(),
                settings.auth() ? AuthRefusals.refusals(ops).size() : null);
        if (!ops.isEmpty()) {
            report.blank().line(String.format(Locale.ROOT, "Operations: %d (ok %d, failed %d, unknown %d)",
                    invoked, ok, failed, invoked - ok - failed));
            report.operations(ops);
        }
        if (gaps != null) {
            report.blank();
            gaps.report(settings.maxGap()).forEach(report::line);
        }
        if (!results.isEmpty()) {
            report.blank().line("Checks:").checks(results);
            report.blank().anomalies(anomalies, ops);
        }
        problems.forEach(p -> report.line("Problem: " + p));
        report.blank().line("Result: " + result.toUpperCase(Locale.ROOT) + (ops.isEmpty() ? "" : "   (history: history.jsonl, node logs: nodes/*.log)"));
        return new Result(summary, report.text());
    }

    /** Each check's figures for the summary, by workload; null when no check gives any. */
    private static Map<String, Map<String, Object>> details(List<CheckResult> results) {
        Map<String, Map<String, Object>> details = new TreeMap<>();
        for (CheckResult r : results) {
            if (!r.details().isEmpty()) {
                details.put(r.workload(), r.details());
            }
        }
        return details.isEmpty() ? null : details;
    }

    private void log(String message) {
        log.printf(Locale.ROOT, "chaos: [%5.1f s] %s%n", (System.nanoTime() - started) / 1e9, message);
        log.flush();
    }

    private static String trim(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }
}
