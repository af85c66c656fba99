package io.ratchet.examples.signup;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two instances of the sign-up service, each its own JVM started from the jar a user builds, against a real
 * three-node cluster started by {@code scripts/cluster start}. Sign-ups race for the same e-mails from both
 * instances, before and across a kill -9 of the cluster's leader, and the scheduled report runs on one
 * instance at a time throughout.
 */
class TwoInstancesIT {
    private static final Path HOME = Path.of(System.getProperty("ratchet.home", "../..")).toAbsolutePath().normalize();
    private static final Path JAR = Path.of(System.getProperty("signup.jar", "target/ratchet-example-signup.jar"));
    /** How long a report run keeps the lock at least, and how long its work takes (the test's settings). */
    private static final Duration AT_LEAST = Duration.ofMillis(300);
    private static final Duration WORK = Duration.ofMillis(150);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    static Path data;
    private static int basePort;
    private static String peers;
    private static final List<Process> instances = new ArrayList<>();
    private static final List<Integer> ports = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        basePort = freeBase();
        assertEquals(0, cluster(240, "start"), "scripts/cluster start");
        peers = clusterOutput("peers").strip();
        for (String name : List.of("a", "b")) {
            int port = freePort();
            Path log = data.resolve("instance-" + name + ".log");
            Process p = new ProcessBuilder("java", "-Xmx256m", "-jar", JAR.toString(), "--server.port=" + port,
                    "--ratchet.peers=" + peers, "--signup.instance=" + name,
                    "--signup.report.every=100ms", "--signup.report.at-least=" + AT_LEAST.toMillis() + "ms",
                    "--signup.report.work=" + WORK.toMillis() + "ms")
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            instances.add(p);
            ports.add(port);
        }
        for (int port : ports) {
            await().atMost(Duration.ofSeconds(90)).ignoreExceptions()
                    .until(() -> get(port, "/actuator/health").path("components").path("ratchet").path("status").asText(),
                            "UP"::equals);
        }
    }

    @AfterAll
    static void stop() throws Exception {
        for (Process p : instances) {
            p.destroy();
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
        cluster(60, "stop");
        keepLogs();
    }

    /**
     * The instances' and the nodes' logs, copied to {@code target/it-logs/TwoInstancesIT/}: the data directory
     * is a temporary one, and a failed run is read from them.
     */
    private static void keepLogs() throws IOException {
        Path to = Path.of("target", "it-logs", "TwoInstancesIT");
        List<Path> logs;
        try (Stream<Path> files = Files.walk(data, 3)) { // cluster/local-N/nX.log; not the stores' own logs below
            logs = files.filter(f -> f.getFileName().toString().endsWith(".log")).toList();
        }
        for (Path log : logs) {
            Path copy = to.resolve(data.relativize(log).toString());
            Files.createDirectories(copy.getParent());
            Files.copy(log, copy, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    @Test
    void eachEmailHasOneWinnerAndTheReportNeverRunsOnBothAcrossALeaderKill() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            race(pool, "before");

            List<String> said = clusterOutput("kill-leader").strip().lines().toList();
            String killed = said.get(said.size() - 1); // its last line is the node's id
            // Sign-ups go on while the cluster elects a new leader: the clients follow it.
            race(pool, "across");
            assertEquals(0, cluster(120, "start-node", killed), "restart " + killed);
            race(pool, "after");
        } finally {
            pool.shutdownNow();
        }

        // The report ran on one instance at a time: no two runs overlap, and tokens rise from run to run.
        List<JsonNode> runs = new ArrayList<>();
        for (int port : ports) {
            get(port, "/runs").forEach(runs::add);
        }
        runs.sort(Comparator.comparingLong(r -> r.path("startedAt").asLong()));
        assertTrue(runs.size() >= 10, "the report ran " + runs.size() + " times");
        assertEquals(2, runs.stream().map(r -> r.path("instance").asText()).distinct().count(),
                "both instances took the lock in turn: " + runs);
        for (int i = 1; i < runs.size(); i++) {
            JsonNode before = runs.get(i - 1);
            JsonNode run = runs.get(i);
            assertTrue(run.path("startedAt").asLong() >= before.path("endedAt").asLong(),
                    "two runs at once: " + before + " and " + run);
            assertTrue(run.path("token").asLong() > before.path("token").asLong(), "tokens rise: " + before + " then " + run);
        }
        assertTrue(runs.stream().allMatch(r -> r.path("written").asBoolean()), "no run was fenced out: " + runs);

        for (int port : ports) {
            JsonNode metrics = get(port, "/actuator/metrics/ratchet.client.requests");
            assertTrue(metrics.path("measurements").get(0).path("value").asDouble() > 0, "the client's requests are metered");
            assertEquals("UP", get(port, "/actuator/health").path("components").path("ratchet").path("status").asText());
        }
    }

    /**
     * Twelve e-mails, each signed up four times at once, twice on each instance: exactly one 201 per e-mail,
     * the others 409, and the cluster holds one reservation naming one user document, the winner's.
     */
    private static void race(ExecutorService pool, String round) throws Exception {
        Map<String, List<Future<HttpResponse<String>>>> byEmail = new ConcurrentHashMap<>();
        for (int e = 0; e < 12; e++) {
            String email = round + "-" + e + "@example.com";
            for (int i = 0; i < 4; i++) {
                int port = ports.get(i % 2);
                byEmail.computeIfAbsent(email, k -> new ArrayList<>()).add(pool.submit(() -> post(port, "/users",
                        JSON.writeValueAsString(Map.of("email", email, "name", "user of " + email)))));
            }
        }
        try (RatchetClient client = RatchetClient.connect(peers)) {
            for (var entry : byEmail.entrySet()) {
                List<Integer> codes = new ArrayList<>();
                String winner = null;
                for (var f : entry.getValue()) {
                    HttpResponse<String> r = f.get(60, TimeUnit.SECONDS);
                    codes.add(r.statusCode());
                    if (r.statusCode() == 201) {
                        winner = JSON.readTree(r.body()).path("id").asText();
                    }
                }
                codes.sort(Integer::compare);
                assertEquals(List.of(201, 409, 409, 409), codes, entry.getKey() + " (" + round + " the leader kill)");
                Item reservation = client.get("emails/" + entry.getKey()).orElseThrow();
                assertEquals(JSON.writeValueAsString(winner), reservation.value(), "the reservation names the winner");
                assertTrue(client.getDocument(winner).isPresent(), "the winner's document was saved with it");
            }
        }
    }

    private static HttpResponse<String> post(int port, String path, String body) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode get(int port, String path) throws IOException, InterruptedException {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(r.body());
    }

    /** {@code scripts/cluster ARGS} on this test's data and ports; its exit code. */
    private static int cluster(int timeoutSeconds, String... args) throws IOException, InterruptedException {
        return runCluster(timeoutSeconds, args).exitValue();
    }

    private static String clusterOutput(String... args) throws IOException, InterruptedException {
        Process p = runCluster(120, args);
        assertEquals(0, p.exitValue(), "scripts/cluster " + String.join(" ", args));
        return Files.readString(data.resolve("cluster.out"), StandardCharsets.UTF_8);
    }

    private static Process runCluster(int timeoutSeconds, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("scripts/cluster"));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(HOME.toFile())
                .redirectOutput(data.resolve("cluster.out").toFile())
                .redirectError(ProcessBuilder.Redirect.appendTo(data.resolve("cluster.err").toFile()));
        pb.environment().put("RATCHET_DATA", data.resolve("cluster").toString());
        pb.environment().put("RATCHET_BASE_PORT", String.valueOf(basePort));
        Process p = pb.start();
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(command + " did not finish in " + timeoutSeconds + " s");
        }
        return p;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** A base port whose node ports (+1..+3) and HTTP ports (+11..+13) are free now, below the ephemeral range. */
    private static int freeBase() {
        for (int tries = 0; tries < 50; tries++) {
            int base = ThreadLocalRandom.current().nextInt(20_000, 31_000);
            if (free(base + 1, base + 3) && free(base + 11, base + 13)) {
                return base;
            }
        }
        throw new IllegalStateException("no free ports for a cluster");
    }

    private static boolean free(int from, int to) {
        for (int port = from; port <= to; port++) {
            try (ServerSocket s = new ServerSocket(port)) {
                s.setReuseAddress(true);
            } catch (IOException e) {
                return false;
            }
        }
        return true;
    }
}
