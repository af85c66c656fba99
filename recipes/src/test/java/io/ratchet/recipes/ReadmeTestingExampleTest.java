package io.ratchet.recipes;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.Lease;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.testing.InProcessCluster;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The README's "Testing code that uses Ratchet" example, as written there: it must keep working. */
class ReadmeTestingExampleTest {
    @Test
    void theReadmesExampleRunsAsWritten() {
        try (InProcessCluster cluster = new InProcessCluster()) {
            RatchetClient client = cluster.client();
            Locks locks = new Locks(client);
            Lease lease = locks.tryAcquire("printer-3", Duration.ofSeconds(30)).orElseThrow();
            cluster.advance(Duration.ofSeconds(31));                 // the lease runs out on cluster time
            cluster.leader(InProcessCluster.N2);                     // a leader change: N1 now answers NOT_LEADER
            cluster.dropAnswers(1);                                  // applied, then the answer is lost
            assertTrue(locks.tryAcquire("printer-3", Duration.ofSeconds(30)).orElseThrow().fencingToken()
                    > lease.fencingToken());
        }
    }
}
