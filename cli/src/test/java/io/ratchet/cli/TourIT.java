package io.ratchet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.cli.ScriptRunner.Run;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's five-minute tour, run line by line as a user types it, against a cluster of its own that
 * {@code scripts/cluster start} starts (on free ports, under a temporary data directory). The getting-started
 * guide shows the same lines. A line is expected to exit 0 unless its comment says {@code exit N}; the node
 * that {@code scripts/cluster start-node} restarts is the one {@code kill-leader} printed (the tour's comment
 * gives an example id).
 */
class TourIT {
    private static final Pattern EXIT = Pattern.compile("#.*\\bexit (\\d+)");

    @TempDir
    Path data;
    private ScriptRunner scripts;

    @AfterEach
    void stop() throws Exception {
        if (scripts != null) {
            scripts.stopAndKeepLogs("TourIT");
        }
    }

    @Test
    void theToursLinesDoWhatTheirCommentsSay() throws Exception {
        List<String> tour = tourOf(ScriptRunner.HOME.resolve("README.md"));
        assertEquals(tour, tourOf(ScriptRunner.HOME.resolve("docs/GETTING-STARTED.md")),
                "the README and the getting-started guide show the same tour");
        assertTrue(tour.size() >= 6, "a tour: " + tour);

        scripts = new ScriptRunner(data, 3);
        Run started = scripts.run(List.of("scripts/cluster", "start"), 240);
        assertEquals(0, started.code(), started.toString());
        String killed = null;
        List<String> outputs = new ArrayList<>();
        for (String line : tour) {
            String command = line;
            if (killed != null && command.startsWith("scripts/cluster start-node ")) {
                command = command.replaceFirst("start-node \\S+", "start-node " + killed);
            }
            Matcher exit = EXIT.matcher(line);
            int expected = exit.find() ? Integer.parseInt(exit.group(1)) : 0;
            Run run = scripts.run(List.of("bash", "-c", command), 120);
            assertEquals(expected, run.code(), line + "\n" + run);
            outputs.add(run.out());
            if (command.startsWith("scripts/cluster kill-leader")) {
                List<String> said = run.out().strip().lines().toList();
                killed = said.get(said.size() - 1);
            }
        }
        assertTrue(killed != null && killed.matches("n\\d"), "kill-leader printed the node it killed: " + killed);
        // What the comments promise: the taken key shows its owner, and it is still read after the kill.
        assertTrue(outputs.get(1).contains("users/1"), "the refused put carries the current value: " + outputs.get(1));
        assertTrue(outputs.get(2).contains("token"), "the lock's fencing token is printed: " + outputs.get(2));
        int readBack = tour.indexOf(tour.stream().filter(l -> l.startsWith("scripts/ratchet get ")).findFirst().orElseThrow());
        assertTrue(outputs.get(readBack).contains("users/1"), "read back after the leader kill: " + outputs.get(readBack));
    }

    /** The indented lines right under the "A five-minute tour" heading of {@code markdown}. */
    static List<String> tourOf(Path markdown) throws Exception {
        List<String> lines = Files.readAllLines(markdown, StandardCharsets.UTF_8);
        int at = lines.indexOf("## A five-minute tour");
        assertTrue(at >= 0, markdown + " has a tour");
        List<String> tour = new ArrayList<>();
        boolean in = false;
        for (String line : lines.subList(at + 1, lines.size())) {
            if (line.startsWith("    ")) {
                in = true;
                tour.add(line.strip());
            } else if (in) {
                break;
            } else if (line.startsWith("## ")) {
                break;
            }
        }
        return tour;
    }
}
