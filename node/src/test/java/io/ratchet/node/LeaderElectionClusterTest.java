package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.election.Leader;
import io.ratchet.recipes.election.LeaderElection;
import io.ratchet.recipes.lock.LockOptions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Leader election on a real three-node cluster, leases on the leaders' clocks: when the leading
 * candidate's client goes away, its lease runs out on cluster time and the waiting candidate takes over
 * with a higher term.
 */
class LeaderElectionClusterTest extends SharedClusterTest {

    @Test
    @Timeout(60)
    void whenTheLeadersClientIsClosedAnotherCandidateTakesOverWithAHigherTerm() throws Exception {
        Duration lease = Duration.ofSeconds(2);
        RatchetClient firstClient = cluster.client();
        try (RatchetClient secondClient = cluster.client();
             LeaderElection first = new LeaderElection(firstClient, "scheduler", lease,
                     new LockOptions("first", Duration.ofMinutes(1)));
             LeaderElection second = new LeaderElection(secondClient, "scheduler", lease,
                     new LockOptions("second", Duration.ofMinutes(1)))) {
            first.start();
            assertTrue(first.await(Duration.ofSeconds(20)), "a lone candidate is elected");
            long term = first.term();
            second.start();

            firstClient.close(); // the leader's process goes quiet: no more renewals, no release

            await().atMost(Duration.ofSeconds(30)).until(second::isLeader);
            assertFalse(first.isLeader(), "the old leader's own clock ended its claim before the cluster's did");
            assertTrue(second.term() > term, "terms rise: " + second.term() + " after " + term);
            assertEquals(new Leader("scheduler", "second", second.term()), second.leader().orElseThrow());
        } finally {
            firstClient.close();
        }
    }
}
