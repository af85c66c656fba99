package io.ratchet.spring.boot;

import io.ratchet.client.NodeStatus;
import io.ratchet.client.RatchetClient;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The cluster as this service's client sees it, for Actuator's health: UP while a majority of the nodes
 * answer and a leader is known (writes can commit), DOWN otherwise. The details name each node's role, the
 * leader, and whether the storage quota's alarm is raised on any node (at 80% of the quota the cluster
 * still takes writes, so the alarm is a detail to alert on, not a DOWN).
 */
public class RatchetHealthIndicator extends AbstractHealthIndicator {
    private final RatchetClient client;

    public RatchetHealthIndicator(RatchetClient client) {
        super("Ratchet cluster health check failed");
        this.client = client;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        List<NodeStatus> nodes = client.status();
        Map<String, String> roles = new LinkedHashMap<>();
        String leader = null;
        int reachable = 0;
        boolean quotaAlarm = false;
        for (NodeStatus node : nodes) {
            roles.put(node.id(), node.role());
            if (!"UNREACHABLE".equals(node.role())) {
                reachable++;
                if (leader == null && node.leader() != null) {
                    leader = node.leader();
                }
                quotaAlarm |= node.quotaAlarm();
            }
        }
        boolean up = reachable * 2 > nodes.size() && leader != null;
        (up ? builder.up() : builder.down())
                .withDetail("nodes", roles)
                .withDetail("reachable", reachable + "/" + nodes.size())
                .withDetail("leader", leader == null ? "none" : leader)
                .withDetail("quotaAlarm", quotaAlarm);
    }
}
