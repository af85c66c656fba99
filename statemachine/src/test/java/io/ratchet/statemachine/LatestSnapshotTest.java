package io.ratchet.statemachine;

import static io.ratchet.statemachine.CompareExchangeStoreTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.ratchet.protocol.Command;
import java.io.File;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.server.storage.RaftStorage.StartupOption;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.util.MD5FileUtil;
import org.apache.ratis.util.SizeInBytes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ratis asks the machine for its latest snapshot on every append. The answer must come from what the
 * machine wrote or loaded, never from listing the snapshot directory (which Ratis' storage does on
 * every call until a first snapshot exists).
 */
class LatestSnapshotTest {
    @TempDir
    Path dir;

    private RaftStorage raftStorage;

    @AfterEach
    void closeStorage() throws IOException {
        if (raftStorage != null) {
            raftStorage.close();
        }
    }

    /** A machine on the storage in {@code dir}, formatted or recovered. */
    private RatchetStateMachine machine(StartupOption option) throws IOException {
        if (raftStorage != null) {
            raftStorage.close();
        }
        raftStorage = RaftStorage.newBuilder()
                .setDirectory(dir.toFile())
                .setOption(option)
                .setStorageFreeSpaceMin(SizeInBytes.ONE_KB)
                .setLogCorruptionPolicy(RaftServerConfigKeys.Log.CorruptionPolicy.getDefault())
                .build();
        raftStorage.initialize();
        RatchetStateMachine machine = new RatchetStateMachine(() -> 0L);
        machine.initialize(serverNamed("n1"), RaftGroupId.randomId(), raftStorage);
        return machine;
    }

    /** The machine only asks its server for its id (to name itself in logs); nothing else is there. */
    private static RaftServer serverNamed(String id) {
        return (RaftServer) Proxy.newProxyInstance(RaftServer.class.getClassLoader(), new Class<?>[] {RaftServer.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getId")) {
                        return RaftPeerId.valueOf(id);
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    /** A snapshot written at index 5 into the machine's directory, as an install from the leader leaves it. */
    private File snapshotOnDisk(RatchetStateMachine machine) throws IOException {
        CompareExchangeStore store = new CompareExchangeStore();
        store.applyEntry(entry(1_000, new Command.Put("a", "1", 0, null)), 5);
        File file = ((SimpleStateMachineStorage) machine.getStateMachineStorage()).getSnapshotFile(1, 5);
        SnapshotFile.write(store, file.toPath());
        MD5FileUtil.computeAndSaveMd5ForFile(file);
        return file;
    }

    @Test
    void aSnapshotOnDiskIsSeenOnceTheMachineLoadsItNotBefore() throws IOException {
        RatchetStateMachine machine = machine(StartupOption.FORMAT);
        assertNull(machine.getLatestSnapshot(), "no snapshot yet");

        File file = snapshotOnDisk(machine);
        assertNull(machine.getLatestSnapshot(), "the getter does not list the directory");

        machine.reinitialize();
        assertEquals(5, machine.getLatestSnapshot().getIndex());
        assertEquals(file.toPath(), machine.getLatestSnapshot().getFiles().get(0).getPath());
        assertEquals(5, machine.getLastAppliedTermIndex().getIndex(), "the state came with it");
    }

    @Test
    void aMachineStartingOnASnapshotReportsIt() throws IOException {
        snapshotOnDisk(machine(StartupOption.FORMAT));
        RatchetStateMachine restarted = machine(StartupOption.RECOVER);
        assertEquals(5, restarted.getLatestSnapshot().getIndex());
        assertEquals(5, restarted.getLastAppliedTermIndex().getIndex());
    }
}
