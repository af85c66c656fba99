package io.ratchet.node;

import io.ratchet.common.Credentials;
import io.ratchet.common.NodeChannels;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.SnapshotRpc;
import io.ratchet.statemachine.BackupFile;
import io.ratchet.statemachine.SnapshotSource;
import io.ratchet.statemachine.kv.RocksKeyValueStore;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;

/**
 * Fetches a checkpoint of the leader's store ({@link SnapshotRpc}) for a follower the leader's log no
 * longer reaches: over a channel of its own to the leader's one port, with this node's certificate on a
 * TLS cluster, verified as it arrives and written into the state machine's directory.
 */
final class SnapshotFetcher implements SnapshotSource {
    /** Long enough for a large state over a slow link; a leader that stops sending ends it sooner (it fails). */
    private static final long DEADLINE_MINUTES = 60;

    private final String nodeId;
    private final Credentials credentials;
    private final RocksKeyValueStore.Settings settings;
    /** The group whose state this fetches ({@link Groups#request}). */
    private final int group;

    SnapshotFetcher(String nodeId, Credentials credentials, RocksKeyValueStore.Settings settings, int group) {
        this.nodeId = nodeId;
        this.credentials = credentials;
        this.settings = settings;
        this.group = group;
    }

    @Override
    public void fetch(String leaderAddress, Path target) throws IOException {
        ManagedChannel channel = NodeChannels.open(leaderAddress, credentials);
        String source = "the snapshot of group " + group + " " + leaderAddress + " sent to " + nodeId;
        try (BackupFile.Receiver receiver = new BackupFile.Receiver(target, source, settings)) {
            Iterator<byte[]> chunks = ClientCalls.blockingServerStreamingCall(channel, SnapshotRpc.FETCH,
                    CallOptions.DEFAULT.withDeadlineAfter(DEADLINE_MINUTES, TimeUnit.MINUTES), Groups.request(group));
            while (chunks.hasNext()) {
                byte[] chunk = chunks.next();
                receiver.accept(chunk, 0, chunk.length);
            }
            receiver.finish();
        } catch (StatusRuntimeException e) {
            throw new IOException(leaderAddress + " did not send a whole snapshot: " + e.getStatus(), e);
        } finally {
            // Also cancels the call when the bytes were refused half way.
            channel.shutdownNow();
        }
    }
}
