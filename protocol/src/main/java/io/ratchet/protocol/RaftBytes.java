package io.ratchet.protocol;

import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * {@link Codec} output handed to Ratis without a copy. Safe because every encode returns a fresh array
 * that nothing keeps or changes afterwards; pass nothing else here.
 */
public final class RaftBytes {
    private RaftBytes() {
    }

    public static ByteString wrap(byte[] encoded) {
        return UnsafeByteOperations.unsafeWrap(encoded);
    }

    public static Message message(byte[] encoded) {
        return Message.valueOf(wrap(encoded));
    }
}
