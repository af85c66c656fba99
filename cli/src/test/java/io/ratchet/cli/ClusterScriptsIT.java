package io.ratchet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.cli.ScriptRunner.Run;
import io.ratchet.protocol.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator's scripts on a real local cluster with TLS on every port, as docs/OPERATING.md's "Operating a
 * cluster" runs them: {@code scripts/cluster start --tls}, then growing, replacing a wiped node,
 * shrinking, a backup, and a restore, with the tour's {@code scripts/ratchet} commands unchanged (it
 * finds the cluster's CA as it finds the peers). Runs after packaging (failsafe).
 */
class ClusterScriptsIT {
    @TempDir
    static Path data;
    private static ScriptRunner scripts;

    @BeforeAll
    static void startCluster() throws Exception {
        scripts = new ScriptRunner(data, 5);
        Run start = scripts.run(List.of("scripts/cluster", "start", "--tls"), 240);
        assertEquals(0, start.code(), start.toString());
    }

    @AfterAll
    static void stopCluster() throws Exception {
        Run stop = scripts.stopAndKeepLogs("ClusterScriptsIT");
        assertEquals(0, stop.code(), stop.toString());
    }

    @Test
    void aTlsClusterGrowsGetsAWipedNodeReplacedShrinksAndIsRestoredFromItsBackup() throws Exception {
        long written = json(0, "put", "ops/a", "\"1\"", "--index", "0").path("index").asLong();

        cluster(0, "add-node", "n4");
        assertEquals(Set.of("n1", "n2", "n3", "n4"), voters());

        Path backup = data.resolve("ops.bak");
        Run taken = scripts.ratchet(List.of("backup", "--out", backup.toString()));
        assertEquals(0, taken.code(), taken.toString());
        long after = json(0, "put", "ops/after-backup", "\"2\"", "--index", "0").path("index").asLong();

        // A node whose disk died: wiped, and back as a new member that catches up.
        cluster(0, "replace-node", "n1");
        assertEquals(Set.of("n1", "n2", "n3", "n4"), voters());
        cluster(0, "remove-node", "n4");
        assertEquals(Set.of("n1", "n2", "n3"), voters());
        assertEquals(after, json(0, "get", "ops/after-backup").path("index").asLong());

        // A damaged backup is refused before the cluster is touched.
        Path damaged = data.resolve("damaged.bak");
        byte[] bytes = Files.readAllBytes(backup);
        bytes[bytes.length / 2] ^= 1;
        Files.write(damaged, bytes);
        Run refused = scripts.run(List.of("scripts/cluster", "restore", damaged.toString()), 120);
        assertNotEquals(0, refused.code(), refused.toString());
        assertTrue(refused.err().contains("the cluster is as it was"), refused.toString());
        assertEquals(after, json(0, "get", "ops/after-backup").path("index").asLong());

        Run restored = scripts.run(List.of("scripts/cluster", "restore", backup.toString()), 240);
        assertEquals(0, restored.code(), restored.toString());
        JsonNode a = json(0, "get", "ops/a");
        assertEquals(written, a.path("index").asLong(), a.toString());
        assertEquals("1", a.path("value").asText(), a.toString());
        assertEquals(1, scripts.ratchet(List.of("get", "ops/after-backup")).code(), "written after the backup: not in it");
        assertTrue(json(0, "put", "ops/b", "\"3\"", "--index", "0").path("index").asLong() > written,
                "the log goes on above the backup's index");
    }

    private static void cluster(int expectedCode, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("scripts/cluster"));
        command.addAll(List.of(args));
        Run r = scripts.run(command, 180);
        assertEquals(expectedCode, r.code(), command + ": " + r);
    }

    private static Set<String> voters() throws Exception {
        Set<String> ids = new TreeSet<>();
        for (JsonNode m : json(0, "members", "list").path("members")) {
            assertEquals("VOTER", m.path("role").asText(), m.toString());
            ids.add(m.path("id").asText());
        }
        return ids;
    }

    private static JsonNode json(int expectedCode, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args));
        all.add("--json");
        Run r = scripts.ratchet(all);
        assertEquals(expectedCode, r.code(), String.join(" ", all) + ": " + r);
        return Json.parse(r.out());
    }
}
