package io.ratchet.dist;

import static io.ratchet.dist.ReleaseProcesses.bindable;
import static io.ratchet.dist.ReleaseProcesses.readyNodes;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.client.ClientOptions;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.node.FreePorts;
import io.ratchet.node.HostPeers;
import io.ratchet.node.ProcessRun;
import io.ratchet.protocol.Item;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A rolling upgrade as an operator does one: a cluster of three nodes of the previous release (its archive
 * built here from the commit {@code ratchet.previous.release} names) takes writes; one node at a time is
 * stopped as systemd stops it (SIGTERM) and started from this build's archive on the same configuration and
 * data, followers first, the leader last; the writes go on throughout. Every write acknowledged before,
 * during and after is read back from the upgraded cluster, the clients saw no error at all, and the
 * previous release's command line works against the cluster at every step of the mix. Then the upgraded
 * leader is restarted the same way, and hands leadership over before it stops.
 */
class RollingUpgradeIT {
    private static final String VERSION = System.getProperty("ratchet.version");
    private static final Path ARCHIVE = Path.of(System.getProperty("ratchet.archive"));
    private static final String PREVIOUS = System.getProperty("ratchet.previous.release");
    private static final Path REPOSITORY = Path.of(System.getProperty("ratchet.repository"));
    private static final List<String> IDS = List.of("n1", "n2", "n3");
    private static final List<String> HOSTS = List.of("127.0.0.21", "127.0.0.22", "127.0.0.23");

    @TempDir
    static Path releases;
    private static Path previousHome;
    private static Path currentHome;

    @TempDir
    Path dir;
    private ReleaseProcesses processes;
    private final Map<String, Process> nodes = new LinkedHashMap<>();

    @BeforeAll
    static void bothReleases() throws Exception {
        Path previous = PreviousRelease.archive(PREVIOUS, REPOSITORY, ARCHIVE.getParent().resolve("previous-release"));
        previousHome = ReleaseProcesses.unpack(previous, Files.createDirectories(releases.resolve("previous")),
                PreviousRelease.version(previous));
        currentHome = ReleaseProcesses.unpack(ARCHIVE, Files.createDirectories(releases.resolve("current")), VERSION);
    }

    @AfterEach
    void stopEveryProcess() throws InterruptedException {
        if (processes != null) {
            processes.close();
        }
    }

