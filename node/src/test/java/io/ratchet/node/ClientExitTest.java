package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A program that closes its client and returns from main exits at once, leaving no thread behind. */
class ClientExitTest {
    @TempDir
    Path dir;

    @Test
    void aProgramThatClosesItsClientAndReturnsFromMainExitsAtOnce() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir.resolve("cluster"))) {
            Path out = dir.resolve("out.txt");
            Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), ClosingClientMain.class.getName(), cluster.peers())
                    .redirectErrorStream(true)
                    .redirectOutput(out.toFile())
                    .start();
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the program did not end");
            long ended = System.currentTimeMillis();
            List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
            assertEquals(0, child.exitValue(), String.join("\n", lines));
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("wrote at ")), String.join("\n", lines));
            assertFalse(lines.stream().anyMatch(l -> l.startsWith("leftover thread")), String.join("\n", lines));
            long returned = lines.stream().filter(l -> l.startsWith("returning at ")).findFirst()
                    .map(l -> Long.parseLong(l.substring("returning at ".length()))).orElseThrow();
            // The JVM's own shutdown takes a moment; waiting for a thread would take seconds.
            assertTrue(ended - returned < 2_000, "the JVM took " + (ended - returned) + " ms to exit after main returned");
        }
    }
}
