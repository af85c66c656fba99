package io.ratchet.statemachine;

import java.io.File;
import java.util.List;
import java.util.function.Supplier;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.SnapshotRetentionPolicy;
import org.apache.ratis.statemachine.StateMachineStorage;

/**
 * The state machine's part of a node's storage, as Ratis sees it: a directory ({@code sm/}) in which the
 * state lives in its own store, and a "snapshot" that is no file but the position up to which that store
 * is on disk. Ratis purges its log up to that position; there are no snapshot files to clean up or send
 * (a follower that needs the state fetches a checkpoint instead: see {@link RatchetStateMachine}).
 */
final class DiskStateStorage implements StateMachineStorage {
    private final Supplier<SnapshotInfo> latest;
    private File dir;
    private File tmp;

    DiskStateStorage(Supplier<SnapshotInfo> latest) {
        this.latest = latest;
    }

    /** The position a store holds on disk, as the snapshot Ratis knows. */
    record Durable(TermIndex getTermIndex) implements SnapshotInfo {
        @Override
        public List<FileInfo> getFiles() {
            return List.of();
        }
    }

    @Override
    public void init(RaftStorage raftStorage) {
        dir = raftStorage.getStorageDir().getStateMachineDir();
        tmp = raftStorage.getStorageDir().getTmpDir();
    }

    @Override
    public SnapshotInfo getLatestSnapshot() {
        return latest.get();
    }

    @Override
    public void format() {
        // Nothing of its own: Ratis formats the directories; the store is made when first opened.
    }

    @Override
    public void cleanupOldSnapshots(SnapshotRetentionPolicy policy) {
        // No snapshot files: the store is its own snapshot.
    }

    @Override
    public File getSnapshotDir() {
        return dir;
    }

    @Override
    public File getTmpDir() {
        return tmp;
    }
}
