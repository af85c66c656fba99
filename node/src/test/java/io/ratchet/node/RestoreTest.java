package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.protocol.BackupHeader;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Request;
import io.ratchet.statemachine.BackupFile;
import io.ratchet.statemachine.CompareExchangeStore;
import io.ratchet.statemachine.RatchetStateMachine;
import io.ratchet.statemachine.SnapshotFile;
import io.ratchet.statemachine.kv.RocksKeyValueStore;
import org.apache.ratis.server.protocol.TermIndex;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ratchet restore} ({@link RestoreMain}): a backup is verified whole before anything is written, a
 * storage that holds anything is refused, and a restore lays out what a node loads at start under a new
 * cluster id. (Starting a restored cluster is {@link BackupRestoreClusterTest}'s.)
 */
class RestoreTest {
    private static final UUID SOURCE = UUID.randomUUID();
    private static final long TERM = 4;
    private static final long INDEX = 42;

    @TempDir
    Path dir;
    private Path backup;
    private Path n1;
    private Path n2;

    /** What a restore printed and returned. */
    private record Run(int code, String out, String err) {
    }

    private static Run restore(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = RestoreMain.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Run(code, out.toString(), err.toString());
    }

    @BeforeEach
    void backupAndConfs() throws IOException {
        CompareExchangeStore store = new CompareExchangeStore();
        store.applyEntry(Entry.untagged(1_000, List.of(Request.of(List.of(new Command.Put("emails/ada", "\"users/1\"", 0, null))))), 40);
        Path state = dir.resolve("state.snapshot");
        SnapshotFile.write(store, state);
        backup = dir.resolve("ratchet.rbk");
        // A backup of the release before the disk store: its state is a snapshot file, converted as it is restored.
        BackupHeader header = new BackupHeader(BackupHeader.SNAPSHOT_FORMAT, "ratchet", SOURCE, TERM, INDEX, 0, Files.size(state));
        try (InputStream in = BackupFile.open(header, Files.newInputStream(state))) {
            Files.write(backup, in.readAllBytes());
        }
        n1 = conf("n1");
        n2 = conf("n2");
    }

    private Path conf(String id) throws IOException {
        Path conf = dir.resolve(id + ".properties");
        Files.writeString(conf, "id=" + id + "\npeers=n1=127.0.0.1:7101,n2=127.0.0.1:7102,n3=127.0.0.1:7103\n"
                + "storage=" + storage(id) + "\n");
        return conf;
    }

    private Path storage(String id) {
        return dir.resolve("data").resolve(id);
    }

    @Test
    void aRestoreLaysOutTheStoreAndANewClusterIdInEachNodesStorage() throws IOException {
        Run run = restore("restore", "--from", backup.toString(), "--conf", n1.toString(), "--conf", n2.toString());
        assertEquals(RestoreMain.DONE, run.code(), run.toString());
        List<String> lines = run.out().lines().toList();
        assertTrue(lines.get(0).startsWith("backup: " + backup + ", cluster 'ratchet' (" + SOURCE + "), index 42, term 4, 1 items"),
                lines.get(0));
        assertEquals("restored node n1 into " + storage("n1"), lines.get(1));
        assertEquals("restored node n2 into " + storage("n2"), lines.get(2));
        String id = lines.get(3).substring("cluster id: ".length(), "cluster id: ".length() + 36);
        assertEquals("cluster id: " + id + " (new: restore the cluster's nodes on other machines with --cluster-id " + id + ")",
                lines.get(3));
        assertFalse(id.equals(SOURCE.toString()));
        for (String node : List.of("n1", "n2")) {
            Path storage = storage(node);
            assertEquals(id, ClusterIdentity.read(storage).getUuid().toString());
            Path group = storage.resolve(id);
            assertTrue(Files.exists(group.resolve("current").resolve("raft-meta")));
            Path db = group.resolve("sm").resolve(RatchetStateMachine.DB);
            assertEquals(TermIndex.valueOf(TERM, INDEX), RatchetStateMachine.positionOf(db), "the log goes on after the backup's index");
            try (RocksKeyValueStore kv = RocksKeyValueStore.openReadOnly(db)) {
                assertEquals(1, new CompareExchangeStore(kv).size());
            }
        }

        // The third node, on another machine, joins the same new cluster.
        Run third = restore("--from", backup.toString(), "--conf", conf("n3").toString(), "--cluster-id", id, "--json");
        assertEquals(RestoreMain.DONE, third.code(), third.toString());
        JsonNode json = Json.parse(third.out());
        assertTrue(json.get("restored").asBoolean());
        assertEquals(id, json.get("clusterId").asText());
        assertEquals(INDEX, json.get("index").asLong());
        assertEquals(TERM, json.get("term").asLong());
        assertEquals(SOURCE.toString(), json.get("sourceClusterId").asText());
        assertEquals("n3", json.get("nodes").get(0).get("id").asText());
        assertEquals(id, ClusterIdentity.read(storage("n3")).getUuid().toString());
    }

    @Test
    void aBackupWithAFlippedByteIsRefusedAndNothingIsWritten() throws IOException {
        byte[] bytes = Files.readAllBytes(backup);
        bytes[bytes.length - 60] ^= 0x01;
        Files.write(backup, bytes);
        Run run = restore("--from", backup.toString(), "--conf", n1.toString(), "--conf", n2.toString());
        assertEquals(RestoreMain.INVALID, run.code(), run.toString());
        assertEquals("ratchet restore: " + backup + " is corrupt: the SHA-256 at its end does not match its content\n",
                run.err());
        assertNothingWritten();
    }

    @Test
    void aTruncatedBackupIsRefusedAndNothingIsWritten() throws IOException {
        byte[] bytes = Files.readAllBytes(backup);
        Files.write(backup, Arrays.copyOf(bytes, bytes.length / 2));
        Run run = restore("--from", backup.toString(), "--conf", n1.toString(), "--json");
        assertEquals(RestoreMain.INVALID, run.code(), run.toString());
        JsonNode error = Json.parse(run.out());
        assertEquals("invalid_request", error.get("error").asText());
        assertEquals("invalid_request", error.get("code").asText());
        assertEquals(2, error.get("exitCode").asInt());
        assertEquals(backup + " is truncated (or its header damaged): it holds " + bytes.length / 2 + " of the "
                + bytes.length + " bytes its header announces", error.get("message").asText());
        assertNothingWritten();
    }

    @Test
    void storageThatHoldsAnythingIsRefusedAndLeftAsItWas() throws IOException {
        Files.createDirectories(storage("n2"));
        Files.writeString(storage("n2").resolve("cluster.id"), UUID.randomUUID() + "\n");
        List<Path> before = tree();
        Run run = restore("--from", backup.toString(), "--conf", n1.toString(), "--conf", n2.toString());
        assertEquals(RestoreMain.INVALID, run.code(), run.toString());
        assertTrue(run.err().contains("node n2's storage " + storage("n2") + " is not empty"), run.err());
        assertEquals(before, tree(), "n1 is not restored alone either");
    }

    @Test
    void theIdOfTheClusterTheBackupCameFromIsRefused() throws IOException {
        Run run = restore("--from", backup.toString(), "--conf", n1.toString(), "--cluster-id", SOURCE.toString());
        assertEquals(RestoreMain.INVALID, run.code(), run.toString());
        assertTrue(run.err().contains("is the id of the cluster the backup was taken from"), run.err());
        assertNothingWritten();
    }

    @Test
    void aDryRunVerifiesTheBackupAndWritesNothing() throws IOException {
        Run run = restore("--from", backup.toString(), "--dry-run");
        assertEquals(RestoreMain.DONE, run.code(), run.toString());
        assertEquals("verified; nothing written (--dry-run)", run.out().lines().toList().get(1));
        assertNothingWritten();
    }

    @Test
    void aBadCommandLineIsRefusedWithItsUsage() {
        for (List<String> args : List.of(List.of("--conf", "n1.properties"), List.of("--from", "b.rbk"),
                List.of("--from", "b.rbk", "--conf", "n1.properties", "--cluster-id", "seven"),
                List.of("--from", "b.rbk", "--peers", "n1=127.0.0.1:7101"), List.of("--from"))) {
            Run run = restore(args.toArray(String[]::new));
            assertEquals(RestoreMain.INVALID, run.code(), run.toString());
            assertTrue(run.err().startsWith("ratchet restore: ") && run.err().contains("usage: ratchet restore"), run.err());
        }
        Run missing = restore("--from", dir.resolve("nowhere.rbk").toString(), "--dry-run");
        assertEquals(RestoreMain.INVALID, missing.code());
        assertEquals("ratchet restore: no backup file at " + dir.resolve("nowhere.rbk") + "\n", missing.err());
    }

    private void assertNothingWritten() throws IOException {
        assertFalse(Files.exists(dir.resolve("data")), "nothing written into any storage");
        try (Stream<Path> left = Files.list(dir)) {
            assertFalse(left.anyMatch(p -> p.getFileName().toString().startsWith(".ratchet-restore")), "the unpacked state is gone");
        }
    }

    private List<Path> tree() throws IOException {
        try (Stream<Path> paths = Files.walk(dir.resolve("data"))) {
            return new ArrayList<>(paths.sorted().toList());
        }
    }
}
