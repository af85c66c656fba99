package io.ratchet.cli;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.RatchetClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Runs the repository's scripts as a user does, from its root, against a local cluster of their own: its
 * data under {@code data}, and its ports from a base port chosen once that leaves the nodes' ports
 * (BASE+1..BASE+{@code nodes}) and their HTTP ports (BASE+11..) free now.
 */
final class ScriptRunner {
    static final Path HOME = Path.of(System.getProperty("ratchet.home", "..")).toAbsolutePath().normalize();

    /** What a command came to. */
    record Run(int code, String out, String err) {
        @Override
        public String toString() {
            return "exit " + code + "\nstdout: " + out + "\nstderr: " + err;
        }
    }

    private final Path data;
    private final int nodes;
    private Integer base;

    /** For a cluster that may grow to {@code nodes} nodes. */
    ScriptRunner(Path data, int nodes) {
        this.data = data;
        this.nodes = nodes;
    }

    /** {@code scripts/ratchet ARGS}, given a minute. */
    Run ratchet(List<String> args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add("scripts/ratchet");
        command.addAll(args);
        return run(command, 60);
    }

    /** A Java client of the cluster the scripts started (no TLS), for what a test does in bulk. The caller closes it. */
    RatchetClient client() throws IOException {
        StringBuilder peers = new StringBuilder();
        for (int i = 1; i <= nodes; i++) {
            peers.append(i == 1 ? "" : ",").append("n").append(i).append("=127.0.0.1:").append(basePort() + i);
        }
        return RatchetClient.connect(ClientOptions.parse(peers.toString()));
    }

    /**
     * {@code scripts/cluster stop}, then the logs under the cluster's data directory copied to
     * {@code target/it-logs/NAME/}: the data directory is the test's temporary one, and a failed run is read
     * from its nodes' logs.
     */
    Run stopAndKeepLogs(String name) throws IOException, InterruptedException {
        Run stop = run(List.of("scripts/cluster", "stop"), 60);
        Path to = Path.of("target", "it-logs", name);
        List<Path> logs;
        try (Stream<Path> files = Files.walk(data, 2)) { // data/local-N/nX.log; not the stores' own logs below
            logs = files.filter(f -> f.getFileName().toString().endsWith(".log")).toList();
        }
        for (Path log : logs) {
            Path copy = to.resolve(data.relativize(log).toString());
            Files.createDirectories(copy.getParent());
            Files.copy(log, copy, StandardCopyOption.REPLACE_EXISTING);
        }
        return stop;
    }

    Run run(List<String> command, int timeoutSeconds) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(HOME.toFile());
        Map<String, String> env = pb.environment();
        env.remove("RATCHET_PEERS");
        env.put("RATCHET_DATA", data.toString());
        env.putIfAbsent("RATCHET_BASE_PORT", String.valueOf(basePort()));
        Path out = data.resolve("out.txt");
        Path err = data.resolve("err.txt");
        pb.redirectOutput(out.toFile());
        pb.redirectError(err.toFile());
        Process p = pb.start();
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(command + " did not finish in " + timeoutSeconds + " s");
        }
        return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    private synchronized int basePort() throws IOException {
        for (int tries = 0; base == null && tries < 50; tries++) {
            int candidate = ThreadLocalRandom.current().nextInt(20_000, 31_000); // below the ephemeral range
            if (allFree(candidate)) {
                base = candidate;
            }
        }
        if (base == null) {
            throw new IOException("no free run of " + nodes + " node and HTTP ports found");
        }
        return base;
    }

    private boolean allFree(int candidate) {
        for (int i = 1; i <= nodes; i++) {
            if (!free(candidate + i) || !free(candidate + 10 + i)) {
                return false;
            }
        }
        return true;
    }

    private static boolean free(int port) {
        try (ServerSocket s = new ServerSocket(port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
