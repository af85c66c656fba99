package io.ratchet.node;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.Request;
import io.ratchet.statemachine.RatchetStateMachine;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * On the leader only: every interval, proposes a sweep of the items that have expired by the stamp the
 * leader would give now ({@link RatchetStateMachine#stampNow()}), in batches. The proposal is a hint; apply
 * re-checks each item against cluster time and its index, so a renewal that lands first wins, and a
 * follower's clock never matters.
 */
final class Sweeper implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Sweeper.class);
    private static final int BATCH = Command.Sweep.MAX_CANDIDATES;

    private final RaftServer server;
    private final RaftGroupId groupId;
    private final LocalSubmitter local;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ratchet-sweeper"));

    Sweeper(RaftServer server, RaftGroupId groupId, Duration interval) {
        this.server = server;
        this.groupId = groupId;
        this.local = new LocalSubmitter(groupId);
        timer.scheduleWithFixedDelay(this::sweepOnce, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void sweepOnce() {
        try {
            RaftServer.Division division = server.getDivision(groupId);
            if (!division.getInfo().isLeader() || !division.getInfo().isLeaderReady()) {
                return;
            }
            RatchetStateMachine machine = (RatchetStateMachine) division.getStateMachine();
            List<Command.KeyIndex> due;
            // Full batches go out back to back; a partial one means this round is done.
            do {
                due = machine.expiredAt(machine.stampNow(), BATCH);
                if (due.isEmpty()) {
                    return;
                }
                try {
                    local.submit(server, Codec.encodeRequests(List.of(Request.of(List.of(new Command.Sweep(due))))),
                            RaftClientRequest.writeRequestType()).get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    LOG.info("sweep of {} items not committed: {}", due.size(), e.getCause().toString());
                    return;
                }
            } while (due.size() == BATCH);
        } catch (Exception e) {
            // Leadership moves, servers stop: the next round, here or on the new leader, tries again.
            LOG.debug("sweep round failed", e);
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
