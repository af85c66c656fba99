package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.ClusterAdmin;
import io.ratchet.client.NodeStatus;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node whose disk fills, on a real file system that fills: a small tmpfs mounted for the test (root
 * only; skipped elsewhere). Three node processes ({@link NodeMain}, as {@code ratchet-node.jar} runs it),
 * n3's storage on the tmpfs. When the tmpfs is full, n3 stops serving without a trace of damage, the
 * others go on acknowledging writes, and once space returns n3 starts again by itself, recovers from its
 * own log and store and catches up.
 */
class DiskFullTest {
    private static final String VALUE = "x".repeat(4_000);
    /** The nodes' logs, kept after the run for a look (their storage goes with the test's folder). */
    private static final Path LOGS = Path.of("target", "disk-full-test");

    @TempDir
    Path dir;
    private Path small;
    private boolean mounted;
    private final Map<String, Process> nodes = new LinkedHashMap<>();

    @AfterEach
    void stop() throws Exception {
        for (Process p : nodes.values()) {
            p.destroy();
        }
        for (Process p : nodes.values()) {
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
        if (mounted) {
            new ProcessBuilder("umount", "-l", small.toString()).inheritIO().start().waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void aNodeWhoseDiskFillsStopsServingAndRejoinsWhenSpaceReturns() throws Exception {
        small = Files.createDirectories(dir.resolve("small"));
        Files.createDirectories(LOGS);
        mounted = run("mount", "-t", "tmpfs", "-o", "size=64m", "ratchet-test", small.toString()) == 0;
        assumeTrue(mounted, "mounting a tmpfs needs root");

        Map<String, String> peers = new LinkedHashMap<>();
        for (String id : List.of("n1", "n2", "n3")) {
            peers.put(id, "127.0.0.1:" + FreePorts.next());
        }
        String peerList = peers.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(","));
        for (String id : peers.keySet()) {
            start(id, peerList, id.equals("n3") ? small.resolve("n3") : dir.resolve(id));
        }
        ClientOptions options = ClientOptions.parse(peerList).withTimeouts(Duration.ofSeconds(3), 10, Duration.ofSeconds(30));
        try (RatchetClient client = RatchetClient.connect(options);
             ClusterAdmin admin = ClusterAdmin.connect(options)) {
            List<String> written = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                written.add(put(client, "before/" + i));
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> caughtUp(admin, "n3"));

            Path filler = fill(small.resolve("filler"));
            // Writes go on: n3 fails on its next write to the full disk (a log segment's room, a store
            // flush), and the other two are a majority. Each put is acknowledged.
            int[] next = {0};
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(1)).until(() -> {
                written.add(put(client, "during/" + next[0]++));
                return log("n3").contains("is not serving: the disk that holds");
            });
            assertTrue(nodes.get("n3").isAlive(), "a node whose disk filled waits; it does not exit");
            for (int i = 0; i < 20; i++) {
                written.add(put(client, "while-full/" + i));
            }
            assertEquals("UNREACHABLE", role(admin, "n3"), "n3 serves nothing while its disk is full");

            Files.delete(filler);
            await().atMost(Duration.ofSeconds(60)).until(() -> log("n3").contains("starting again")
                    && caughtUp(admin, "n3"));
            try (RatchetClient onlyN3 = RatchetClient.connect(ClientOptions.parse("n3=" + peers.get("n3")))) {
                for (String key : written) {
                    Optional<Item> item = onlyN3.getStale(key).value();
                    assertTrue(item.isPresent(), key + " is on n3 after it caught up");
                }
            }
            assertTrue(nodes.get("n3").isAlive(), "n3 started again in the same process, which never exited");
        }
    }

    private String put(RatchetClient client, String key) {
        assertTrue(client.put(key, VALUE, 0).successful(), key);
        return key;
    }

    private static boolean caughtUp(ClusterAdmin admin, String id) {
        List<NodeStatus> all = admin.status();
        long commit = all.stream().filter(s -> "LEADER".equals(s.role())).mapToLong(NodeStatus::commitIndex).max().orElse(-1);
        return commit > 0 && all.stream().anyMatch(s -> s.id().equals(id) && s.appliedIndex() >= commit);
    }

    private static String role(ClusterAdmin admin, String id) {
        return admin.status().stream().filter(s -> s.id().equals(id)).map(NodeStatus::role).findFirst().orElse("?");
    }

    /** Writes zeros to {@code file} until the file system says it is full. */
    private static Path fill(Path file) throws IOException {
        byte[] block = new byte[1 << 16];
        try (OutputStream out = Files.newOutputStream(file)) {
            while (true) {
                out.write(block);
            }
        } catch (IOException full) {
            assertTrue(full.getMessage().contains("No space left"), full.toString());
        }
        return file;
    }

    private void start(String id, String peerList, Path storage) throws IOException {
        Path conf = dir.resolve(id + ".properties");
        Files.writeString(conf, String.join("\n",
                "id=" + id,
                "peers=" + peerList,
                "storage=" + storage,
                "snapshot.threshold=50",
                "quota.bytes=256MiB",
                "store.block.cache=8MiB",
                "store.write.buffer=2MiB",
                "store.min.free=0",
                ""));
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), NodeMain.class.getName(), "--conf", conf.toString())
                .redirectErrorStream(true)
                .redirectOutput(LOGS.resolve(id + ".log").toFile())
                .start();
        nodes.put(id, p);
    }

    private String log(String id) throws IOException {
        return Files.readString(LOGS.resolve(id + ".log"), StandardCharsets.UTF_8);
    }

    private static int run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        return p.waitFor(30, TimeUnit.SECONDS) ? p.exitValue() : -1;
    }
}
