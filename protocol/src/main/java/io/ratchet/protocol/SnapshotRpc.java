package io.ratchet.protocol;

import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;

/**
 * The snapshot service, {@code ratchet.internal.Snapshot}: how a follower that fell behind the leader's
 * log gets the leader's state. Nodes only: it is not a {@code ratchet.v1} service, so on a TLS cluster
 * only a caller with a node's certificate reaches it, as for Raft itself.
 *
 * <ul>
 *   <li>{@code Fetch} (server streaming): the request names the group ({@link Groups#request}: empty for
 *       group 0); the answer is a backup file
 *       ({@link BackupHeader}, format {@link BackupHeader#FORMAT_VERSION}) of a checkpoint of the node's
 *       store, in messages of at most {@link BackupRpc#CHUNK_BYTES}. A node that cannot serve one ends the
 *       call with a gRPC status ({@code UNAVAILABLE} while starting, {@code RESOURCE_EXHAUSTED} while
 *       serving others, {@code INTERNAL}).</li>
 * </ul>
 */
public final class SnapshotRpc {
    public static final String SERVICE = "ratchet.internal.Snapshot";

    public static final MethodDescriptor<byte[], byte[]> FETCH = Rpc.method(MethodDescriptor.MethodType.SERVER_STREAMING, SERVICE, "Fetch");

    private SnapshotRpc() {
    }

}
