package io.ratchet.protocol;

import java.nio.ByteBuffer;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;

/**
 * The pace service, {@code ratchet.internal.Pace}: how a leader asks the other nodes how starved of CPU
 * each is, to tell "I am slow" from "the machine is busy" before it hands leadership away. Nodes only,
 * as {@link SnapshotRpc}.
 *
 * <ul>
 *   <li>{@code Stalled} (unary): the request is empty; the answer is 8 bytes, a big-endian long: the share
 *       of the last second (earlier releases: two) the node's threads waited beyond when they were due to run, in millionths
 *       (0 a node that runs when asked, 1,000,000 one that never ran). A node that is starting answers
 *       {@code UNAVAILABLE}.</li>
 * </ul>
 */
public final class PaceRpc {
    public static final String SERVICE = "ratchet.internal.Pace";
    public static final MethodDescriptor<byte[], byte[]> STALLED = Rpc.method(MethodDescriptor.MethodType.UNARY, SERVICE, "Stalled");

    /** The answer for a stalled share between 0 and 1. */
    public static byte[] encode(double share) {
        return ByteBuffer.allocate(Long.BYTES).putLong(Math.round(Math.max(0, Math.min(1, share)) * 1_000_000)).array();
    }

    /** The stalled share an answer carries. */
    public static double decode(byte[] answer) {
        if (answer.length != Long.BYTES) {
            throw new IllegalArgumentException("a pace answer is 8 bytes; this one has " + answer.length);
        }
        long millionths = ByteBuffer.wrap(answer).getLong();
        if (millionths < 0 || millionths > 1_000_000) {
            throw new IllegalArgumentException("a stalled share is 0 to 1,000,000 millionths; this one is " + millionths);
        }
        return millionths / 1_000_000.0;
    }

    private PaceRpc() {
    }
}