    @Test
    void aClusterUpgradedOneNodeAtATimeUnderWritesLosesNothingAndItsClientsSeeNoError() throws Exception {
        assumeTrue(bindable(HOSTS.get(0)), HOSTS.get(0) + " cannot be bound here (on Linux every 127.x address is local)");
        processes = new ReleaseProcesses(dir);
        int port = FreePorts.next();
        String peers = HostPeers.of(IDS, HOSTS, port).line();
        for (String id : IDS) {
            Files.writeString(conf(id), "id=" + id + "\npeers=" + peers + "\nstorage=" + dir.resolve("data").resolve(id) + "\n");
            nodes.put(id, start(previousHome, id));
        }
        await("the previous release's cluster is ready").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500))
                .until(() -> status(previousHome), r -> r.code() == 0 && readyNodes(r.json()) == IDS.size());

        ClientOptions options = ClientOptions.parse(peers);
        try (RatchetClient writer = RatchetClient.connect(options); RatchetClient counter = RatchetClient.connect(options)) {
            Load load = new Load(writer, counter);
            load.start();
            long slowestUpgrading;
            try {
                load.awaitMore(50);

                // Followers first, then the leader: one leader change, which its hand-over on SIGTERM makes a transfer.
                String leader = status(currentHome).json().path("leader").asText();
                List<String> order = new ArrayList<>(IDS);
                order.remove(leader);
                order.add(leader);
                for (String id : order) {
                    Process old = nodes.get(id);
                    old.destroy();
                    assertTrue(old.waitFor(30, TimeUnit.SECONDS), id + " stopped within the unit's TimeoutStopSec");
                    assertEquals(143, old.exitValue(), id + " closed on SIGTERM: " + said(id));
                    nodes.put(id, start(currentHome, id));
                    await(id + " upgraded and caught up").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500))
                            .until(() -> status(currentHome), r -> r.code() == 0 && readyNodes(r.json()) == IDS.size());
                    load.awaitMore(50);
                    if (id.equals(order.get(0))) {
                        // The previous release's nodes do not say which they are; this one's do, so each is shown.
                        ProcessRun mixed = processes.run(List.of(currentHome.resolve("bin/ratchet").toString(), "--conf",
                                conf("n1").toString(), "status"), dir, Map.of());
                        assertTrue(mixed.out().contains("release " + VERSION) && mixed.out().contains("release (not said)"),
                                mixed.toString());
                    }
                    // A client of the previous release reads through the mixed cluster.
                    ProcessRun oldClient = processes.run(List.of(previousHome.resolve("bin/ratchet").toString(), "--peers", peers,
                            "get", Load.COUNTER, "--json"), dir, Map.of());
                    assertEquals(0, oldClient.code(), "the previous release's command line, " + id + " upgraded: " + oldClient);
                }
                // From this release on, a leader told to stop hands over first: a restart of the leader is a transfer.
                slowestUpgrading = load.slowestMillis.getAndSet(0);
                String upgradedLeader = status(currentHome).json().path("leader").asText();
                Process leading = nodes.get(upgradedLeader);
                leading.destroy();
                assertTrue(leading.waitFor(30, TimeUnit.SECONDS));
                assertEquals(143, leading.exitValue());
                String log = Files.readString(dir.resolve("logs").resolve(upgradedLeader).resolve("ratchet-node.log"));
                assertTrue(log.contains("node " + upgradedLeader + " leads and is stopping: it hands leadership to"), log);
                nodes.put(upgradedLeader, start(currentHome, upgradedLeader));
                await(upgradedLeader + " back").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500))
                        .until(() -> status(currentHome), r -> r.code() == 0 && readyNodes(r.json()) == IDS.size());
                load.awaitMore(50);
            } finally {
                // Stopped whatever happened: a failed step must not leave two loops spinning on a closed client.
                load.stop();
            }

            assertEquals(List.of(), load.errors, "a client saw no error during the upgrade");
            assertTrue(load.acknowledged.size() > 150, "writes went on throughout: " + load.acknowledged.size());
            for (Map.Entry<String, Long> write : load.acknowledged.entrySet()) {
                Item item = writer.get(write.getKey()).orElseThrow(() -> new AssertionError("lost: " + write.getKey()));
                assertEquals(write.getValue(), item.index(), write.getKey());
            }
            assertEquals(load.increments.get(), writer.get(Load.COUNTER).orElseThrow().valueNode().asLong(),
                    "every acknowledged increment, each once");
            System.out.printf("rolling upgrade from %s: %d writes and %d increments acknowledged, none failed; slowest %d ms"
                    + " while upgrading, %d ms while the upgraded leader restarted%n", PREVIOUS, load.acknowledged.size(),
                    load.increments.get(), slowestUpgrading, load.slowestMillis.get());
        }
        for (JsonNode node : status(currentHome).json().path("nodes")) {
            assertEquals(VERSION, node.path("release").asText(), node.toString());
        }
        for (String id : IDS) {
            String command = String.join(" ", nodes.get(id).info().arguments().orElseThrow());
            assertTrue(command.contains(currentHome.resolve("lib").toString()), id + " runs this release: " + command);
        }
    }

    /** Writes of new keys and compare-exchange increments of one counter, each in a loop of its own. */
    private static final class Load {
        static final String COUNTER = "upgrade/counter";
        final Map<String, Long> acknowledged = new ConcurrentHashMap<>();
        final AtomicLong increments = new AtomicLong();
        final AtomicLong slowestMillis = new AtomicLong();
        final List<String> errors = new CopyOnWriteArrayList<>();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final ExecutorService threads = Executors.newFixedThreadPool(2);
        private final RatchetClient writer;
        private final RatchetClient counter;
        private final List<Future<?>> loops = new ArrayList<>();

        Load(RatchetClient writer, RatchetClient counter) {
            this.writer = writer;
            this.counter = counter;
        }

        void start() {
            loops.add(threads.submit(() -> {
                for (long i = 0; running.get(); i++) {
                    String key = "upgrade/w" + i;
                    long began = System.nanoTime();
                    try {
                        CompareExchangeResult r = writer.put(key, i, 0);
                        if (!r.successful()) {
                            errors.add(key + ": create-only put of a new key failed: " + r);
                        }
                        acknowledged.put(key, r.index());
                    } catch (RuntimeException e) {
                        errors.add(key + ": " + e);
                    }
                    took(began);
                }
            }));
            loops.add(threads.submit(() -> {
                while (running.get()) {
                    long began = System.nanoTime();
                    try {
                        Item current = counter.get(COUNTER).orElse(null);
                        long value = current == null ? 0 : current.valueNode().asLong();
                        CompareExchangeResult r = counter.put(COUNTER, value + 1, current == null ? 0 : current.index());
                        if (r.successful()) {
                            increments.incrementAndGet();
                        } else {
                            errors.add("the counter moved under its only writer: " + r);
                        }
                    } catch (RuntimeException e) {
                        errors.add(COUNTER + ": " + e);
                    }
                    took(began);
                }
            }));
        }

        private void took(long began) {
            slowestMillis.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began), Math::max);
        }

        /** Waits until {@code n} more writes were acknowledged: the cluster takes writes now. */
        void awaitMore(int n) {
            int target = acknowledged.size() + n;
            await("writes go on").atMost(Duration.ofSeconds(60)).until(() -> acknowledged.size() >= target);
        }

        /** Ends both loops and waits for them; a second call does nothing. */
        void stop() throws Exception {
            if (!running.getAndSet(false)) {
                return;
            }
            for (Future<?> loop : loops) {
                loop.get(60, TimeUnit.SECONDS);
            }
            threads.shutdown();
        }
    }

    private Process start(Path home, String id) throws IOException {
        return processes.startNode(home, conf(id), dir.resolve("data"), dir.resolve(id + ".out"), dir.resolve("logs").resolve(id));
    }

    private ProcessRun status(Path home) throws IOException, InterruptedException {
        return processes.run(List.of(home.resolve("bin/ratchet").toString(), "--conf", conf("n1").toString(), "--timeout", "5s",
                "status", "--json"), dir, Map.of());
    }

    private String said(String id) throws IOException {
        return new String(Files.readAllBytes(dir.resolve(id + ".out")), StandardCharsets.UTF_8);
    }

    private Path conf(String id) {
        return dir.resolve(id + ".conf");
    }
}
