package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Path;
import java.util.Map;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node's linearizable reads go through ReadIndex, never Ratis 3.3.0's leader lease: the lease counts a
 * follower's refusal of a stale term as an acknowledgement, and voters grant votes of a higher term without
 * asking whether they heard from a leader lately, so a leader resumed from a pause could answer from stale
 * state after another was elected (a chaos soak's watch saw it; docs/DESIGN.md, "Failover"). A {@code -Draft.*}
 * node property can still turn the lease on, as it can any Ratis setting; this holds the default.
 */
class LinearizableReadSettingsTest {

    @Test
    void readsWaitForAHeartbeatRoundNotALease(@TempDir Path dir) {
        NodeConfig config = NodeConfig.of("n1", Map.of("n1", "127.0.0.1:" + FreePorts.next()), dir.resolve("n1"));
        RaftProperties p = RatchetNode.properties(config);

        assertEquals(RaftServerConfigKeys.Read.Option.LINEARIZABLE, RaftServerConfigKeys.Read.option(p),
                "reads are linearizable, through Ratis' read path");
        assertFalse(RaftServerConfigKeys.Read.leaderLeaseEnabled(p),
                "Ratis 3.3.0's leader lease is not safe (a deposed leader can hold one): reads use ReadIndex");
    }
}
