package io.ratchet.chaos.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Faults inside a node's own process, which a signal or a route cannot make: a step of its wall clock, and
 * a disk that stalls its fsyncs or fails with I/O errors. Both come from {@code nodefaults.c} (beside this
 * class), compiled here with the machine's C compiler and preloaded into each node's JVM. It reads a
 * 32-byte control file per node ({@code nX.faults}), which the harness rewrites in place while the node
 * runs: the disk's state (works, stalls each sync some milliseconds, fails with EIO; only files under the
 * node's storage) and the wall clock's step in seconds (the monotonic clock is left alone, as a real step
 * of the wall clock leaves it).
 *
 * <p>Where the library cannot be built, {@link #unavailable()} says why, and the nemeses that need it are
 * skipped with that reason.
 */
public final class NodeFaults {
    private static final int CONTROL_BYTES = 32;
    private static final int CLOCK_AT = 16;

    private final Path dir;
    private final Path library;
    private final String missing;

    private NodeFaults(Path dir, Path library, String missing) {
        this.dir = dir;
        this.library = library;
        this.missing = missing;
    }

    /** Compiles the library into {@code dir}. */
    public static NodeFaults prepare(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path source = dir.resolve("nodefaults.c");
        try (InputStream in = NodeFaults.class.getResourceAsStream("nodefaults.c")) {
            Files.write(source, in.readAllBytes());
        }
        Path library = dir.resolve("libratchet-nodefaults.so");
        String failed = Shell.quietly("cc", "-shared", "-fPIC", "-O2", "-o", library.toString(), source.toString(), "-ldl");
        return failed == null ? new NodeFaults(dir, library, null)
                : new NodeFaults(dir, null, "cannot compile nodefaults.c: " + failed);
    }

    /** No fault library: every node runs as it is. */
    public static NodeFaults none() {
        return new NodeFaults(null, null, "not asked for");
    }

    /** Why clock and disk faults cannot be made here; empty when they can. */
    public Optional<String> unavailable() {
        return Optional.ofNullable(missing);
    }

    /**
     * The environment node {@code id} runs with: the library to preload and its control file, which this
     * writes (no step, no fault) unless it is there already: a restarted node keeps the faults in force.
     */
    Map<String, String> environment(String id, Path storage) throws IOException {
        if (library == null) {
            return Map.of();
        }
        Path control = control(id);
        if (!Files.exists(control)) {
            write(control, 0, "0" + digits(0) + "+" + digits(0));
        }
        Map<String, String> env = new LinkedHashMap<>();
        env.put("LD_PRELOAD", library.toString());
        env.put("RATCHET_FAULTS_CONTROL", control.toString());
        env.put("RATCHET_FAULTS_DIR", storage.toAbsolutePath().toString());
        return env;
    }

    /** Sets node {@code id}'s wall clock {@code seconds} away from the real one (0: back to it). */
    public void stepClock(String id, long seconds) throws IOException {
        write(control(id), CLOCK_AT, (seconds < 0 ? "-" : "+") + digits(Math.abs(seconds)));
    }

    /** Makes each fsync of node {@code id}'s storage take {@code millis} longer. */
    public void stallSyncs(String id, long millis) throws IOException {
        disk(id, 'S', millis);
    }

    /** Makes node {@code id}'s storage fail every write and sync with EIO. */
    public void failDisk(String id) throws IOException {
        disk(id, 'E', 0);
    }

    /** Node {@code id}'s disk works again. */
    public void healDisk(String id) throws IOException {
        disk(id, '0', 0);
    }

    private void disk(String id, char mode, long millis) throws IOException {
        Path control = control(id);
        // The length first, the mode last: a node never reads a stall with the last stall's length.
        write(control, 1, digits(millis));
        write(control, 0, Character.toString(mode));
    }

    private Path control(String id) {
        if (library == null) {
            throw new IllegalStateException("no clock or disk faults here: " + missing);
        }
        return dir.resolve(id + ".faults");
    }

    private static String digits(long n) {
        String text = String.format(Locale.ROOT, "%015d", n);
        if (text.length() != CLOCK_AT - 1) {
            throw new IllegalArgumentException("out of range: " + n);
        }
        return text;
    }

    /**
     * Rewrites part of the control record in place, never making the file shorter: the node has it mapped,
     * and reading a mapping past a file's end kills the process.
     */
    private static void write(Path file, int at, String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
        if (at + bytes.length > CONTROL_BYTES) {
            throw new IllegalArgumentException("past the control record: " + text);
        }
        try (RandomAccessFile out = new RandomAccessFile(file.toFile(), "rw")) {
            out.seek(at);
            out.write(bytes);
        }
    }
}
