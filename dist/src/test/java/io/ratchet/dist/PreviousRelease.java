package io.ratchet.dist;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The release archive of an earlier commit of this repository, built as its own {@code mvn package} builds
 * it: the commit's tree is taken with {@code git archive} (never the working tree), and built with the Maven
 * and the local repository of the build that runs the test. Kept under {@code cache/COMMIT}, so a second
 * run of the test on the same commit does not build it again.
 */
final class PreviousRelease {
    private static final Pattern ARCHIVE_NAME = Pattern.compile("ratchet-(.+)\\.tar\\.gz");

    private PreviousRelease() {
    }

    /** The archive of {@code commit}, built now unless {@code cache} holds it. */
    static Path archive(String commit, Path repository, Path cache) throws IOException, InterruptedException {
        Path source = cache.resolve(commit);
        Path built = find(source.resolve("dist/target"));
        if (built != null) {
            return built;
        }
        Path log = Files.createDirectories(cache).resolve(commit + ".log");
        Run exists = run(List.of("git", "-C", repository.toString(), "cat-file", "-e", commit + "^{commit}"), cache, log, 1);
        assertTrue(exists.ok(), "the previous release's commit " + commit + " is not in this clone of the repository"
                + " (a shallow clone? 'git fetch --unshallow' brings the history): " + exists.said());
        Files.createDirectories(source);
        Path tree = cache.resolve(commit + ".tar");
        Run taken = run(List.of("git", "-C", repository.toString(), "archive", "--format=tar", "--output=" + tree, commit),
                cache, log, 2);
        assertTrue(taken.ok(), "git archive " + commit + ": " + taken.said());
        Run unpacked = run(List.of("tar", "xf", tree.toString(), "-C", source.toString()), cache, log, 2);
        assertTrue(unpacked.ok(), "tar: " + unpacked.said());
        List<String> maven = new ArrayList<>(List.of(System.getProperty("ratchet.maven", "mvn"), "-B", "-q", "package",
                "-DskipTests", "-pl", "dist", "-am", "-Dmaven.repo.local=" + System.getProperty("ratchet.maven.repository")));
        Run build = run(maven, source, log, 15);
        assertTrue(build.ok(), "building the previous release (" + commit + ") failed: " + build.said());
        built = find(source.resolve("dist/target"));
        assertTrue(built != null, "the previous release's build made no archive in " + source.resolve("dist/target"));
        return built;
    }

    /** The version an archive's name carries. */
    static String version(Path archive) {
        Matcher m = ARCHIVE_NAME.matcher(archive.getFileName().toString());
        assertTrue(m.matches(), archive.toString());
        return m.group(1);
    }

    private static Path find(Path target) throws IOException {
        if (!Files.isDirectory(target)) {
            return null;
        }
        try (Stream<Path> files = Files.list(target)) {
            return files.filter(f -> ARCHIVE_NAME.matcher(f.getFileName().toString()).matches()).findFirst().orElse(null);
        }
    }

    private record Run(boolean ok, String said) {
    }

    /** Runs a command, its output in {@code log}; what it said is the log's last lines. */
    private static Run run(List<String> command, Path cwd, Path log, int minutes) throws IOException, InterruptedException {
        Files.writeString(log, "$ " + String.join(" ", command) + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        ProcessBuilder builder = new ProcessBuilder(command).directory(cwd.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        ReleaseProcesses.clean(builder.environment());
        Process p = builder.start();
        boolean ended = p.waitFor(minutes, TimeUnit.MINUTES);
        if (!ended) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        List<String> lines = Files.readAllLines(log);
        String tail = String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        return new Run(ended && p.exitValue() == 0, (ended ? "" : "(did not end in " + minutes + " min) ") + tail);
    }
}
