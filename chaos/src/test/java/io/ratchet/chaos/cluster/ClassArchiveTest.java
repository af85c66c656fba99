package io.ratchet.chaos.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClassArchiveTest {
    private static final Path JAVA = Path.of(System.getProperty("java.home"), "bin", "java");

    @Test
    void nodesWriteAnArchiveUntilThereIsOneAndAnArchiveJavaCannotMapIsNotKept(@TempDir Path dir) throws Exception {
        Path jar = Files.writeString(dir.resolve("ratchet-node.jar"), "not a jar");
        ClassArchive archive = ClassArchive.of(jar, List.of("-Xmx64m"), JAVA);

        String exit = archive.options("n1").get(0);
        assertTrue(exit.startsWith("-XX:ArchiveClassesAtExit=" + dir.resolve("cds")) && exit.endsWith(".n1." + ProcessHandle.current().pid() + ".tmp"), exit);
        Path written = Path.of(exit.substring(exit.indexOf('=') + 1));
        Files.writeString(written, "cut short by a kill");
        archive.keep();
        assertFalse(Files.exists(written), "Java cannot map it: dropped");
        assertTrue(archive.options("n1").get(0).startsWith("-XX:ArchiveClassesAtExit="), "so the next run writes one again");

        Path kept = Path.of(exit.substring(exit.indexOf('=') + 1, exit.indexOf(".n1.")));
        Files.writeString(kept, "kept by an earlier run");
        assertEquals(List.of("-Xshare:auto", "-XX:SharedArchiveFile=" + kept), archive.options("n2").subList(0, 2));
    }

    @Test
    void anotherJarOrOtherOptionsHaveAnArchiveOfTheirOwn(@TempDir Path dir) throws Exception {
        Path jar = Files.writeString(dir.resolve("ratchet-node.jar"), "one");
        String first = ClassArchive.of(jar, List.of("-Xmx64m"), JAVA).options("n1").get(0);
        String otherOptions = ClassArchive.of(jar, List.of("-Xmx128m"), JAVA).options("n1").get(0);
        Files.writeString(jar, "a rebuilt jar");
        String rebuilt = ClassArchive.of(jar, List.of("-Xmx64m"), JAVA).options("n1").get(0);
        assertNotEquals(first, otherOptions);
        assertNotEquals(first, rebuilt);
    }
}
