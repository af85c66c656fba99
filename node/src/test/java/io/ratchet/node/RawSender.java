package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.ClientOptions;
import io.ratchet.protocol.GroupName;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;

/** Sends raw bytes as a write, as a buggy or hostile client would, and checks they were refused. */
final class RawSender {
    private RawSender() {
    }

    static void send(String peers, byte[] bytes) {
        var options = ClientOptions.parse(peers);
        RaftGroup group = RaftGroup.valueOf(GroupName.toGroupId(options.group()),
                options.peers().entrySet().stream()
                        .map(e -> RaftPeer.newBuilder().setId(e.getKey()).setAddress(e.getValue()).build()).toList());
        try (RaftClient raw = RaftClient.newBuilder().setRaftGroup(group).setProperties(new RaftProperties())
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(10, TimeDuration.ONE_SECOND)).build()) {
            try {
                RaftClientReply reply = raw.io().send(Message.valueOf(ByteString.copyFrom(bytes)));
                assertFalse(reply.isSuccess(), "garbage must not be applied");
            } catch (StateMachineException e) {
                assertTrue(e.getMessage().contains("InvalidCommandException"), e.getMessage());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
