package io.ratchet.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The harness as CI runs it: {@code scripts/chaos} against real node JVMs. Every wired workload runs
 * under kill-leader in one run (they share a cluster, which keeps this near a minute on a 2-core
 * machine); a second run uses a deliberately broken client that the register checker must catch, so the
 * harness is known to be able to fail; a third grows, shrinks and replaces nodes; a fourth runs on TLS with
 * authentication on; two more step nodes' clocks and break their disks; one runs list-append transactions
 * across four groups; one measures availability gaps beside an unchecked load, under {@code --max-gap}. Runs after packaging (failsafe), with the node jar built by the reactor.
 */
class ChaosHarnessIT {
    private static final Path HOME = Path.of(System.getProperty("ratchet.home", "..")).toAbsolutePath().normalize();
    private static final Path RUNS = Path.of(System.getProperty("ratchet.chaos.runs", "target/chaos-it")).toAbsolutePath();
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Run all;

    @BeforeAll
    static void runEveryWorkloadWhileLeadersAreKilled() throws Exception {
        all = chaos("all-kill-leader", "--workload", "all", "--nemesis", "kill-leader", "--duration", "20s", "--seed", "7");
    }

    @Test
    void theRunUnderKillLeaderIsValidAndTheNemesisActed() {
        assertEquals(0, all.code, all.toString());
        assertTrue(all.summary.get("valid").asBoolean());
        assertEquals("kill-leader", all.summary.get("nemesis").asText());
        assertTrue(all.summary.get("faults").asInt() >= 1, "at least one leader was killed: " + all.summary);
        assertEquals(0, all.summary.get("anomalies").size());
        long ops = all.summary.get("ops").asLong();
        assertEquals(ops, all.summary.get("ok").asLong() + all.summary.get("failed").asLong() + all.summary.get("unknown").asLong());
        assertTrue(Files.exists(all.dir.resolve("report.txt")));
    }

    @Test
    void registerHistoryIsLinearizable() throws IOException {
        assertEquals("valid", all.summary.path("checks").path("register").asText(), all.toString());
        assertTrue(answered(all, "register") >= 10, "the register workload ran: " + answered(all, "register"));
    }

    @Test
    void reservationsStayUniqueAndAcknowledgedOnesSurvive() throws IOException {
        assertEquals("valid", all.summary.path("checks").path("reservations").asText(), all.toString());
        assertTrue(answered(all, "reservations") >= 10);
    }

    @Test
    void lockHoldersNeverOverlapAndTokensRise() throws IOException {
        assertEquals("valid", all.summary.path("checks").path("locks").asText(), all.toString());
        assertTrue(answered(all, "locks") >= 10);
    }

    @Test
    void fairLockHoldersAreServedInTurnNeverOverlapAndTokensRise() throws IOException {
        assertEquals("valid", all.summary.path("checks").path("fair-lock").asText(), all.toString());
        assertTrue(answered(all, "fair-lock") >= 10, "the fair-lock workload ran: " + answered(all, "fair-lock"));
    }

    @Test
    void semaphoreHoldersNeverExceedItsPermits() throws IOException {
        assertEquals("valid", all.summary.path("checks").path("semaphore").asText(), all.toString());
        assertTrue(answered(all, "semaphore") >= 10, "the semaphore workload ran: " + answered(all, "semaphore"));
    }

    @Test
    void aHolderThatRenewsKeepsItsLockThroughLeaderKills() throws IOException {
        assertEquals("valid", all.summary.path("checks").path("renew").asText(), all.toString());
        assertTrue(answered(all, "renew") >= 10, "the renew workload ran: " + answered(all, "renew"));
    }

    @Test
    void bankTransfersConserveTheTotalAndEveryReadSeesIt() throws IOException {
        assertEquals("valid", all.summary.path("checks").path("bank").asText(), all.toString());
        assertTrue(answered(all, "bank") >= 10, "the bank workload ran: " + answered(all, "bank"));
    }

    @Test
    void watchersSeeEveryChangeBeforeThemAndNoneOverruns() throws IOException {
        assertEquals("valid", all.summary.path("checks").path("watch").asText(), all.toString());
        assertTrue(answered(all, "watch") >= 10, "the watch workload ran: " + answered(all, "watch"));
    }

