package io.ratchet.node;

import io.ratchet.protocol.RaftBytes;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.proto.RaftProtos.RaftClientRequestProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftClientAsynchronousProtocol;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;

/**
 * Requests to this node's own Ratis server, in-process, under one client id of their own: how the
 * front end and the sweeper reach the log and the read path without a network hop. (Resends are the
 * client sessions' business, so Ratis' retry cache, keyed by this id, deduplicates nothing here.)
 */
final class LocalSubmitter {
    private final RaftGroupId groupId;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callId = new AtomicLong();

    LocalSubmitter(RaftGroupId groupId) {
        this.groupId = groupId;
    }

    /**
     * Whether a write goes straight to the group's division ({@code ratchet.node.directSubmit}, on unless
     * set to false). Ratis' {@code RaftServer.submitClientRequestAsync} hands every request to its client
     * executor and blocks the caller until that thread has appended it: two threads woken per entry for
     * nothing this node needs, since every caller here is a thread of Ratchet's own that may block. The
     * division appends the same request on the caller's thread. Reads keep Ratis' path: a read under the
     * lease is answered on the thread that submits it, and a long one (a page of large values) would
     * then hold up every read behind it on the front end's one reading thread.
     */
    static final boolean DIRECT = !"false".equals(System.getProperty("ratchet.node.directSubmit"));

    /**
     * Submits one message; completes with the reply's content, or fails with the reply's exception. A write
     * runs Ratis' own submission (the state machine's {@code startTransaction}, the append) on the calling
     * thread: never call it from a thread of Ratis' nor a network thread.
     */
    CompletableFuture<byte[]> submit(RaftServer server, byte[] message, RaftClientRequest.Type type) {
        try {
            RaftClientRequest request = RaftClientRequest.newBuilder()
                    .setClientId(clientId)
                    .setServerId(server.getId())
                    .setGroupId(groupId)
                    .setCallId(callId.incrementAndGet())
                    .setMessage(RaftBytes.message(message))
                    .setType(type)
                    .build();
            RaftClientAsynchronousProtocol target = DIRECT && type.is(RaftClientRequestProto.TypeCase.WRITE)
                    && server.getDivision(groupId) instanceof RaftClientAsynchronousProtocol division ? division : server;
            return target.submitClientRequestAsync(request).thenApply(LocalSubmitter::content);
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static byte[] content(RaftClientReply reply) {
        if (!reply.isSuccess()) {
            throw new CompletionException(reply.getException());
        }
        return reply.getMessage().getContent().toByteArray();
    }
}
