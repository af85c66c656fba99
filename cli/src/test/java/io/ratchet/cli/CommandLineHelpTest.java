package io.ratchet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The command line helps a new user: help for every command, a near miss named, no cluster said at once. */
class CommandLineHelpTest {
    private static CommandRun ratchet(String... args) {
        return CommandRun.of(args);
    }

    @Test
    void everyFormOfHelpPrintsTheCommandsUsageWithAnExampleAndExitsZero() {
        for (String[] args : new String[][] {{"put", "--help"}, {"put", "-h"}, {"help", "put"}}) {
            CommandRun help = ratchet(args);
            assertEquals(0, help.code(), String.join(" ", args) + ": " + help);
            assertTrue(help.out().contains("Usage: ratchet put"), help.out());
            assertTrue(help.out().contains("Example:\n  ratchet put emails/ada@example.com"), help.out());
        }
        CommandRun nested = ratchet("lock", "acquire", "--help");
        assertEquals(0, nested.code());
        assertTrue(nested.out().contains("ratchet lock acquire printer-3 --lease 30s"), nested.out());
        assertEquals(0, ratchet("doc", "list", "-h").code());
    }

    @Test
    void theTopLevelHelpListsTheCommandsByGroupAndTheSharedOptions() {
        CommandRun help = ratchet("--help");
        assertEquals(0, help.code());
        String out = help.out();
        int items = out.indexOf("\nItems:\n");
        int documents = out.indexOf("\nDocuments:\n");
        int locks = out.indexOf("\nLocks and reservations:\n");
        int cluster = out.indexOf("\nCluster:\n");
        assertTrue(items >= 0 && items < documents && documents < locks && locks < cluster, out);
        assertTrue(out.indexOf("  get ") > items && out.indexOf("  get ") < documents, out);
        assertTrue(out.indexOf("  reserve ") > locks && out.indexOf("  reserve ") < cluster, out);
        assertTrue(out.indexOf("  status ") > cluster, out);
        for (String shared : new String[] {"--json", "--peers", "--timeout"}) {
            assertTrue(out.contains(shared), shared + " is listed with ratchet's own options: " + out);
        }
        assertEquals(help.out(), ratchet().out(), "a bare ratchet prints the same");
    }

    @Test
    void sharedOptionsAreTakenBeforeTheCommandAsWellAsAfterIt() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        for (String[] args : new String[][] {
                {"--json", "--peers", "127.0.0.1:" + port, "get", "k"},
                {"--peers=127.0.0.1:" + port, "get", "k", "--json"},
                {"get", "k", "--json", "--peers", "127.0.0.1:" + port},
                {"--json", "doc", "get", "users/7", "--peers", "127.0.0.1:" + port}}) {
            CommandRun r = ratchet(args);
            assertEquals(ExitCode.UNAVAILABLE, r.code(), String.join(" ", args) + ": " + r);
            assertTrue(r.out().contains("\"error\":\"cluster_unavailable\""), "--json was honoured: " + r);
            assertTrue(r.out().contains("\"code\":\"cluster_unavailable\""), "with its code: " + r);
            assertTrue(r.err().contains("127.0.0.1:" + port), "--peers was honoured: " + r);
        }
    }

    @Test
    void theVersionIsTheOneTheBuildWrote() {
        CommandRun version = ratchet("--version");
        assertEquals(0, version.code(), version.toString());
        assertTrue(version.out().matches("ratchet \\d+\\.\\d+\\.\\d+(-[A-Za-z0-9.]+)?\\R"), version.out());
    }

    @Test
    void aMisspeltCommandNamesTheNearestOne() {
        CommandRun typo = ratchet("gte", "emails/ada@example.com");
        assertEquals(ExitCode.INVALID, typo.code());
        assertTrue(typo.err().contains("'gte' is not a command. Did you mean 'get'?"), typo.err());
        assertTrue(ratchet("lsit").err().contains("Did you mean 'list'?"));
        assertTrue(ratchet("stauts").err().contains("Did you mean 'status'?"));
        assertTrue(!ratchet("frobnicate").err().contains("Did you mean"), "no suggestion for a word far from every command");
    }

    @Test
    void nearestCountsASwapOfNeighboursAsOneEdit() {
        assertEquals(1, Suggestions.distance("gte", "get"));
        assertEquals(Optional.of("get"), Suggestions.nearest("gte", Set.of("get", "delete", "put")));
        assertEquals(Optional.empty(), Suggestions.nearest("xyzzy", Set.of("get", "put")));
    }

    @Test
    void withNoClusterRunningACommandSaysSoAtOnceNamingTheAddresses() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        long start = System.nanoTime();
        CommandRun none = ratchet("get", "k", "--peers", "127.0.0.1:" + port);
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertEquals(ExitCode.UNAVAILABLE, none.code(), none.toString());
        assertTrue(none.err().contains("127.0.0.1:" + port) && none.err().contains("scripts/cluster start"), none.err());
        // Said within about two seconds, not after the whole --timeout (15 s) of retries.
        assertTrue(took.toMillis() < 3_000, "took " + took.toMillis() + " ms");
    }
}
