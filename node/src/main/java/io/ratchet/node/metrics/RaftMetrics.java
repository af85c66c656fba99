package io.ratchet.node.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Locale;
import java.util.function.Supplier;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;

/**
 * Raft's view of this node as gauges, read from its division at each scrape: its role (one series per
 * role, 1 for the role it has), term, commit and applied index, and whether it is ready.
 */
final class RaftMetrics implements MeterBinder {
    private static final RaftPeerRole[] ROLES = {RaftPeerRole.LEADER, RaftPeerRole.FOLLOWER,
            RaftPeerRole.CANDIDATE, RaftPeerRole.LISTENER};

    private final Supplier<RaftState> state;

    RaftMetrics(Supplier<RaftState> state) {
        this.state = state;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (RaftPeerRole role : ROLES) {
            Gauge.builder("ratchet.raft.role", () -> state.get().role() == role ? 1 : 0)
                    .tag("role", role.name().toLowerCase(Locale.ROOT))
                    .description("1 for the Raft role this node has now, 0 for the others")
                    .register(registry);
        }
        Gauge.builder("ratchet.raft.term", () -> state.get().term())
                .description("the node's current Raft term").register(registry);
        Gauge.builder("ratchet.raft.commit.index", () -> state.get().commitIndex())
                .description("the last log index this node knows is committed").register(registry);
        Gauge.builder("ratchet.raft.applied.index", () -> state.get().appliedIndex())
                .description("the last log index this node's state machine applied").register(registry);
        Gauge.builder("ratchet.ready", () -> state.get().readiness().ready() ? 1 : 0)
                .description("1 when /health/ready answers 200: a member that knows a leader and keeps up")
                .register(registry);
    }
}
