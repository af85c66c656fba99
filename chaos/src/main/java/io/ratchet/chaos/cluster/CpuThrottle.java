package io.ratchet.chaos.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A slow machine for one node: its process put in a control group of its own whose CPU quota the harness
 * sets (cgroup v1's {@code cpu} controller, as this machine mounts it, or v2's {@code cpu.max}). A node at
 * 10% of a core still answers, late: a VM starved by its neighbours, not a stopped one. Needs root;
 * {@link #unavailableReason()} says why not where it cannot.
 */
public final class CpuThrottle implements AutoCloseable {
    private static final Path V1 = Path.of("/sys/fs/cgroup/cpu");
    private static final Path V2 = Path.of("/sys/fs/cgroup");
    private static final long PERIOD_US = 100_000;

    private final Path root;
    private final boolean v2;
    private final String tag = Integer.toHexString(ThreadLocalRandom.current().nextInt(0x1000, 0x10000));

    private CpuThrottle(Path root, boolean v2) {
        this.root = root;
        this.v2 = v2;
    }

    /** The machine's CPU controller, if the harness may use it. */
    public static Optional<CpuThrottle> open() {
        if (Files.isWritable(V1.resolve("cgroup.procs")) && Files.exists(V1.resolve("cpu.cfs_quota_us"))) {
            return Optional.of(new CpuThrottle(V1, false));
        }
        try {
            if (Files.isWritable(V2.resolve("cgroup.procs")) && Files.readString(V2.resolve("cgroup.controllers")).contains("cpu")) {
                return Optional.of(new CpuThrottle(V2, true));
            }
        } catch (IOException e) {
            // No readable v2 hierarchy either.
        }
        return Optional.empty();
    }

    /** Why nodes cannot be slowed here; empty when they can. */
    public static Optional<String> unavailableReason() {
        return open().isPresent() ? Optional.empty()
                : Optional.of("no writable CPU controller (cgroup v1 cpu or v2 cpu.max); needs root");
    }

    /** Gives process {@code pid} (node {@code id}) {@code percent} of one core until {@link #release}. */
    public void limit(String id, long pid, int percent) throws IOException {
        Path group = group(id);
        Files.createDirectories(group);
        long quota = PERIOD_US * percent / 100;
        if (v2) {
            Files.writeString(group.resolve("cpu.max"), quota + " " + PERIOD_US);
        } else {
            Files.writeString(group.resolve("cpu.cfs_period_us"), Long.toString(PERIOD_US));
            Files.writeString(group.resolve("cpu.cfs_quota_us"), Long.toString(quota));
        }
        Files.writeString(group.resolve("cgroup.procs"), Long.toString(pid));
    }

    /** Lifts node {@code id}'s limit (its process stays in the group, unlimited; a new process is in none). */
    public void release(String id) throws IOException {
        Path group = group(id);
        if (!Files.isDirectory(group)) {
            return;
        }
        if (v2) {
            Files.writeString(group.resolve("cpu.max"), "max " + PERIOD_US);
        } else {
            Files.writeString(group.resolve("cpu.cfs_quota_us"), "-1");
        }
    }

    private Path group(String id) {
        return root.resolve("ratchet-chaos-" + tag + "-" + id);
    }

    /** Moves every process left in the run's groups back to the root group and removes the groups. */
    @Override
    public void close() {
        try (var groups = Files.list(root)) {
            for (Path group : groups.filter(p -> p.getFileName().toString().startsWith("ratchet-chaos-" + tag + "-")).toList()) {
                try {
                    for (String pid : Files.readAllLines(group.resolve("cgroup.procs"))) {
                        if (!pid.isBlank()) {
                            Files.writeString(root.resolve("cgroup.procs"), pid.trim());
                        }
                    }
                    Files.delete(group);
                } catch (IOException e) {
                    System.err.println("chaos: removing the control group " + group + ": " + e.getMessage());
                }
            }
        } catch (IOException e) {
            System.err.println("chaos: listing the control groups in " + root + ": " + e.getMessage());
        }
    }
}
