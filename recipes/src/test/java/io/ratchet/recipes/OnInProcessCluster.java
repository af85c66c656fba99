package io.ratchet.recipes;

import io.ratchet.client.RatchetClient;
import io.ratchet.testing.InProcessCluster;
import io.ratchet.testing.InProcessClusterExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A recipe's test against a fresh {@link InProcessCluster} each (as Curator's tests extend its
 * {@code BaseClassForTests}). {@link #client} talks to the leader (N1) alone: no call is hedged to another
 * node, and a lost answer is resent to it at once, so a test counts calls and drops answers exactly. A
 * subclass's own {@code @BeforeEach} runs after this one's.
 */
@ExtendWith(InProcessClusterExtension.class)
public abstract class OnInProcessCluster {
    protected InProcessCluster cluster;
    protected RatchetClient client;

    @BeforeEach
    protected final void connect(InProcessCluster cluster) {
        this.cluster = cluster;
        this.client = cluster.client(InProcessCluster.options(InProcessCluster.N1));
    }
}
