package io.ratchet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.node.ReferencePage;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code docs/reference/cli.md} is the {@code ratchet} command line, and its exit codes, as they are now. */
class CliReferenceTest {
    /** ErrorCode.java, from the repository: each code's meaning is its javadoc. */
    private static Path errorCodeSource() {
        return ReferencePage.directory().getParent().getParent()
                .resolve("client/src/main/java/io/ratchet/client/ErrorCode.java");
    }

    @Test
    void theCliReferenceIsTheCommandLineAsItIs() throws Exception {
        ReferencePage.check("cli.md", "cli", CliReferenceTest.class, CliReference.page(errorCodeSource()));
    }

    @Test
    void thePageListsTheCommandsRatchetHelpLists() {
        Map<String, List<String>> groups = new LinkedHashMap<>();
        CliReference.ratchet(groups);
        String help = CommandRun.of("--help").out();
        groups.forEach((heading, names) -> {
            assertTrue(help.contains("\n" + heading + ":\n"), heading + " is a heading of ratchet --help");
            names.forEach(name -> assertTrue(help.contains("\n  " + name + " "), name + " is listed by ratchet --help"));
        });
        assertEquals(groups.values().stream().mapToInt(List::size).sum(),
                help.lines().filter(l -> l.matches("  [a-z]+ {2,}\\S.*")).count(),
                "ratchet --help lists no command the page leaves out:\n" + help);
    }
}
