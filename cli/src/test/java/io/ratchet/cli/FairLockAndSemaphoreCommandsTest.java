package io.ratchet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.node.LocalCluster;
import io.ratchet.protocol.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code lock ... --fair} and {@code semaphore}: what a user types, against a real in-process cluster,
 * with the JSON fields and exit codes of {@code lock}. And every new command's help has its example.
 */
class FairLockAndSemaphoreCommandsTest {
    @TempDir
    Path dir;

    private record Run(int code, String out, String err) {
        JsonNode json() {
            String[] lines = out.strip().split("\n");
            return Json.parse(lines[lines.length - 1]);
        }
    }

    private static Run ratchet(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Run(code, out.toString(), err.toString());
    }

    private static Run on(String peers, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--peers", peers, "--json"));
        return ratchet(all.toArray(String[]::new));
    }

    @Test
    void aFairLockIsAcquiredRenewedAndReleasedByIndexAndASecondOwnerWaitsItsTurn() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            String peers = cluster.peers();
            Run alice = on(peers, "lock", "acquire", "printer", "--fair", "--lease", "30s", "--owner", "alice");
            assertEquals(ExitCode.DONE, alice.code(), alice.toString());
            JsonNode held = alice.json();
            assertTrue(held.get("acquired").asBoolean());
            assertEquals("alice", held.get("owner").asText());
            long token = held.get("token").asLong();
            assertEquals(token, held.get("index").asLong(), "the token is the entry's place, its index before any renewal");

            Run bob = on(peers, "lock", "acquire", "printer", "--fair", "--lease", "30s", "--wait", "300ms", "--owner", "bob");
            assertEquals(ExitCode.CONDITION_FAILED, bob.code(), bob.toString());
            assertFalse(bob.json().get("acquired").asBoolean());
            assertEquals("alice", bob.json().get("holder").get("owner").asText(), "the refusal names the holder");
            assertEquals(token, bob.json().get("holder").get("token").asLong());

            Run renewed = on(peers, "lock", "renew", "printer", "--fair", "--index", String.valueOf(token), "--lease", "30s");
            assertEquals(ExitCode.DONE, renewed.code(), renewed.toString());
            assertEquals(token, renewed.json().get("token").asLong(), "same token");
            long index = renewed.json().get("index").asLong();
            assertTrue(index > token);

            Run stale = on(peers, "lock", "release", "printer", "--fair", "--index", String.valueOf(token));
            assertEquals(ExitCode.CONDITION_FAILED, stale.code(), stale.toString());
            assertFalse(stale.json().get("released").asBoolean());
            Run released = on(peers, "lock", "release", "printer", "--fair", "--index", String.valueOf(index));
            assertEquals(ExitCode.DONE, released.code(), released.toString());
            assertTrue(released.json().get("released").asBoolean());

            Run plain = on(peers, "lock", "acquire", "printer", "--lease", "30s");
            assertEquals(ExitCode.DONE, plain.code(), "the plain lock of the same name is another item: " + plain);
            Run plainBob = on(peers, "lock", "acquire", "printer", "--lease", "30s", "--owner", "bob");
            assertEquals(ExitCode.CONDITION_FAILED, plainBob.code(), plainBob.toString());
            assertEquals(plain.json().get("token").asLong(), plainBob.json().get("holder").get("token").asLong(),
                    "the plain lock's refusal names its holder too");
            assertEquals(ExitCode.INVALID, on(peers, "lock", "acquire", "printer", "--fair", "--lease", "0s").code());
        }
    }

    @Test
    void aSemaphoreHasItsPermitsAndRefusesAnotherNumber() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            String peers = cluster.peers();
            List<JsonNode> holders = new ArrayList<>();
            for (String owner : List.of("a", "b")) {
                Run r = on(peers, "semaphore", "acquire", "pool", "--permits", "2", "--lease", "30s", "--owner", owner);
                assertEquals(ExitCode.DONE, r.code(), r.toString());
                assertEquals(2, r.json().get("permits").asInt());
                holders.add(r.json());
            }
            Run third = on(peers, "semaphore", "acquire", "pool", "--permits", "2", "--lease", "30s", "--wait", "200ms");
            assertEquals(ExitCode.CONDITION_FAILED, third.code(), third.toString());
            assertEquals(2, third.json().get("holders").size(), "it names both holders: " + third);

            Run mismatch = on(peers, "semaphore", "acquire", "pool", "--permits", "3", "--lease", "30s");
            assertEquals(ExitCode.INVALID, mismatch.code(), mismatch.toString());
            assertTrue(mismatch.err().contains("has 2 permits"), mismatch.err());

            long index = holders.get(0).get("index").asLong();
            Run renewed = on(peers, "semaphore", "renew", "pool", "--index", String.valueOf(index), "--lease", "30s");
            assertEquals(ExitCode.DONE, renewed.code(), renewed.toString());
            Run released = on(peers, "semaphore", "release", "pool", "--index", renewed.json().get("index").asText());
            assertEquals(ExitCode.DONE, released.code(), released.toString());
            assertEquals(ExitCode.CONDITION_FAILED,
                    on(peers, "semaphore", "release", "pool", "--index", String.valueOf(index)).code());
            assertEquals(ExitCode.DONE,
                    on(peers, "semaphore", "acquire", "pool", "--permits", "2", "--lease", "30s").code(), "a permit is free again");
        }
    }

    @Test
    void theNewCommandsAreListedAndEachHelpEndsWithItsExample() {
        String top = ratchet("--help").out();
        int locks = top.indexOf("\nLocks and reservations:\n");
        assertTrue(top.indexOf("  semaphore ") > locks && top.indexOf("  semaphore ") < top.indexOf("\nCluster:\n"), top);
        for (String[] command : new String[][] {{"semaphore"}, {"semaphore", "acquire"}, {"semaphore", "renew"},
                {"semaphore", "release"}, {"lock", "acquire"}}) {
            List<String> args = new ArrayList<>(List.of(command));
            args.add("--help");
            Run help = ratchet(args.toArray(String[]::new));
            assertEquals(0, help.code(), String.join(" ", command));
            assertTrue(help.out().contains("Example:\n  ratchet " + command[0]), help.out());
        }
        assertTrue(ratchet("lock", "acquire", "--help").out().contains("--fair"));
    }
}
