package io.ratchet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.bench.BenchReport;
import io.ratchet.bench.LoadRunner;
import io.ratchet.bench.Workload;
import io.ratchet.client.RatchetClient;
import io.ratchet.node.LocalCluster;
import io.ratchet.protocol.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bench tool, briefly, against a real in-process cluster: every workload commits, and nothing is lost. */
class BenchSmokeTest {
    private static final PrintStream QUIET = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    @Test
    void everyWorkloadCommitsWithoutErrorsAndTheCommandPrintsPeerbenchsJsonLine() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient client = cluster.client();
            for (Workload w : Workload.values()) {
                BenchReport r = new LoadRunner(client, w, 4, QUIET).run(Duration.ZERO, Duration.ofSeconds(1));
                assertTrue(r.commitsPerSecond() > 0, w + " committed nothing: " + r.toJsonLine());
                assertEquals(0, r.errors(), r.toJsonLine());
                assertEquals(0, r.exhausted(), r.toJsonLine());
                assertTrue(r.p50Millis() > 0 && r.p50Millis() <= r.p99Millis(), r.toJsonLine());
                if (w != Workload.HOT) {
                    assertEquals(1.0, r.attemptsPerCommit(), 1e-9, "only hot retries: " + r.toJsonLine());
                }
            }

            JsonNode line = Json.parse(lastLineOf(() -> Main.run("bench", "--peers", cluster.peers(), "--workload", "lock",
                    "--clients", "2", "--client-instances", "2", "--warmup", "0s", "--duration", "1s")));
            List<String> fields = new ArrayList<>();
            line.fieldNames().forEachRemaining(fields::add);
            // peerbench's fields, in its order, then how evenly the clients were served and the CPU an operation took
            assertEquals(List.of("system", "workload", "clients", "instances", "seconds", "commits_per_s", "p50_ms", "p99_ms",
                    "attempts_per_commit", "exhausted", "errors", "client_spread", "node_cpu_us_per_op", "bench_cpu_us_per_op"),
                    fields);
            assertTrue(line.get("node_cpu_us_per_op").isNull(), "no node pids given: " + line);
            assertTrue(line.get("bench_cpu_us_per_op").asDouble() > 0, line.toString());
            assertTrue(line.get("client_spread").isNull() || line.get("client_spread").asDouble() >= 1.0, line.toString());
            assertEquals(2, line.get("instances").asInt());
            assertEquals("ratchet", line.get("system").asText());
            assertEquals("lock", line.get("workload").asText());
            assertTrue(line.get("commits_per_s").asDouble() > 0, line.toString());
        }
    }

    @Test
    void eightClientsIncrementingOneHotCounterLoseNoCommittedIncrementAndCountNoneTwice() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient client = cluster.client();
            client.put("counters/hot", 0, 0);
            ExecutorService pool = Executors.newFixedThreadPool(8);
            AtomicBoolean never = new AtomicBoolean();
            try {
                List<Future<Integer>> committed = new ArrayList<>();
                for (int c = 0; c < 8; c++) {
                    committed.add(pool.submit(() -> {
                        int n = 0;
                        for (int i = 0; i < 25; i++) {
                            n += Workload.increment(client, "counters/hot", never::get).committed() ? 1 : 0;
                        }
                        return n;
                    }));
                }
                int total = 0;
                for (Future<Integer> f : committed) {
                    total += f.get(2, TimeUnit.MINUTES);
                }
                // Under heavy contention an increment may give up after its bounded attempts; none may be lost.
                assertTrue(total > 100, "most increments commit: " + total);
                assertEquals(String.valueOf(total), client.get("counters/hot").orElseThrow().value(),
                        "the counter counts every committed increment exactly once");
            } finally {
                pool.shutdownNow();
            }
        }
    }

    private static String lastLineOf(java.util.function.IntSupplier command) {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        int code;
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            code = command.getAsInt();
        } finally {
            System.setOut(original);
        }
        String[] lines = captured.toString(StandardCharsets.UTF_8).strip().split("\n");
        assertEquals(0, code, String.join("\n", lines));
        return lines[lines.length - 1];
    }
}
