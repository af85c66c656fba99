package io.ratchet.chaos.workload;

import static io.ratchet.testing.InProcessCluster.N1;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ratchet.chaos.checker.CheckResult;
import io.ratchet.chaos.checker.Validity;
import io.ratchet.chaos.history.History;
import io.ratchet.chaos.history.OpType;
import io.ratchet.testing.InProcessCluster;
import io.ratchet.client.RatchetClient;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each lock workload runs for a few dozen grants against {@link InProcessCluster} (the real store, no
 * faults), and its checker finds the history valid: the workloads' own code, without a chaos run.
 */
@Timeout(90)
class LockWorkloadsTest {
    static Stream<Supplier<Workload>> lockWorkloads() {
        return Stream.of(LocksWorkload::new, FairLockWorkload::new, SemaphoreWorkload::new);
    }

    @ParameterizedTest
    @MethodSource("lockWorkloads")
    void aShortRunWithoutFaultsIsValid(Supplier<Workload> make) throws Exception {
        Workload workload = make.get();
        try (InProcessCluster cluster = new InProcessCluster()) {
            History history = History.inMemory();
            Random random = new Random(7);
            Supplier<RatchetClient> clients = () -> cluster.client(InProcessCluster.options(N1));
            workload.prepare(new ClientProcess(history, workload.name(), () -> "setup", clients.get(), random));
            AtomicInteger ids = new AtomicInteger();
            WorkerPool pool = new WorkerPool(workload, 4, 40, history, () -> "p" + ids.incrementAndGet(), clients, 7);
            pool.start();

            await().atMost(Duration.ofSeconds(60)).until(() -> granted(history) >= 20);

            assertEquals(0, pool.stop(Duration.ofSeconds(20)), "every process finished");
            workload.finalReads(new ClientProcess(history, workload.name(), () -> "final", clients.get(), random));
            assertEquals(0, pool.harnessErrors());
            CheckResult result = workload.checker().check(history.ops().stream()
                    .filter(op -> workload.name().equals(op.workload())).toList());
            assertEquals(Validity.VALID, result.validity(), result.toString());
        }
    }

    private static long granted(History history) {
        return history.ops().stream().filter(op -> op.type() == OpType.OK && "acquire".equals(op.f())
                && op.output() != null && op.output().path("granted").asBoolean(false)).count();
    }
}
