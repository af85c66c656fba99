package io.ratchet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.node.LocalCluster;
import io.ratchet.protocol.BackupHeader;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Item;
import io.ratchet.statemachine.BackupFile;
import io.ratchet.statemachine.CompareExchangeStore;
import io.ratchet.statemachine.kv.RocksKeyValueStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ratchet backup}: what an operator types, against a real in-process cluster; output and exit codes. */
class BackupCommandTest {
    @TempDir
    Path dir;

    @Test
    void aBackupHoldsWhatWasWrittenAndSaysWhereItIsAndWhatItHolds() throws IOException {
        try (LocalCluster cluster = LocalCluster.start(3, dir.resolve("cluster"))) {
            String peers = cluster.peers();
            CommandRun put = CommandRun.of("put", "emails/ada@example.com", "\"users/1\"", "--index", "0", "--json", "--peers", peers);
            long written = Json.parse(put.out()).get("index").asLong();

            Path file = dir.resolve("ratchet.rbk");
            CommandRun text = CommandRun.of("backup", "--out", file.toString(), "--peers", peers);
            assertEquals(ExitCode.DONE, text.code(), text.toString());
            List<String> lines = text.out().lines().toList();
            assertEquals("file: " + file, lines.get(0));
            String leader = Json.parse(CommandRun.of("status", "--json", "--peers", peers).out()).get("leader").asText();
            assertTrue(lines.get(1).matches("node: n[123]") && !lines.get(1).equals("node: " + leader),
                    "a follower writes it when none is named: " + lines.get(1) + ", leader " + leader);
            assertEquals("cluster: ratchet", lines.get(2));
            assertTrue(lines.get(4).matches("index: \\d+"), lines.get(4));
            assertTrue(Long.parseLong(lines.get(4).substring("index: ".length())) >= written);
            assertEquals("bytes: " + Files.size(file), lines.get(7));
            assertEquals("sha256: " + sha256(file), lines.get(8), "what sha256sum prints for the file");
            assertFalse(Files.exists(dir.resolve("ratchet.rbk.tmp")));

            CommandRun json = CommandRun.of("backup", "--out", file.toString(), "--node", "n2", "--json", "--peers", peers);
            assertEquals(ExitCode.DONE, json.code(), json.toString());
            JsonNode saved = Json.parse(json.out());
            assertEquals("n2", saved.get("node").asText());
            assertEquals(sha256(file), saved.get("sha256").asText(), "the second backup replaced the first");
            BackupFile.Received contents = BackupFile.unpack(file, dir.resolve("unpacked"), RocksKeyValueStore.Settings.DEFAULT);
            assertEquals(saved.get("index").asLong(), contents.header().index());
            assertEquals(saved.get("term").asLong(), contents.header().term());
            try (RocksKeyValueStore kv = RocksKeyValueStore.openReadOnly(dir.resolve("unpacked"))) {
                Item item = new CompareExchangeStore(kv).get("emails/ada@example.com");
                assertEquals("\"users/1\"", item.value());
                assertEquals(written, item.index());
            }

            CommandRun noDirectory = CommandRun.of("backup", "--out", dir.resolve("no/such/dir/b.rbk").toString(), "--peers", peers);
            assertEquals(ExitCode.INVALID, noDirectory.code(), noDirectory.toString());
            assertTrue(noDirectory.err().contains("is not a directory"), noDirectory.err());
            CommandRun noNode = CommandRun.of("backup", "--out", file.toString(), "--node", "n9", "--json", "--peers", peers);
            assertEquals(ExitCode.INVALID, noNode.code(), noNode.toString());
            assertEquals("invalid_request", Json.parse(noNode.out()).get("error").asText());
            assertTrue(noNode.err().contains("no node 'n9' among the peers"), noNode.err());
        }
    }

    @Test
    void withoutAClusterItSaysSoAndWritesNothing() {
        Path file = dir.resolve("ratchet.rbk");
        CommandRun run = CommandRun.of("backup", "--out", file.toString(), "--peers", "127.0.0.1:1");
        assertEquals(ExitCode.UNAVAILABLE, run.code(), run.toString());
        assertTrue(run.err().contains("no node accepts connections at 127.0.0.1:1"), run.err());
        assertFalse(Files.exists(file));
        CommandRun noOut = CommandRun.of("backup", "--peers", "127.0.0.1:1");
        assertEquals(ExitCode.INVALID, noOut.code(), noOut.toString());
        assertTrue(noOut.err().contains("--out"), noOut.err());
    }

    private static String sha256(Path file) throws IOException {
        return HexFormat.of().formatHex(BackupHeader.newDigest().digest(Files.readAllBytes(file)));
    }
}