    @Test
    void appendTransactionsInOneGroupAreStrictlySerializable() throws IOException {
        assertEquals("valid", all.summary.path("checks").path("append").asText(), all.toString());
        assertEquals("strict-serializable", all.summary.path("details").path("append").path("model").asText(), all.toString());
        assertTrue(answered(all, "append") >= 10, "the append workload ran: " + answered(all, "append"));
    }

    /**
     * List-append transactions on four groups while leaders are killed: single-group ones beside ones across
     * groups, and one in twenty of those abandoned by its coordinator half way. No anomaly, and at least the
     * model docs/DESIGN.md promises (strict serializability within a group, serializability across).
     */
    @Test
    void appendTransactionsAcrossFourGroupsAreSerializable() throws Exception {
        Run run = chaos("append-groups", "--workload", "append", "--groups", "4", "--nemesis", "kill-leader",
                "--duration", "15s", "--abandon", "0.05", "--seed", "9");
        assertEquals(0, run.code, run.toString());
        assertEquals("valid", run.summary.path("checks").path("append").asText(), run.toString());
        JsonNode append = run.summary.path("details").path("append");
        assertTrue(List.of("strict-serializable", "serializable+strict-per-group").contains(append.path("model").asText()),
                "the model promised: " + append);
        assertTrue(append.path("cross_group").asInt() >= 20, "transactions crossed groups: " + append);
        assertTrue(append.path("committed").asInt() >= 20, "transactions committed: " + append);
        assertTrue(run.summary.get("faults").asInt() >= 1, "at least one leader was killed: " + run.summary);
        assertNodesGone(run.dir);
    }

    /**
     * Gaps on a busy cluster: two unchecked load clients run reserve and update at full speed beside the
     * register and reservations workloads while leaders are killed, under a limit no kill should reach here.
     * The run passes the limit's check, the summary gives the gaps by kind of fault and by workload and names
     * the worst, and the load did its work and stopped with the run.
     */
    @Test
    void gapsAreMeasuredBesideALoadAndHeldToMaxGap() throws Exception {
        Run run = chaos("gaps-load", "--workload", "register,reservations", "--nemesis", "kill-leader", "--duration", "15s",
                "--interval", "3s", "--fault-duration", "3s", "--load", "2", "--max-gap", "30s", "--seed", "13");
        assertEquals(0, run.code, run.toString());
        assertEquals("valid", run.summary.path("checks").path("availability").asText(), run.toString());
        assertTrue(run.summary.get("faults").asInt() >= 1, "at least one leader was killed: " + run.summary);

        JsonNode gaps = run.summary.path("gaps");
        assertEquals(run.summary.get("faults").asInt(), gaps.path("by_fault").path("kill").path("faults").asInt(), gaps.toString());
        assertTrue(gaps.path("by_fault").path("kill").path("write_ms").has("median"), gaps.toString());
        for (String workload : List.of("register", "reservations")) {
            assertTrue(gaps.path("by_workload").path(workload).path("write_ms").path("worst").asLong(-1) >= 0, gaps.toString());
        }
        assertTrue(gaps.path("by_workload").path("register").has("read_ms"), "the register workload reads: " + gaps);
        assertTrue(List.of("register", "reservations").contains(gaps.path("worst").path("workload").asText()), gaps.toString());
        assertEquals(30_000, gaps.path("max_ms").asLong());
        assertEquals(0, gaps.path("over_max").asInt());

        JsonNode load = run.summary.path("load");
        assertEquals(2, load.path("clients").asInt(), load.toString());
        assertTrue(load.path("reserved").asLong() >= 50 && load.path("updated").asLong() >= 50, "the load ran: " + load);
        String report = Files.readString(run.dir.resolve("report.txt"));
        assertTrue(report.contains("Availability: per fault and workload") && report.contains("Load (unchecked): 2 client instances"),
                report);
        assertNodesGone(run.dir);
    }

    @Test
    void everyNodeProcessIsGoneAfterTheRun() throws IOException {
        assertNodesGone(all.dir);
    }

