package io.ratchet.node;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.Request;
import io.ratchet.statemachine.RatchetStateMachine;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts a node's configured quota ({@code quota.bytes}) into the replicated state: while this node leads
 * a cluster that never had a quota set, it proposes its own, marked to apply only if none is set by
 * then. So the first leader's configured quota holds, an operator's {@code ratchet quota set} is never
 * overridden by a restart, and every replica refuses the same writes whatever its own config says.
 * Stops once the state has a quota.
 */
final class QuotaBootstrap implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(QuotaBootstrap.class);

    private final RaftServer server;
    private final RaftGroupId groupId;
    private final long bytes;
    private final LocalSubmitter local;
    private final ScheduledExecutorService timer =
            Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ratchet-quota-bootstrap"));

    QuotaBootstrap(RaftServer server, RaftGroupId groupId, long bytes, Duration interval) {
        this.server = server;
        this.groupId = groupId;
        this.bytes = bytes;
        this.local = new LocalSubmitter(groupId);
        timer.scheduleWithFixedDelay(this::tryOnce, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void tryOnce() {
        try {
            RaftServer.Division division = server.getDivision(groupId);
            RatchetStateMachine machine = (RatchetStateMachine) division.getStateMachine();
            if (machine.quotaSet()) {
                timer.shutdown();
                return;
            }
            if (!division.getInfo().isLeader() || !division.getInfo().isLeaderReady()) {
                return;
            }
            local.submit(server, Codec.encodeRequests(List.of(Request.of(List.of(new Command.SetQuota(bytes, true))))),
                    RaftClientRequest.writeRequestType()).get(30, TimeUnit.SECONDS);
            LOG.info("proposed this node's configured quota of {} bytes: the cluster had none set", bytes);
        } catch (Exception e) {
            // Leadership moves, servers stop: the next round, here or on the new leader, tries again.
            LOG.debug("quota bootstrap round failed", e);
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
