package io.ratchet.protocol;

import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;

/**
 * The administration service, {@code ratchet.v1.Admin}, served by every node on its client port beside
 * the front end ({@link Rpc}). Operators' calls are few and their shapes change more often than the data
 * path's, so their messages are JSON objects (UTF-8), not {@link Codec} messages.
 *
 * <ul>
 *   <li>{@code Call} (unary): a request {@code {"op": ..., ...}}; the answer is a JSON object, either the
 *       operation's result or {@code {"error": CODE, "message": ..., "leader": {...}}} (see
 *       {@code io.ratchet.node.admin.AdminService} for the operations and codes).</li>
 * </ul>
 */
public final class AdminRpc {
    public static final String SERVICE = "ratchet.v1.Admin";

    public static final MethodDescriptor<byte[], byte[]> CALL = Rpc.method(MethodDescriptor.MethodType.UNARY, SERVICE, "Call");

    private AdminRpc() {
    }
}
