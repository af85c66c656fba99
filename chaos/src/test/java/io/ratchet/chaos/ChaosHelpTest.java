package io.ratchet.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code scripts/chaos --help} names every nemesis and every workload the harness accepts: the help once
 * listed eight nemeses while the harness took twelve (clock, disk, slow and all were missing).
 */
class ChaosHelpTest {
    /** What {@code scripts/chaos --help} prints: the harness' own help (the script passes --help through). */
    static String help() {
        StringWriter out = new StringWriter();
        CommandLine cli = new CommandLine(new ChaosCommand());
        cli.setOut(new PrintWriter(out, true));
        assertEquals(0, cli.execute("--help"));
        return out.toString();
    }

    /** The words of one option's entry in the help: its first line and the lines that continue its description. */
    static Set<String> wordsOf(String help, String option) {
        List<String> lines = help.lines().toList();
        int first = -1;
        for (int i = 0; i < lines.size() && first < 0; i++) {
            if (lines.get(i).trim().startsWith(option + "=")) {
                first = i;
            }
        }
        assertTrue(first >= 0, option + " is in the help:\n" + help);
        StringBuilder entry = new StringBuilder(lines.get(first).trim().substring(option.length()));
        // A description's continuation lines are indented to its column; the next option's line is not.
        for (int i = first + 1; i < lines.size() && lines.get(i).startsWith(" ".repeat(12)); i++) {
            entry.append(' ').append(lines.get(i).trim());
        }
        return Arrays.stream(entry.toString().split("[\\s,()]+")).filter(w -> !w.isEmpty()).collect(Collectors.toSet());
    }

    @Test
    void theHelpNamesEveryNemesisTheHarnessAccepts() {
        Set<String> listed = wordsOf(help(), "--nemesis");
        List<String> missing = Arrays.stream(NemesisKind.values()).map(NemesisKind::cliName)
                .filter(name -> NemesisKind.parse(name) != null && !listed.contains(name)).toList();
        assertEquals(List.of(), missing, "accepted by --nemesis but not in --help (it lists " + listed + ")");
    }

    @Test
    void theHelpNamesEveryWorkloadTheHarnessAccepts() {
        Set<String> listed = wordsOf(help(), "--workload");
        List<String> accepted = Arrays.asList(Workloads.NAMES.split(", "));
        accepted.forEach(Workloads::check);
        List<String> missing = accepted.stream().filter(name -> !listed.contains(name)).toList();
        assertEquals(List.of(), missing, "accepted by --workload but not in --help (it lists " + listed + ")");
    }
}