    @Test
    void theFirstRunsNodesLeaveAClassDataArchiveForTheRunsAfter() throws IOException {
        try (Stream<Path> files = Files.list(HOME.resolve("node/target/cds"))) {
            List<String> names = files.map(f -> f.getFileName().toString()).toList();
            assertTrue(names.stream().anyMatch(n -> n.matches("chaos-\\p{XDigit}{8}\\.jsa")), names.toString());
            assertTrue(names.stream().noneMatch(n -> n.startsWith("chaos-") && n.endsWith(".tmp")), "every one written was kept or dropped: " + names);
        }
    }

    @Test
    void aClientThatIgnoresConditionsIsCaught() throws Exception {
        Run broken = chaos("broken-client", "--workload", "register", "--nemesis", "none", "--duration", "8s", "--seed", "11",
                "--test-break-conditional-puts");
        assertEquals(1, broken.code, broken.toString());
        assertFalse(broken.summary.get("valid").asBoolean());
        assertEquals("unconditional-puts", broken.summary.get("test_mode").asText());
        assertEquals("invalid", broken.summary.path("checks").path("register").asText());
        boolean lostUpdate = false;
        for (JsonNode anomaly : broken.summary.get("anomalies")) {
            lostUpdate |= anomaly.get("workload").asText().equals("register") && anomaly.get("type").asText().equals("not-linearizable");
        }
        assertTrue(lostUpdate, "the register checker names the lost update: " + broken.summary);
        assertNodesGone(broken.dir);
    }

    /**
     * Membership alone, kept short for the build, on two Raft groups (each change is made in both, and the
     * membership check is valid only when both groups ended with the same voters); the long runs mix it with
     * kill-leader (chaos/README.md), where Ratis 3.3.0's dropped configuration showed before the state
     * machine mended it (ConfigurationAfterTruncationTest plays that case on its own).
     */
    @Test
    void registersStayLinearizableWhileMembersComeAndGo() throws Exception {
        Run run = chaos("membership", "--workload", "register", "--nemesis", "membership", "--groups", "2",
                "--duration", "25s", "--interval", "2s", "--fault-duration", "2s", "--seed", "5");
        assertEquals(0, run.code, run.toString());
        assertEquals("valid", run.summary.path("checks").path("register").asText(), run.toString());
        assertEquals("valid", run.summary.path("checks").path("membership").asText(), "voters changed only as asked: " + run);
        assertEquals(0, run.summary.get("anomalies").size());
        assertTrue(answered(run, "register") >= 10, "the register workload ran: " + answered(run, "register"));

        JsonNode changes = run.summary.get("changes");
        int done = changes.get("added").asInt() + changes.get("removed").asInt() + changes.get("transferred").asInt();
        assertTrue(done >= 1, "the membership nemesis changed something: " + changes);
        assertEquals(0, changes.get("refused_but_done").asInt(), "no refusal the configuration contradicts: " + changes);
        List<String> kinds = faultKinds(run);
        assertTrue(kinds.stream().anyMatch(k -> List.of("grow", "shrink", "replace", "transfer").contains(k)),
                "membership changed: " + kinds);

        List<Long> pids = pids(run.dir);
        assertTrue(pids.size() >= 3 && pids.size() <= 5, "a pid file for each node started, spares included: " + pids);
        assertNodesGone(run.dir, pids.size());
    }

    /**
     * The same harness on a cluster with TLS on every port and authentication on: the register workload
     * runs as a user allowed only {@code register/}, the harness (status, kills, final reads) as root, and
     * no operation may be refused for its token or permissions, across leader kills and restarts.
     */
    @Test
    void registersStayLinearizableOnATlsClusterWithAuthentication() throws Exception {
        Run run = chaos("tls-auth", "--workload", "register", "--nemesis", "kill-leader", "--duration", "12s", "--seed", "3",
                "--tls", "--auth");
        assertEquals(0, run.code, run.toString());
        assertEquals("tls+auth", run.summary.get("security").asText());
        assertEquals("valid", run.summary.path("checks").path("register").asText(), run.toString());
        assertEquals("valid", run.summary.path("checks").path("auth").asText(), run.toString());
        assertEquals(0, run.summary.get("auth_refusals").asInt(), "no token or permission refused: " + run);
        assertTrue(run.summary.get("faults").asInt() >= 1, "at least one leader was killed: " + run.summary);
        assertTrue(answered(run, "register") >= 10, "the register workload ran: " + answered(run, "register"));
        String config = Files.readString(run.dir.resolve("nodes/n1.properties"));
        assertTrue(config.contains("tls.cert=") && config.contains("tls.key=") && config.contains("tls.ca="), config);
        assertNodesGone(run.dir);
    }

