package io.ratchet.dist;

import io.ratchet.node.ProcessRun;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What the release tests do with processes: unpack an archive, run its launchers to completion, start
 * nodes that keep running; and {@link #close} stops every process they started, whatever happened.
 */
final class ReleaseProcesses implements AutoCloseable {
    /** What a user's shell could hold that would steer the launchers away from what a test sets. */
    static final List<String> RATCHET_ENVIRONMENT = List.of("RATCHET_CONF", "RATCHET_PEERS", "RATCHET_HOME",
            "RATCHET_CA", "RATCHET_CERT", "RATCHET_KEY", "RATCHET_TOKEN", "RATCHET_JVM_OPTS", "RATCHET_LOG_DIR",
            "RATCHET_CLIENT_OPTS");
    /** Keeps three nodes small on a small machine. */
    static final String SMALL_NODE = "-Xmx256m -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1";

    /** Where the commands' output goes. */
    private final Path dir;
    private final List<Process> started = new ArrayList<>();

    ReleaseProcesses(Path dir) {
        this.dir = dir;
    }

    /** Unpacks {@code archive} into {@code into}; its release's home, {@code ratchet-VERSION/}. */
    static Path unpack(Path archive, Path into, String version) throws IOException, InterruptedException {
        assertTrue(Files.isRegularFile(archive), archive + " was built");
        Process tar = new ProcessBuilder("tar", "xzf", archive.toString(), "-C", into.toString())
                .redirectErrorStream(true).start();
        String said = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(tar.waitFor(60, TimeUnit.SECONDS) && tar.exitValue() == 0, "tar: " + said);
        return into.resolve("ratchet-" + version);
    }

    /** Runs {@code command} in {@code cwd} to its end (60 s at most), with {@code environment} (an empty value removes one). */
    ProcessRun run(List<String> command, Path cwd, Map<String, String> environment) throws IOException, InterruptedException {
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        ProcessBuilder builder = new ProcessBuilder(command).directory(cwd.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        clean(builder.environment());
        environment.forEach((k, v) -> {
            if (v.isEmpty()) {
                builder.environment().remove(k);
            } else {
                builder.environment().put(k, v);
            }
        });
        Process p = builder.start();
        started.add(p);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(command + " did not finish in 60 s");
        }
        return new ProcessRun(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    /**
     * Starts {@code home}'s {@code bin/ratchet-node --conf conf} as the systemd unit does, from {@code cwd},
     * its output appended to {@code out}, small, logging to {@code logs}.
     */
    Process startNode(Path home, Path conf, Path cwd, Path out, Path logs) throws IOException {
        return startNode(home, conf, cwd, out, logs, Map.of());
    }

    /** As above, with {@code environment} added to the launcher's. */
    Process startNode(Path home, Path conf, Path cwd, Path out, Path logs, Map<String, String> environment) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(home.resolve("bin/ratchet-node").toString(), "--conf", conf.toString())
                .directory(Files.createDirectories(cwd).toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()));
        clean(builder.environment());
        builder.environment().put("RATCHET_LOG_DIR", logs.toString());
        builder.environment().put("RATCHET_JVM_OPTS", SMALL_NODE);
        builder.environment().putAll(environment);
        Process p = builder.start();
        started.add(p);
        return p;
    }

    /** Stops every process started, and every process those started. */
    @Override
    public void close() throws InterruptedException {
        for (Process p : started) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        for (Process p : started) {
            p.waitFor(30, TimeUnit.SECONDS);
        }
        started.clear();
    }

    static void clean(Map<String, String> environment) {
        RATCHET_ENVIRONMENT.forEach(environment::remove);
    }

    static int readyNodes(JsonNode status) {
        int ready = 0;
        for (JsonNode node : status.path("nodes")) {
            ready += node.path("ready").asBoolean() ? 1 : 0;
        }
        return ready;
    }

    static boolean bindable(String address) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getByName(address), 0));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    static List<String> concat(List<String> first, String... rest) {
        List<String> all = new ArrayList<>(first);
        all.addAll(List.of(rest));
        return all;
    }
}
