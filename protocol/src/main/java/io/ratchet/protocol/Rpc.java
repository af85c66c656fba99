package io.ratchet.protocol;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;

/**
 * The front end's gRPC service, {@code ratchet.v1.FrontEnd}, served by every node on its client port
 * (the address clients are given). Three unary methods; each request and answer is one {@link Codec}
 * message, carried as the gRPC message's bytes, so the format on the wire is the versioned one the log
 * uses, and a message that does not parse is refused with a {@link Refusal}, never misread.
 *
 * <ul>
 *   <li>{@code Write}: a batches message with exactly one {@link Batch}; answers a results message
 *       (one result per command) or a refusal.</li>
 *   <li>{@code Read}: a query message, served linearizably (by the leader, or by a follower after
 *       ReadIndex); a watch waits here. Answers a results message or a refusal.</li>
 *   <li>{@code StaleRead}: a query message served from this node's own state at once.</li>
 *   <li>{@code Calls}: a bidirectional stream carrying any number of the three above, each framed as
 *       {@link #frame}: a call id (8 bytes), the method ({@link #WRITE_CALL}, {@link #READ_CALL},
 *       {@link #STALE_READ_CALL}: 1 byte; with {@link #IN_GROUP}, a group number follows), then the
 *       message; each answer comes back framed with its call
 *       id, in any order. What the Java client uses: a unary call costs a stream of its own (headers,
 *       trailers, a call's setup on both sides), which on a small machine is most of what a write
 *       costs the leader.</li>
 * </ul>
 *
 * <p>gRPC (grpc-java, in the relocated copy Ratis ships and uses for its own RPC) carries the
 * connection, framing, flow control, deadlines and cancellation; Ratchet adds no protocol server of its
 * own.
 */
public final class Rpc {
    public static final String SERVICE = "ratchet.v1.FrontEnd";

    /** A message's bytes as they are: the codec inside them has its own version and kind. */
    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    public static final MethodDescriptor<byte[], byte[]> WRITE = method(MethodDescriptor.MethodType.UNARY, SERVICE, "Write");
    public static final MethodDescriptor<byte[], byte[]> READ = method(MethodDescriptor.MethodType.UNARY, SERVICE, "Read");
    public static final MethodDescriptor<byte[], byte[]> STALE_READ = method(MethodDescriptor.MethodType.UNARY, SERVICE, "StaleRead");
    public static final MethodDescriptor<byte[], byte[]> CALLS = method(MethodDescriptor.MethodType.BIDI_STREAMING, SERVICE, "Calls");

    /** The method byte of a framed call on the {@code Calls} stream. */
    public static final byte WRITE_CALL = 1;
    public static final byte READ_CALL = 2;
    public static final byte STALE_READ_CALL = 3;
    /** A request frame's head: the call id and the method. An answer's head is the call id alone. */
    public static final int CALL_HEAD_BYTES = Long.BYTES + 1;

    /**
     * A method byte with this bit set addresses a group other than the first ({@link Groups}): the
     * group's number (2 bytes) follows it, before the message. A call without it is for group 0, so a
     * cluster of one group sees the frames it always did.
     */
    public static final byte IN_GROUP = 0x40;
    /** The group number's bytes in a frame whose method has {@link #IN_GROUP}. */
    public static final int GROUP_BYTES = Short.BYTES;

    /** A call on the {@code Calls} stream: its id, its method, then the message as the unary method takes it. */
    public static byte[] frame(long callId, byte method, byte[] message) {
        return ByteBuffer.allocate(CALL_HEAD_BYTES + message.length).putLong(callId).put(method).put(message).array();
    }

    /** A call to group {@code group}: as {@link #frame(long, byte, byte[])}, with the group named when not 0. */
    public static byte[] frame(long callId, byte method, int group, byte[] message) {
        if (group == 0) {
            return frame(callId, method, message);
        }
        return ByteBuffer.allocate(CALL_HEAD_BYTES + GROUP_BYTES + message.length).putLong(callId)
                .put((byte) (method | IN_GROUP)).putShort((short) group).put(message).array();
    }

    /** A call frame taken apart: its id, its method (without {@link #IN_GROUP}), its group and its message. */
    public record Call(long callId, byte method, int group, byte[] message) {
        /**
         * Parses a frame; null when it is too short to hold its head (it then cannot be answered: there is no
         * call id to answer).
         */
        public static Call parse(byte[] frame) {
            if (frame.length < CALL_HEAD_BYTES) {
                return null;
            }
            ByteBuffer in = ByteBuffer.wrap(frame);
            long id = in.getLong();
            byte method = in.get();
            int group = 0;
            if ((method & IN_GROUP) != 0) {
                if (in.remaining() < GROUP_BYTES) {
                    return null;
                }
                method = (byte) (method & ~IN_GROUP);
                group = Short.toUnsignedInt(in.getShort());
            }
            byte[] message = new byte[in.remaining()];
            in.get(message);
            return new Call(id, method, group, message);
        }
    }

    /** An answer on the {@code Calls} stream: the call's id, then the answer as the unary method gives it. */
    public static byte[] answerFrame(long callId, byte[] answer) {
        return ByteBuffer.allocate(Long.BYTES + answer.length).putLong(callId).put(answer).array();
    }

    private Rpc() {
    }

    /** A method of {@code service} whose messages are bytes as they are (every Ratchet service's). */
    static MethodDescriptor<byte[], byte[]> method(MethodDescriptor.MethodType type, String service, String name) {
        return MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(type)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(service, name))
                .setRequestMarshaller(BYTES)
                .setResponseMarshaller(BYTES)
                .build();
    }
}
