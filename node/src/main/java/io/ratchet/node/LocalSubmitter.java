package io.ratchet.node;

import io.ratchet.protocol.RaftBytes;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
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

    /** Submits one message; completes with the reply's content, or fails with the reply's exception. */
    CompletableFuture<byte[]> submit(RaftServer server, byte[] message, RaftClientRequest.Type type) {
        try {
            return server.submitClientRequestAsync(RaftClientRequest.newBuilder()
                            .setClientId(clientId)
                            .setServerId(server.getId())
                            .setGroupId(groupId)
                            .setCallId(callId.incrementAndGet())
                            .setMessage(RaftBytes.message(message))
                            .setType(type)
                            .build())
                    .thenApply(LocalSubmitter::content);
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
