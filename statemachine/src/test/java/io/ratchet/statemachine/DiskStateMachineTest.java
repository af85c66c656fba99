package io.ratchet.statemachine;

import static io.ratchet.statemachine.CompareExchangeStoreTest.entry;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.RaftBytes;
import io.ratchet.protocol.Result;
import java.io.File;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.raftlog.LogProtoUtils;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.server.storage.RaftStorage.StartupOption;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.util.MD5FileUtil;
import org.apache.ratis.util.SizeInBytes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state machine keeps its state in a store on disk: it restarts from it, lets Raft purge the log only
 * up to what is flushed, converts a snapshot of the heap format once, and makes checkpoints that name
 * the entry they hold.
 */
class DiskStateMachineTest {
    @TempDir
    Path dir;

    private RaftStorage raftStorage;
    private RatchetStateMachine machine;
    private final AtomicLong term = new AtomicLong(1);

    @AfterEach
    void close() throws IOException {
        if (machine != null) {
            machine.close();
        }
        if (raftStorage != null) {
            raftStorage.close();
        }
    }

    /** A machine on the storage in {@code dir}, formatted or recovered. */
    private RatchetStateMachine start(StartupOption option) throws IOException {
        close();
        raftStorage = RaftStorage.newBuilder()
                .setDirectory(dir.toFile())
                .setOption(option)
                .setStorageFreeSpaceMin(SizeInBytes.ONE_KB)
                .setLogCorruptionPolicy(RaftServerConfigKeys.Log.CorruptionPolicy.getDefault())
                .build();
        raftStorage.initialize();
        // A flush asked for every other entry, so that the test sees one.
        machine = new RatchetStateMachine(() -> 0L, io.ratchet.statemachine.kv.RocksKeyValueStore.Settings.DEFAULT,
                new RatchetStateMachine.FlushPolicy(2, Long.MAX_VALUE), SnapshotSource.NONE);
        machine.initialize(serverNamed("n1"), RaftGroupId.randomId(), raftStorage);
        return machine;
    }

