package io.ratchet.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.OpType;
import io.ratchet.chaos.nemesis.NemesisLoop;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code scripts/chaos check} measures a history's availability gaps as a run does, and reads the history of
 * a run still going, whose last line may be half written.
 */
class CheckCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private final List<String> lines = new ArrayList<>();
    private long index;

    private void line(long millis, String process, OpType type, String workload, String f, String input, String output)
            throws IOException {
        lines.add(JSON.writeValueAsString(new Op(index++, millis * 1_000_000, process, type, workload, f, "locks/renew-1",
                JSON.readTree(input), output == null ? null : JSON.readTree(output), null)));
    }

    /** A renew workload that renews every 100 ms, and one leader kill after which nothing lands for 2.5 s. */
    private Path history(String tail) throws IOException {
        line(0, "1", OpType.INVOKE, "renew", "acquire", "{\"owner\":\"r1\",\"lease_ms\":5000}", null);
        line(5, "1", OpType.OK, "renew", "acquire", "{\"owner\":\"r1\",\"lease_ms\":5000}", "{\"granted\":true}");
        long t = 100;
        for (; t < 1_000; t += 100) {
            renew(t, t + 5);
        }
        line(1_000, NemesisLoop.PROCESS, OpType.INVOKE, NemesisLoop.PROCESS, "fault", "{}", null);
        line(1_001, NemesisLoop.PROCESS, OpType.OK, NemesisLoop.PROCESS, "fault", "{}",
                "{\"kind\":\"kill\",\"fault\":\"killed n2 (the leader, pid 4711)\"}");
        renew(1_100, 3_600);
        for (t = 3_700; t < 9_000; t += 100) {
            renew(t, t + 5);
        }
        Path file = dir.resolve("history.jsonl");
        Files.writeString(file, String.join("\n", lines) + "\n" + tail, StandardCharsets.UTF_8);
        return file;
    }

    private void renew(long from, long to) throws IOException {
        String input = "{\"owner\":\"r1\",\"lease_ms\":5000,\"token\":7,\"index\":7}";
        line(from, "1", OpType.INVOKE, "renew", "renew", input, null);
        line(to, "1", OpType.OK, "renew", "renew", input, "{\"renewed\":true,\"index\":9}");
    }

    private static int run(StringBuilder out, String... args) {
        PrintStream before = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            return new CommandLine(new CheckCommand()).execute(args);
        } finally {
            System.setOut(before);
            out.append(bytes.toString(StandardCharsets.UTF_8));
        }
    }

    @Test
    void aGapOverMaxGapFailsTheCheckAsItFailsTheRun() throws IOException {
        Path file = history("");
        StringBuilder out = new StringBuilder();

        int exit = run(out, file.toString(), "--max-gap", "2s");

        assertEquals(1, exit, out.toString());
        assertTrue(out.toString().contains("Availability: per fault and workload"), out.toString());
        assertTrue(out.toString().contains("renew gap-over-max"), out.toString());
        StringBuilder again = new StringBuilder();
        assertEquals(0, run(again, file.toString(), "--max-gap", "3s"), again.toString());
        assertTrue(again.toString().contains("2,500 ms"), "the gap, from the renewal sent at 1.1 s to its answer at 3.6 s: " + again);
    }

    @Test
    void everyWorkloadTheHarnessRunsHasTheSameCheckerHere() {
        CheckCommand check = new CheckCommand();
        check.budget = Duration.ofSeconds(1);
        for (String name : Workloads.NAMES.split(", ")) {
            if (!name.equals("all")) {
                assertEquals(name, check.checker(name).workload(), "scripts/chaos check knows " + name);
            }
        }
    }

    @Test
    void theHalfWrittenLastLineOfARunStillGoingIsLeftOut() throws IOException {
        Path file = history("{\"index\":999,\"time\":9100000000,\"process\":\"1\",\"ty");
        StringBuilder out = new StringBuilder();

        assertEquals(0, run(out, file.toString()), out.toString());
        assertTrue(out.toString().contains("renew         valid"), out.toString());
        // A finished history ends in a newline: a bad last line there is an error, not left out.
        Path ended = history("{\"index\":999,\"ty\n");
        assertTrue(run(new StringBuilder(), ended.toString()) != 0, "a broken line of a finished history is refused");
    }
}
