package io.ratchet.node;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * One 3-node cluster for a whole test class, for tests that each write their own keys and stop no
 * node: a cluster start costs seconds on a 2-core machine. It is always stopped after the class.
 */
abstract class SharedClusterTest {
    @TempDir
    static Path sharedDir;
    static LocalCluster cluster;

    @BeforeAll
    static void startSharedCluster() {
        cluster = LocalCluster.start(3, sharedDir);
    }

    @AfterAll
    static void stopSharedCluster() {
        if (cluster != null) {
            cluster.close();
            cluster = null;
        }
    }
}
