package io.ratchet.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.RatchetClient;
import io.ratchet.client.RatchetException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The extension's promises: one cluster per test, the same one wherever a test asks, closed after it. */
@ExtendWith(InProcessClusterExtension.class)
class InProcessClusterExtensionTest {
    /** A client of each test's cluster, looked at once every test has ended. */
    private static final List<RatchetClient> CLIENTS = new CopyOnWriteArrayList<>();

    private final InProcessCluster fromConstructor;

    InProcessClusterExtensionTest(InProcessCluster cluster) {
        this.fromConstructor = cluster;
    }

    @Test
    void theConstructorAndTheTestSeeOneCluster(InProcessCluster cluster) {
        assertSame(fromConstructor, cluster);
        createTheSameKey(cluster);
    }

    @Test
    void eachTestHasAFreshStore(InProcessCluster cluster) {
        createTheSameKey(cluster);
    }

    /** Create-only: it succeeds in both tests only if neither sees the other's store. */
    private static void createTheSameKey(InProcessCluster cluster) {
        RatchetClient client = cluster.client();
        assertTrue(client.put("k", "1", 0).successful());
        CLIENTS.add(client);
    }

    @AfterAll
    static void everyClusterWasClosedWithItsTest() {
        assertEquals(2, CLIENTS.size(), "both tests ran");
        for (RatchetClient client : CLIENTS) {
            assertThrows(RatchetException.class, () -> client.get("k"), "the client closed with its cluster");
        }
    }
}