    /**
     * Leaders' wall clocks stepped minutes ahead and back, and a node restarted on a clock seconds ahead and
     * made the leader: leases are judged on cluster time, which each leader carries on from the stamps it saw,
     * on its monotonic clock, so no lease ends early, no two holders overlap and a renewed lock is kept.
     * (Stamped on the wall clock, a run found two holders at once, and a 60 s run twelve; with a new leader
     * stamping its own clock as it found it, this run found ten anomalies, lost renewals and two holders.)
     */
    @Test
    void lockHoldersNeverOverlapWhileNodesClocksStep() throws Exception {
        Run run = chaos("clock", "--workload", "locks,renew", "--nemesis", "clock", "--duration", "22s",
                "--interval", "2s", "--fault-duration", "3s", "--seed", "3");
        assertEquals(0, run.code, run.toString());
        assertEquals("valid", run.summary.path("checks").path("locks").asText(), run.toString());
        assertEquals("valid", run.summary.path("checks").path("renew").asText(), run.toString());
        List<String> faults = faultDescriptions(run);
        assertTrue(faults.stream().anyMatch(f -> f.startsWith("stepped the clock of")), "a running clock was stepped: " + faults);
        assertTrue(faults.stream().anyMatch(f -> f.contains(" s ahead; ") && f.endsWith("made it the leader")),
                "a node restarted on a clock ahead was made the leader: " + faults);
        assertTrue(answered(run, "locks") >= 10, "the locks workload ran: " + answered(run, "locks"));
        assertTrue(answered(run, "renew") >= 10, "the renew workload ran: " + answered(run, "renew"));
        assertTrue(nodeLogs(run).contains("a step, not a drift"), "a node saw its wall clock step");
        assertNodesGone(run.dir);
    }

    /**
     * Disks that stall their fsyncs for seconds, or fail with EIO: a node whose disk fails halts rather than
     * serve on a log that refuses every append, the others go on, and healed it comes back from its own
     * storage; nothing acknowledged is lost.
     */
    @Test
    void registersStayLinearizableWhileDisksStallAndFail() throws Exception {
        Run run = chaos("disk", "--workload", "register", "--nemesis", "disk", "--duration", "25s",
                "--interval", "2s", "--fault-duration", "3s", "--seed", "26");
        assertEquals(0, run.code, run.toString());
        assertEquals("valid", run.summary.path("checks").path("register").asText(), run.toString());
        List<String> kinds = faultKinds(run);
        assertTrue(kinds.contains("disk-error") && kinds.contains("slow-disk"), "both disk faults were made: " + kinds);
        assertTrue(nodeLogs(run).contains("halts: its disk failed"), "a node whose disk failed halted");
        // This seed's first fault stalls the leader's fsyncs 1.7 s each (its draws: the leader, a stall, 1,683 ms;
        // then an error on any node): past the 1 s a leader's log may go unflushed, so it hands leadership over
        // rather than hold every write up. (Seed 11, used before, drew "any node" first, and so stalled the
        // leader only when the first election happened to go to n1.)
        assertTrue(nodeLogs(run).contains("its disk stalls, and every write waits for it; handing leadership to"),
                "the leader whose disk stalled handed leadership over: " + faultKinds(run));
        assertTrue(Files.readString(run.dir.resolve("report.txt")).contains("After the run: settled"),
                "every member caught up after the run: " + run);
        assertTrue(answered(run, "register") >= 10, "the register workload ran: " + answered(run, "register"));
        assertNodesGone(run.dir);
    }

    // ---- helpers

