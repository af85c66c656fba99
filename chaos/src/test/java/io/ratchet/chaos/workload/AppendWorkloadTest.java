package io.ratchet.chaos.workload;

import static io.ratchet.testing.InProcessCluster.N1;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.chaos.checker.Anomaly;
import io.ratchet.chaos.checker.CheckResult;
import io.ratchet.chaos.checker.Validity;
import io.ratchet.chaos.history.History;
import io.ratchet.chaos.history.OpType;
import io.ratchet.client.RatchetClient;
import io.ratchet.testing.InProcessCluster;
import java.time.Duration;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The append workload against {@link InProcessCluster} (the real store, one group, no faults): with the
 * client's transactions its history is strictly serializable; with a client that drops the checks of the
 * keys a transaction only read, the checker finds the read or write skew that lets in.
 */
@Timeout(120)
class AppendWorkloadTest {
    private static final Duration BUDGET = Duration.ofSeconds(30);

    @Test
    void transactionsThatCheckWhatTheyReadAreStrictlySerializable() throws Exception {
        try (InProcessCluster cluster = new InProcessCluster()) {
            AppendWorkload workload = new AppendWorkload(1, 0, AppendClient::of, BUDGET);
            History history = History.inMemory();
            WorkerPool pool = start(cluster, workload, history);
            try {
                await().atMost(Duration.ofSeconds(60)).until(() -> committed(history) >= 150);
            } finally {
                assertEquals(0, pool.stop(Duration.ofSeconds(20)), "every process finished");
            }
            assertEquals(0, pool.harnessErrors());
            workload.finalReads(new ClientProcess(history, workload.name(), () -> "final",
                    cluster.client(InProcessCluster.options(N1)), new Random(3)));
            CheckResult r = workload.checker().check(history.ops());
            assertEquals(Validity.VALID, r.validity(), r.toString());
            assertEquals("strict-serializable", r.details().get("model"), r.toString());
            assertTrue(((Number) r.details().get("aborted")).longValue() > 0, "transactions contended: " + r.notes());
        }
    }

    @Test
    void transactionsThatSkipTheChecksOfWhatTheyReadAreCaught() throws Exception {
        try (InProcessCluster cluster = new InProcessCluster()) {
            AppendWorkload workload = new AppendWorkload(1, 0, UncheckedReads::new, BUDGET);
            History history = History.inMemory();
            WorkerPool pool = start(cluster, workload, history);
            try {
                await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1))
                        .until(() -> skew(workload.checker().check(history.ops())));
            } finally {
                pool.stop(Duration.ofSeconds(20));
            }
            CheckResult r = workload.checker().check(history.ops());
            assertEquals(Validity.INVALID, r.validity(), r.toString());
        }
    }

    private static WorkerPool start(InProcessCluster cluster, AppendWorkload workload, History history) {
        Supplier<RatchetClient> clients = () -> cluster.client(InProcessCluster.options(N1));
        AtomicInteger ids = new AtomicInteger();
        WorkerPool pool = new WorkerPool(workload, 6, 300, history, () -> "p" + ids.incrementAndGet(), clients, 7);
        pool.start();
        return pool;
    }

    private static long committed(History history) {
        return history.ops().stream().filter(op -> op.type() == OpType.OK && op.output().path("committed").asBoolean(false)
                && op.output().toString().contains("append")).count();
    }

    /** The checker found a stale read committed: read skew (G-single) or write skew (G2-item). */
    private static boolean skew(CheckResult r) {
        Set<String> skews = Set.of("G-single", "G2-item");
        return r.anomalies().stream().map(Anomaly::type).anyMatch(skews::contains);
    }
}