    /**
     * The machine only asks its server for its id (to name itself in logs) and for its division (whose
     * leader's entries tell the cluster clock where cluster time is): this server has none, as a server
     * that no longer holds the group answers.
     */
    private static RaftServer serverNamed(String id) {
        return (RaftServer) Proxy.newProxyInstance(RaftServer.class.getClassLoader(), new Class<?>[] {RaftServer.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getId")) {
                        return RaftPeerId.valueOf(id);
                    }
                    if (method.getName().equals("getDivision")) {
                        throw new IOException("no division here");
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    private List<Result> apply(long index, Command command) {
        return apply(index, Codec.encodeEntry(entry(1_000 + index, command)));
    }

    private List<Result> apply(long index, byte[] data) {
        LogEntryProto log = LogProtoUtils.toLogEntryProto(LogProtoUtils.toStateMachineLogEntryProto(ClientId.randomId(),
                index, org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto.Type.WRITE,
                RaftBytes.wrap(data), null), term.get(), index);
        TransactionContext trx = TransactionContext.newBuilder().setServerRole(RaftPeerRole.FOLLOWER)
                .setStateMachine(machine).setLogEntry(log).build();
        return Codec.decodeResults(machine.applyTransaction(trx).join().getContent().toByteArray());
    }

    private Result.Found get(String key) {
        return (Result.Found) Codec.decodeResults(machine.query(RaftBytes.message(Codec.encodeQuery(new Query.Get(key))))
                .join().getContent().toByteArray()).get(0);
    }

    @Test
    void aSnapshotIsThePositionOnDiskAndNeverAheadOfIt() throws IOException {
        start(StartupOption.FORMAT);
        assertNull(machine.getLatestSnapshot(), "nothing applied, nothing on disk");
        apply(1, new Command.Put("a", "1", 0, null));
        apply(2, new Command.Put("b", "2", 0, null));
        // The first ask starts a flush; the answer is the position once that flush is done, and then -1
        // until there is something new on disk.
        assertEquals(-1, machine.takeSnapshot());
        await().atMost(Duration.ofSeconds(10)).until(() -> machine.takeSnapshot() == 2);
        assertEquals(2, machine.getLatestSnapshot().getIndex());
        assertEquals(1, machine.getLatestSnapshot().getTerm());
        assertEquals(-1, machine.takeSnapshot(), "nothing new");
        apply(3, new Command.Put("c", "3", 0, null));
        assertEquals(-1, machine.takeSnapshot(), "one entry: under the policy's two, no flush asked for");
        assertEquals(2, machine.getLatestSnapshot().getIndex(), "index 3 is not on disk before a flush");
        apply(4, new Command.Put("d", "4", 0, null));
        await().atMost(Duration.ofSeconds(10)).until(() -> machine.takeSnapshot() == 4);
    }

    @Test
    void aRestartedMachineGoesOnFromItsStoreAndSkipsWhatItHolds() throws IOException {
        start(StartupOption.FORMAT);
        apply(1, new Command.Put("a", "1", 0, null));
        apply(2, new Command.Put("a", "2", 1, null));
        start(StartupOption.RECOVER);
        assertEquals(2, machine.getLastAppliedTermIndex().getIndex());
        assertEquals(2, machine.getLatestSnapshot().getIndex(), "everything in the store at open is on disk");
        assertEquals("2", get("a").item().value());
        // Ratis replaying an entry the store holds changes nothing.
        assertEquals(List.of(), apply(2, new Command.Put("a", "3", 1, null)));
        assertEquals(2, get("a").item().index());
        Result.Write next = (Result.Write) apply(3, new Command.Put("a", "3", 2, null)).get(0);
        assertTrue(next.successful());
    }

    @Test
    void anEntryALaterReleaseWroteStopsTheReplicaInsteadOfBeingSkipped() throws IOException {
        start(StartupOption.FORMAT);
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        machine.onMustStop(failures::add);
        apply(1, new Command.Put("a", "1", 0, null));
        byte[] later = Codec.encodeEntry(entry(1_002, new Command.Put("a", "2", 1, null)));
        later[0] = (byte) (Codec.FORMAT_VERSION + 1);
        UnreadableEntryException stopped = assertThrows(UnreadableEntryException.class, () -> apply(2, later));
        assertEquals("log entry 2 was written by a later release, in log format " + (Codec.FORMAT_VERSION + 1)
                + "; this release reads format " + Codec.FORMAT_VERSION, stopped.getMessage());
        assertEquals(List.of(stopped), failures, "the node is told, and halts");
        assertEquals(1, machine.getLastAppliedTermIndex().getIndex(), "not applied, not passed over");
        assertEquals(1, get("a").item().index());
        // An entry of this release's format that cannot be decoded (no leader of any release writes one) is
        // refused alike on every replica of the release: it changes nothing, and the replica goes on.
        byte[] garbled = Codec.encodeEntry(entry(1_002, new Command.Put("a", "2", 1, null)));
        garbled[1] = 99;
        assertTrue(apply(2, garbled).get(0) instanceof Result.Rejected);
        assertEquals(2, machine.getLastAppliedTermIndex().getIndex());
        assertEquals(List.of(stopped), failures);
    }

    @Test
    void aConfigurationEntryReplayedBelowTheStoresPositionIsIgnored() throws IOException {
        start(StartupOption.FORMAT);
        apply(5, new Command.Put("a", "1", 0, null));
        start(StartupOption.RECOVER);
        machine.notifyTermIndexUpdated(1, 3); // a configuration entry from the log, older than the store
        assertEquals(5, machine.getLastAppliedTermIndex().getIndex());
        machine.notifyTermIndexUpdated(1, 6);
        assertEquals(6, machine.getLastAppliedTermIndex().getIndex());
    }

    @Test
    void aHeapFormatSnapshotIsConvertedOnceAndItsFilesRemoved() throws IOException {
        // What a node of the release before left: a snapshot file named by Ratis' position (index 7, past
        // the store's last entry 5: two configuration entries came after it) with its MD5 side file.
        start(StartupOption.FORMAT);
        close();
        machine = null;
        Directories.delete(dir.resolve("sm").resolve(RatchetStateMachine.DB)); // that release had no store
        CompareExchangeStore old = new CompareExchangeStore();
        old.applyEntry(entry(1_000, new Command.Put("Emails/Ada", "\"users/1\"", 0, null)), 5);
        File sm = new File(dir.toFile(), "sm");
        File snapshot = new File(sm, SimpleStateMachineStorage.getSnapshotFileName(2, 7));
        SnapshotFile.write(old, snapshot.toPath());
        MD5FileUtil.computeAndSaveMd5ForFile(snapshot);

        start(StartupOption.RECOVER);
        assertEquals(7, machine.getLatestSnapshot().getIndex());
        assertEquals(2, machine.getLatestSnapshot().getTerm());
        assertEquals("\"users/1\"", get("emails/ada").item().value());
        assertEquals(5, get("emails/ada").item().index());
        try (Stream<Path> files = Files.list(sm.toPath())) {
            assertFalse(files.anyMatch(p -> p.getFileName().toString().startsWith("snapshot.")), "converted once");
        }
        start(StartupOption.RECOVER);
        assertEquals(7, machine.getLastAppliedTermIndex().getIndex());
        assertEquals("\"users/1\"", get("emails/ada").item().value());
    }

    @Test
    void aCheckpointNamesTheEntryItHoldsWhileApplyGoesOn() throws IOException {
        start(StartupOption.FORMAT);
        apply(1, new Command.Put("a", "1", 0, null));
        Path checkpoint = dir.resolve("checkpoint");
        assertEquals(1, machine.checkpoint(checkpoint).getIndex());
        apply(2, new Command.Put("b", "1", 0, null));
        assertEquals(1, RatchetStateMachine.positionOf(checkpoint).getIndex(), "reading it changes nothing in it");
        try (var kv = io.ratchet.statemachine.kv.RocksKeyValueStore.openReadOnly(checkpoint)) {
            CompareExchangeStore copy = new CompareExchangeStore(kv);
            assertEquals(1, copy.size());
        }
    }
}