    /** Every node's log of the run, one after another. */
    private static String nodeLogs(Run run) throws IOException {
        StringBuilder all = new StringBuilder();
        try (Stream<Path> files = Files.list(run.dir.resolve("nodes"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".log")).sorted().toList()) {
                all.append(Files.readString(f, StandardCharsets.UTF_8));
            }
        }
        return all.toString();
    }

    /** The run left one pid file per node, and none of those processes still runs. */
    private static void assertNodesGone(Path runDir) throws IOException {
        assertNodesGone(runDir, 3);
    }

    private static void assertNodesGone(Path runDir, int nodes) throws IOException {
        List<Long> pids = pids(runDir);
        assertEquals(nodes, pids.size(), "one pid file per node");
        for (long pid : pids) {
            assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "node pid " + pid + " still runs");
        }
    }

    /** Client operations of {@code workload} that got an answer, final reads aside. */
    private static long answered(Run run, String workload) throws IOException {
        try (Stream<String> lines = Files.lines(run.dir.resolve("history.jsonl"))) {
            return lines.map(ChaosHarnessIT::parse)
                    .filter(op -> op.get("type").asText().equals("ok") && op.get("workload").asText().equals(workload)
                            && !op.get("process").asText().equals("final"))
                    .count();
        }
    }

    /** The kind of every fault the nemeses injected, in order ({@code kill}, {@code grow}, ...). */
    private static List<String> faultDescriptions(Run run) throws IOException {
        return faults(run).stream().map(f -> f.path("fault").asText()).toList();
    }

    private static List<String> faultKinds(Run run) throws IOException {
        return faults(run).stream().map(f -> f.path("kind").asText()).toList();
    }

    /** The faults the nemesis made, as the history records them. */
    private static List<JsonNode> faults(Run run) throws IOException {
        try (Stream<String> lines = Files.lines(run.dir.resolve("history.jsonl"))) {
            return lines.map(ChaosHarnessIT::parse)
                    .filter(op -> op.get("workload").asText().equals("nemesis") && op.get("type").asText().equals("ok")
                            && op.get("f").asText().equals("fault"))
                    .map(op -> op.path("output"))
                    .toList();
        }
    }

    private static List<Long> pids(Path dir) throws IOException {
        List<Long> pids = new ArrayList<>();
        Path nodes = dir.resolve("nodes");
        if (Files.isDirectory(nodes)) {
            try (Stream<Path> files = Files.list(nodes)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".pid")).toList()) {
                    pids.add(Long.parseLong(Files.readString(f).trim()));
                }
            }
        }
        return pids;
    }

    record Run(int code, JsonNode summary, Path dir, String out, String err) {
        @Override
        public String toString() {
            return "exit " + code + "\nsummary: " + summary + "\nstdout:\n" + out + "\nstderr (tail):\n"
                    + err.substring(Math.max(0, err.length() - 4000));
        }
    }

    /** Runs {@code scripts/chaos} into a fresh directory; on a hang, stops it (and anything it left) and fails. */
    private static Run chaos(String name, String... args) throws IOException, InterruptedException {
        Path dir = RUNS.resolve(name);
        delete(dir);
        Files.createDirectories(RUNS);
        Path out = RUNS.resolve(name + ".out");
        Path err = RUNS.resolve(name + ".err");
        List<String> command = new ArrayList<>(List.of("scripts/chaos"));
        command.addAll(List.of(args));
        command.addAll(List.of("--out", dir.toString()));
        ProcessBuilder pb = new ProcessBuilder(command).directory(HOME.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().remove("RATCHET_PEERS");
        Process p = pb.start();
        if (!p.waitFor(300, TimeUnit.SECONDS)) {
            p.destroy(); // SIGTERM: the launcher forwards it and the harness stops its nodes on the way out
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            for (long pid : pids(dir)) {
                ProcessHandle.of(pid).filter(h -> h.info().commandLine().orElse("").contains(dir.toString()))
                        .ifPresent(ProcessHandle::destroyForcibly);
            }
            throw new AssertionError(command + " did not finish in 300 s; see " + err);
        }
        String stdout = Files.readString(out, StandardCharsets.UTF_8);
        String[] lines = stdout.strip().split("\n");
        JsonNode summary = parse(lines[lines.length - 1]);
        return new Run(p.exitValue(), summary, dir, stdout, Files.readString(err, StandardCharsets.UTF_8));
    }

    private static JsonNode parse(String line) {
        try {
            return JSON.readTree(line);
        } catch (IOException e) {
            throw new AssertionError("not a JSON line: " + line, e);
        }
    }

    private static void delete(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (Stream<Path> paths = Files.walk(dir)) {
                for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }
}
