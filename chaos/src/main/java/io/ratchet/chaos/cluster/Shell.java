package io.ratchet.chaos.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** Runs a short system command ({@code ip}, {@code kill}) and returns its output, or says why it failed. */
final class Shell {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private Shell() {
    }

    /** The command's output (standard output and error together); throws with it when the command exits non-zero. */
    static String run(String... command) throws IOException {
        String line = String.join(" ", command);
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IOException("cannot run '" + command[0] + "': " + e.getMessage(), e);
        }
        p.getOutputStream().close();
        // Read before waiting, so that a chatty command never blocks on a full pipe.
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!p.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(line + " did not finish in " + TIMEOUT.toSeconds() + " s");
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running " + line, e);
        }
        if (p.exitValue() != 0) {
            throw new IOException(line + " failed (exit " + p.exitValue() + ")" + (out.isBlank() ? "" : ": " + out.trim()));
        }
        return out;
    }

    /** As {@link #run}, for clean-up: a failure is returned as text (null on success), never thrown. */
    static String quietly(String... command) {
        try {
            run(command);
            return null;
        } catch (IOException e) {
            return e.getMessage();
        }
    }
}
