package io.ratchet.protocol;

import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;

/**
 * The backup service, {@code ratchet.v1.Backup}, served by every node on its client port beside the front
 * end ({@link Rpc}).
 *
 * <ul>
 *   <li>{@code Backup} (server streaming): the request names the group whose state it asks for
 *       ({@link Groups#request}: empty for group 0, as before groups); the answer is that group's backup file
 *       ({@link BackupHeader}), its bytes in order, in messages of at most {@link #CHUNK_BYTES}. The file
 *       verifies itself, so the stream carries nothing else. A node that cannot serve one ends the call
 *       with a gRPC status: {@code UNAVAILABLE} (starting, or it cannot confirm through Raft that it holds
 *       every committed write), {@code RESOURCE_EXHAUSTED} (it is writing another backup), {@code
 *       INTERNAL} (writing the state failed); any other node may be asked instead.</li>
 * </ul>
 */
public final class BackupRpc {
    public static final String SERVICE = "ratchet.v1.Backup";

    /** 1 MiB: large enough that per-message costs vanish, small enough for gRPC's flow control to pace. */
    public static final int CHUNK_BYTES = 1 << 20;

    public static final MethodDescriptor<byte[], byte[]> BACKUP = Rpc.method(MethodDescriptor.MethodType.SERVER_STREAMING, SERVICE, "Backup");

    private BackupRpc() {
    }
}
