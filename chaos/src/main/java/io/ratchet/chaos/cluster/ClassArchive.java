package io.ratchet.chaos.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.CRC32;

/**
 * The class-data archive the nodes of a run map, as the release's {@code bin/ratchet-node} keeps one in
 * {@code RATCHET_CDS_DIR}: a restart under load then costs what it costs a released node (a third less CPU
 * than loading each class from the jar; docs/DEPLOYING.md). It lives beside the node jar ({@code cds/}),
 * keyed by the jar, the java and the nodes' JVM options. Until there is one, each node's JVM writes one as
 * it stops cleanly (at the end of a run), and {@link #keep} keeps the first that Java maps.
 * {@code RATCHET_NODE_CDS=0} leaves it out, as it does for {@code scripts/cluster}.
 */
final class ClassArchive {
    private static final List<String> QUIET = List.of("-Xlog:cds=off", "-Xlog:cds+dynamic=off");

    private final Path jar;
    private final List<String> jvmOptions;
    private final Path java;
    /** Null when left out. */
    private final Path archive;

    private ClassArchive(Path jar, List<String> jvmOptions, Path java, Path archive) {
        this.jar = jar;
        this.jvmOptions = jvmOptions;
        this.java = java;
        this.archive = archive;
    }

    static ClassArchive of(Path jar, List<String> jvmOptions, Path java) throws IOException {
        if ("0".equals(System.getenv("RATCHET_NODE_CDS"))) {
            return new ClassArchive(jar, jvmOptions, java, null);
        }
        CRC32 key = new CRC32();
        String identity = jar.toAbsolutePath() + " " + Files.size(jar) + " " + Files.getLastModifiedTime(jar).toMillis()
                + "\n" + java + "\n" + String.join("\n", jvmOptions);
        key.update(identity.getBytes(StandardCharsets.UTF_8));
        Path dir = Files.createDirectories(jar.toAbsolutePath().getParent().resolve("cds"));
        return new ClassArchive(jar, jvmOptions, java, dir.resolve(String.format(Locale.ROOT, "chaos-%08x.jsa", key.getValue())));
    }

    /** The options that map the archive, or, while there is none, that have node {@code id}'s JVM write one at its exit. */
    List<String> options(String id) {
        if (archive == null) {
            return List.of();
        }
        List<String> options = new ArrayList<>();
        if (Files.isRegularFile(archive)) {
            options.addAll(List.of("-Xshare:auto", "-XX:SharedArchiveFile=" + archive));
        } else {
            options.add("-XX:ArchiveClassesAtExit=" + archive + "." + id + "." + ProcessHandle.current().pid() + ".tmp");
        }
        options.addAll(QUIET);
        return options;
    }

    /**
     * After the nodes stopped: keeps the first archive they wrote that Java maps (one cut short by a kill is
     * not), deletes the others, and with a new one kept, the archives of other jars and options.
     */
    void keep() {
        if (archive == null) {
            return;
        }
        String prefix = archive.getFileName() + ".";
        try (Stream<Path> files = Files.list(archive.getParent())) {
            for (Path written : files.filter(f -> f.getFileName().toString().startsWith(prefix)
                    && f.getFileName().toString().endsWith(".tmp")).toList()) {
                if (!Files.exists(archive) && maps(written)) {
                    Files.move(written, archive, StandardCopyOption.ATOMIC_MOVE);
                    dropOthers();
                } else {
                    Files.deleteIfExists(written);
                }
            }
        } catch (IOException e) {
            System.err.println("chaos: keeping the nodes' class-data archive: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void dropOthers() throws IOException {
        try (Stream<Path> files = Files.list(archive.getParent())) {
            for (Path other : files.filter(f -> f.getFileName().toString().matches("chaos-\\p{XDigit}{8}\\.jsa")
                    && !f.equals(archive)).toList()) {
                Files.deleteIfExists(other);
            }
        }
    }

    private boolean maps(Path written) throws IOException, InterruptedException {
        List<String> check = new ArrayList<>(List.of(java.toString()));
        check.addAll(jvmOptions);
        check.addAll(List.of("-XX:ErrorFile=/dev/null", "-XX:-CreateCoredumpOnCrash", "-Xshare:on",
                "-XX:SharedArchiveFile=" + written));
        check.addAll(QUIET);
        check.addAll(List.of("-cp", jar.toAbsolutePath().toString(), "-version"));
        Process process = new ProcessBuilder(check).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            return false;
        }
        return process.exitValue() == 0;
    }
}
