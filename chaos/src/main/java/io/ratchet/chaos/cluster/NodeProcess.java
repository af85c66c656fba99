package io.ratchet.chaos.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One Ratchet node: a separate JVM running {@code ratchet-node.jar --conf FILE}, which the harness can
 * kill, pause, resume and start again. Its output goes to a log file, its pid to a pid file (so that a
 * launcher script can clean up after a harness that was itself killed). Thread-safe.
 *
 * <p>A node is <em>in service</em> while it should run: an initial node from the start, a spare once it
 * was started to join. Only a node in service is started again after a kill. Once removed from the
 * cluster it is {@linkplain #retire() retired}: stopped, its storage deleted, out of service; it comes
 * back only {@linkplain #startJoining() as a new member}, on empty storage. So the harness follows the
 * Raft rule an operator must: a removed node never returns on its old data, and a member's data is never
 * wiped (the caller removes it first).
 */
public final class NodeProcess {
    private static final Duration RETIRE_GRACE = Duration.ofSeconds(10);

    private final String id;
    private final String address;
    private final List<String> command;
    private final Map<String, String> environment;
    private final Path workDir;
    private final Path storage;
    private final Path log;
    private final Path pidFile;
    private Process process;
    private boolean inService;
    /** Started with {@code --join}: kept for its later starts, which recover from its storage either way. */
    private boolean joins;
    private boolean stopRequested;
    private boolean paused;
    private boolean claimed;

    /**
     * @param command   the full command line, e.g. {@code [ip, netns, exec, NS, java, ..., -jar, ratchet-node.jar, --conf, FILE]}
     * @param environment variables added to the harness' own for the node's process ({@link NodeFaults})
     * @param storage   the node's storage directory, as its configuration names it
     * @param inService whether it is one of the nodes the cluster starts with
     */
    NodeProcess(String id, String address, List<String> command, Map<String, String> environment, Path workDir, Path storage,
                Path log, Path pidFile, boolean inService) {
        this.id = id;
        this.address = address;
        this.command = List.copyOf(command);
        this.environment = Map.copyOf(environment);
        this.workDir = workDir;
        this.storage = storage;
        this.log = log;
        this.pidFile = pidFile;
        this.inService = inService;
    }

    public String id() {
        return id;
    }

    /** Its storage directory, as its configuration names it. */
    public Path storage() {
        return storage;
    }

    /** The {@code host:port} it serves at. */
    public String address() {
        return address;
    }

    /**
     * Starts the JVM unless it runs already or is not in service. Its data survives from any earlier run
     * of it. Once the cluster has asked it to stop, it never starts again: a nemesis still healing after
     * the run was torn down must not leave a node behind.
     */
    public synchronized void start() throws IOException {
        if (alive() || stopRequested || !inService) {
            return;
        }
        List<String> line = new ArrayList<>(command);
        if (joins) {
            line.add("--join");
        }
        ProcessBuilder builder = new ProcessBuilder(line);
        builder.environment().putAll(environment);
        process = builder.directory(workDir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        process.getOutputStream().close();
        paused = false;
        Files.writeString(pidFile, process.pid() + "\n");
    }

    /**
     * Puts a node out of service back in, started with {@code --join} on empty storage: it waits, in no
     * configuration, until the cluster adds it.
     *
     * @throws IllegalStateException when it is in service or has storage: only a retired node, or a spare
     *                               never started, can join
     */
    public synchronized void startJoining() throws IOException {
        if (inService || alive() || Files.exists(storage)) {
            throw new IllegalStateException(id + " cannot join: it is " + (inService ? "in service" : "not wiped"));
        }
        Files.writeString(log, "---- chaos: starting " + id + " on empty storage with --join\n",
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        inService = true;
        joins = true;
        start();
    }

    /**
     * Takes a node that is no member (removed, or never added) out of service: stops it (SIGTERM, SIGKILL
     * after a grace period) and deletes its storage. The caller has made sure it is in no configuration.
     */
    public synchronized void retire(String why) throws IOException {
        inService = false;
        if (alive()) {
            resume();
            process.destroy();
            awaitStop(RETIRE_GRACE);
        }
        if (Files.exists(storage)) {
            try (Stream<Path> paths = Files.walk(storage)) {
                for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
        Files.writeString(log, "---- chaos: " + id + " stopped and its storage deleted: " + why + "\n",
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    public synchronized boolean inService() {
        return inService;
    }

    /**
     * Reserves the node for one nemesis' fault (a kill until it is healed, a membership change until it is
     * done), so two nemeses running at once never act on one node together: a kill's restart must not bring
     * back a node another removed meanwhile. False when another holds it.
     */
    public synchronized boolean claim() {
        if (claimed) {
            return false;
        }
        claimed = true;
        return true;
    }

    public synchronized void release() {
        claimed = false;
    }

    public synchronized boolean claimed() {
        return claimed;
    }

    public synchronized boolean alive() {
        return process != null && process.isAlive();
    }

    public synchronized boolean paused() {
        return paused && alive();
    }

    public synchronized long pid() {
        return process == null ? -1 : process.pid();
    }

    /** kill -9, and waits until it is gone. */
    public synchronized void kill() throws IOException {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        awaitExit(Duration.ofSeconds(30));
        paused = false;
    }

    /** SIGSTOP: the JVM stops dead, sockets open, as in a long GC pause or a hung VM. */
    public synchronized void pause() throws IOException {
        if (alive()) {
            Shell.run("kill", "-STOP", Long.toString(process.pid()));
            paused = true;
        }
    }

    /** SIGCONT. */
    public synchronized void resume() throws IOException {
        if (alive() && paused) {
            Shell.run("kill", "-CONT", Long.toString(process.pid()));
        }
        paused = false;
    }

    /** Resumes it if paused and asks it to stop (SIGTERM); see {@link #awaitStop}. */
    public synchronized void requestStop() throws IOException {
        stopRequested = true;
        if (alive()) {
            resume();
            process.destroy();
        }
    }

    /** Waits up to {@code grace} for it to exit, then kills it. */
    public synchronized void awaitStop(Duration grace) throws IOException {
        if (process == null) {
            return;
        }
        try {
            if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                kill();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill();
        }
    }

    private void awaitExit(Duration timeout) throws IOException {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IOException("node " + id + " (pid " + process.pid() + ") did not exit after SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for node " + id + " to exit", e);
        }
    }

    @Override
    public String toString() {
        return id + (process == null ? "" : " (pid " + process.pid() + ")");
    }
}
