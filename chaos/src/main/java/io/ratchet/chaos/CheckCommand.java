package io.ratchet.chaos;

import io.ratchet.chaos.checker.BankChecker;
import io.ratchet.chaos.checker.CheckResult;
import io.ratchet.chaos.checker.Checker;
import io.ratchet.chaos.checker.ListAppendChecker;
import io.ratchet.chaos.checker.LockChecker;
import io.ratchet.chaos.checker.RegisterChecker;
import io.ratchet.chaos.checker.RenewChecker;
import io.ratchet.chaos.checker.ReservationChecker;
import io.ratchet.chaos.checker.Validity;
import io.ratchet.chaos.checker.Verdict;
import io.ratchet.chaos.checker.WatchChecker;
import io.ratchet.chaos.history.History;
import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.nemesis.NemesisLoop;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code scripts/chaos check HISTORY}: checks a recorded history again, without a cluster. */
@Command(name = "check", mixinStandardHelpOptions = true,
        description = "Checks a recorded history.jsonl again with the checker of every workload in it, and measures its "
                + "availability gaps when it holds faults (a run still going may be checked: its gaps so far).")
final class CheckCommand implements Callable<Integer> {
    @Parameters(index = "0", description = "a run's history.jsonl")
    Path history;

    @Option(names = "--check-budget", defaultValue = "60s", converter = DurationConverter.class,
            description = "the most the linearizability search may take (default ${DEFAULT-VALUE})")
    Duration budget;

    @Option(names = "--max-gap", converter = DurationConverter.class,
            description = "as the run's --max-gap: a gap longer than this is an anomaly; default: no limit")
    Duration maxGap;

    @Option(names = "--apart", split = ",",
            description = "workloads whose gaps are shown apart and not held to --max-gap, as a run with --abandon above 0 and "
                    + "several groups holds bank and append apart; default: none")
    Set<String> apart = Set.of();

    @Override
    public Integer call() throws Exception {
        List<Op> ops = History.read(history);
        Set<String> workloads = new LinkedHashSet<>();
        ops.stream().filter(ChaosRun::isClientOp).forEach(op -> workloads.add(op.workload()));
        List<CheckResult> results = new ArrayList<>();
        for (String workload : workloads) {
            results.add(checker(workload).check(ops.stream().filter(op -> workload.equals(op.workload())).toList()));
        }
        boolean faults = ops.stream().anyMatch(op -> NemesisLoop.PROCESS.equals(op.workload()) && "fault".equals(op.f()));
        Availability gaps = faults ? Availability.of(ops, new TreeSet<>(apart)) : null;
        if (gaps != null && maxGap != null) {
            results.add(gaps.check(maxGap));
        }
        Verdict verdict = Verdict.of(results);
        Report report = new Report().line("Checked " + history + ": " + ops.size() + " lines").blank();
        if (gaps != null) {
            gaps.report(maxGap).forEach(report::line);
            report.blank();
        }
        report.line("Checks:").checks(results).blank().anomalies(verdict.anomalies(), ops);
        System.out.print(report.text());
        Validity validity = verdict.validity();
        ObjectNode summary = Summary.JSON.createObjectNode().put("valid", validity == Validity.VALID).put("result", validity.json());
        summary.set("anomalies", Summary.JSON.valueToTree(verdict.anomalies()));
        System.out.println(summary);
        return validity == Validity.VALID ? 0 : validity == Validity.INVALID ? 1 : 3;
    }

    /** The checker of {@code workload}, as a run gives it ({@code CheckCommandTest} holds this to every workload). */
    Checker checker(String workload) {
        return switch (workload) {
            case RegisterChecker.WORKLOAD -> new RegisterChecker(budget);
            case ReservationChecker.WORKLOAD -> new ReservationChecker();
            case LockChecker.WORKLOAD -> new LockChecker();
            case LockChecker.FAIR_WORKLOAD -> LockChecker.fair();
            case LockChecker.SEMAPHORE_WORKLOAD -> LockChecker.semaphore();
            case RenewChecker.WORKLOAD -> new RenewChecker();
            case BankChecker.WORKLOAD -> new BankChecker();
            case WatchChecker.WORKLOAD -> new WatchChecker();
            case ListAppendChecker.WORKLOAD -> new ListAppendChecker(budget);
            default -> throw new IllegalArgumentException("the history holds a workload no checker knows: " + workload);
        };
    }
}
