package io.ratchet.chaos.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One Ratchet node: a separate JVM running {@code ratchet-node.jar --conf FILE}, which the harness can
 * kill, pause, resume and start again. Its output goes to a log file, its pid to a pid file (so that a
 * launcher script can clean up after a harness that was itself killed). Thread-safe.
 */
public final class NodeProcess {
    private final String id;
    private final List<String> command;
    private final Path workDir;
    private final Path log;
    private final Path pidFile;
    private Process process;
    private boolean stopRequested;
    private boolean paused;

    /**
     * @param command the full command line, e.g. {@code [ip, netns, exec, NS, java, ..., -jar, ratchet-node.jar, --conf, FILE]}
     */
    NodeProcess(String id, List<String> command, Path workDir, Path log, Path pidFile) {
        this.id = id;
        this.command = List.copyOf(command);
        this.workDir = workDir;
        this.log = log;
        this.pidFile = pidFile;
    }

    public String id() {
        return id;
    }

    /**
     * Starts the JVM unless it runs already. Its data survives from any earlier run of it. Once the
     * cluster has asked it to stop, it never starts again: a nemesis still healing after the run was
     * torn down must not leave a node behind.
     */
    public synchronized void start() throws IOException {
        if (alive() || stopRequested) {
            return;
        }
        process = new ProcessBuilder(command).directory(workDir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        process.getOutputStream().close();
        paused = false;
        Files.writeString(pidFile, process.pid() + "\n");
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
