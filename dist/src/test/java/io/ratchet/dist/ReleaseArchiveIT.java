package io.ratchet.dist;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static io.ratchet.dist.ReleaseProcesses.bindable;
import static io.ratchet.dist.ReleaseProcesses.concat;
import static io.ratchet.dist.ReleaseProcesses.readyNodes;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.node.FreePorts;
import io.ratchet.node.HostPeers;
import io.ratchet.node.ProcessRun;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The release archive as a user runs it. It is unpacked into a directory of its own; three nodes start
 * through {@code bin/ratchet-node} on 127.0.0.11, .12 and .13, all on the same ports as three machines'
 * nodes would be, with TLS, each with a configuration made from the archive's own {@code conf/ratchet.conf};
 * and {@code bin/ratchet} talks to them from another directory. Runs after packaging (failsafe), on the
 * archive {@code mvn package} made.
 */
class ReleaseArchiveIT {
    private static final String VERSION = System.getProperty("ratchet.version");
    private static final Path ARCHIVE = Path.of(System.getProperty("ratchet.archive"));
    private static final List<String> IDS = List.of("n1", "n2", "n3");
    /** Three machines' addresses: on Linux every 127.x address is the machine's own. */
    private static final List<String> HOSTS = List.of("127.0.0.11", "127.0.0.12", "127.0.0.13");

    @TempDir
    static Path unpacked;
    /** The unpacked release, {@code ratchet-VERSION/}: what a user has in /opt/ratchet. */
    private static Path home;

    @TempDir
    Path dir;
    @BeforeAll
    static void unpack() throws Exception {
        home = ReleaseProcesses.unpack(ARCHIVE, unpacked, VERSION);
    }

    /** Every process a test started, stopped after it whatever happened. */
    private ReleaseProcesses processes;

    @BeforeEach
    void processes() {
        processes = new ReleaseProcesses(dir);
    }

    @AfterEach
    void stopEveryProcess() throws InterruptedException {
        processes.close();
    }

    @Test
    void threeMachinesNodesServeTheCommandLineAndANodeKilledAndStartedAgainServesWhatItMissed() throws Exception {
        assumeTrue(bindable(HOSTS.get(0)), HOSTS.get(0) + " cannot be bound here (on Linux every 127.x address is local)");
        int port = FreePorts.next();
        int httpPort = FreePorts.next();
        Map<String, String> addresses = HostPeers.of(IDS, HOSTS, port).addresses();
        String peers = HostPeers.of(IDS, HOSTS, port).line();
        Path etc = Files.createDirectories(dir.resolve("etc"));
        assertEquals(0, processes.run(List.of(home.resolve("bin/ratchet-certs").toString(), "ca", etc.toString(), "Release CA"),
                dir, Map.of()).code());
        for (int i = 0; i < IDS.size(); i++) {
            String id = IDS.get(i);
            ProcessRun issued = processes.run(List.of(home.resolve("bin/ratchet-certs").toString(), "node", etc.toString(), id, HOSTS.get(i)),
                    dir, Map.of());
            assertEquals(0, issued.code(), issued.toString());
            Files.writeString(conf(id), nodeConfiguration(id, peers, httpPort, etc));
        }
        Map<String, Process> nodes = new HashMap<>();
        for (String id : IDS) {
            nodes.put(id, startNode(id));
        }

        // A conditional delete of a key that never exists is a write through the log that changes nothing:
        // exit 1 (condition failed) says a leader committed it.
        await("a write committed").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                .until(() -> ratchet("--conf", conf("n1").toString(), "--timeout", "5s", "delete", "release/probe",
                        "--index", "1").code() == 1);
        ProcessRun put = ratchet("--conf", conf("n1").toString(), "put", "release/greeting", "\"hello\"", "--index", "0", "--json");
        assertEquals(0, put.code(), put.toString());
        long index = put.json().path("index").asLong();
        assertTrue(put.json().path("successful").asBoolean() && index > 0, put.toString());
        // Named by addresses and a CA instead of a node's configuration: the same item at the same index.
        ProcessRun get = ratchet("--peers", peers, "--ca", etc.resolve("ca.pem").toString(), "get", "release/greeting", "--json");
        assertEquals(0, get.code(), get.toString());
        assertEquals("hello", get.json().path("value").asText(), get.toString());
        assertEquals(index, get.json().path("index").asLong(), get.toString());

        JsonNode status = await("every node ready").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500))
                .until(() -> ratchet("--conf", conf("n2").toString(), "status", "--json"),
                        r -> r.code() == 0 && readyNodes(r.json()) == IDS.size())
                .json();
        ProcessRun shown = ratchet("--conf", conf("n3").toString(), "status");
        assertEquals(0, shown.code(), shown.toString());
        for (String id : IDS) {
            assertTrue(shown.out().contains(id + " ") && shown.out().contains(addresses.get(id)), shown.toString());
            String said = Files.readString(dir.resolve(id + ".out"));
            assertTrue(said.contains("ratchet node " + id + " serving"), said);
            assertFalse(said.contains("SLF4J"), "the node names its logging provider, though lib/ holds two: " + said);
        }
        assertFalse(shown.err().contains("SLF4J"), "so does the command line: " + shown);
        assertTrue(shown.out().contains("\nrelease: " + VERSION + "\n"), "every node runs this release: " + shown);

        // The leader's machine dies (kill -9); the two others go on, and take a write meanwhile.
        String leader = status.path("leader").asText();
        Process killed = nodes.get(leader);
        killed.destroyForcibly();
        assertTrue(killed.waitFor(30, TimeUnit.SECONDS));
        assertEquals(137, killed.exitValue(), "the JVM itself got the SIGKILL (128 + 9): the launcher exec'd it");
        String survivor = IDS.stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
        ProcessRun whileDown = ratchet("--conf", conf(survivor).toString(), "put", "release/while-down", "\"yes\"", "--index", "0",
                "--json");
        assertEquals(0, whileDown.code(), whileDown.toString());

        // Started again the same way, it recovers from its disk, catches up, and serves both from its own state.
        nodes.put(leader, startNode(leader));
        List<String> fromItAlone = List.of("--peers", leader + "=" + addresses.get(leader), "--ca",
                etc.resolve("ca.pem").toString(), "--timeout", "5s");
        ProcessRun caughtUp = await("the restarted node serves the write it missed").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> ratchet(concat(fromItAlone, "get", "release/while-down", "--stale", "--json")), r -> r.code() == 0);
        assertEquals(addresses.get(leader), caughtUp.json().path("servedBy").asText(), caughtUp.toString());
        assertEquals("yes", caughtUp.json().path("value").asText(), caughtUp.toString());
        ProcessRun kept = ratchet(concat(fromItAlone, "get", "release/greeting", "--stale", "--json"));
        assertEquals(0, kept.code(), kept.toString());
        assertEquals(index, kept.json().path("index").asLong(), kept.toString());

        String log = Files.readString(dir.resolve("logs").resolve(leader).resolve("ratchet-node.log"));
        assertTrue(log.contains("ratchet-node " + VERSION + " starting node " + leader), "logged to RATCHET_LOG_DIR: " + log);
        List<String> arguments = List.of(nodes.get(leader).info().arguments().orElseThrow());
        assertTrue(nodes.get(leader).info().command().orElseThrow().endsWith("/java"), "exec: the launcher's process is java");
        assertTrue(arguments.indexOf("-Xmx512m") >= 0 && arguments.indexOf("-Xmx512m") < arguments.indexOf("-Xmx256m"),
                "conf/jvm.options, then RATCHET_JVM_OPTS, which so wins: " + arguments);
        assertEquals(List.of("io.ratchet.node.NodeMain", "--conf", conf(leader).toString()),
                arguments.subList(arguments.size() - 3, arguments.size()), arguments.toString());

        // What systemd does to stop it: SIGTERM, and the unit counts 143 as a clean stop within TimeoutStopSec=30s.
        Process stopping = nodes.get(leader);
        assertTrue(arguments.stream().anyMatch(a -> a.startsWith("-XX:ArchiveClassesAtExit=" + classArchives(leader))),
                "no class-data archive yet, so this JVM writes one as it stops: " + arguments);
        stopping.destroy();
        assertTrue(stopping.waitFor(30, TimeUnit.SECONDS), "closed within the unit's TimeoutStopSec");
        assertEquals(143, stopping.exitValue());

        // That clean stop wrote the node's class-data archive; the next start checks it, keeps it and maps it.
        List<String> written = classArchiveFiles(leader);
        assertTrue(written.size() == 1 && written.get(0).matches("node-\\d+\\.jsa\\.\\d+\\.tmp"), written.toString());
        Process again = startNode(leader);
        nodes.put(leader, again);
        String archive = written.get(0).replaceAll("\\.\\d+\\.tmp$", "");
        await("the node started again").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                .until(() -> ratchet(concat(fromItAlone, "get", "release/greeting", "--stale", "--json")), r -> r.code() == 0);
        assertEquals(List.of(archive), classArchiveFiles(leader));
        assertTrue(List.of(again.info().arguments().orElseThrow())
                .contains("-XX:SharedArchiveFile=" + classArchives(leader).resolve(archive)), again.info().toString());
    }

    @Test
    void bothLaunchersReportTheReleaseTheyCameIn() throws Exception {
        ProcessRun cli = ratchet("--version");
        assertEquals(0, cli.code(), cli.toString());
        assertEquals("ratchet " + VERSION, cli.out().strip());
        ProcessRun node = processes.run(List.of(home.resolve("bin/ratchet-node").toString(), "--version"), dir, Map.of());
        assertEquals(0, node.code(), node.toString());
        assertEquals("ratchet-node " + VERSION, node.out().strip());
    }

    @Test
    void theLaunchersRefuseWhatTheyCannotRunSayingWhy() throws Exception {
        Path missing = dir.resolve("missing.conf");
        ProcessRun noConf = processes.run(List.of(home.resolve("bin/ratchet-node").toString(), "--conf", missing.toString()), dir, Map.of());
        assertEquals(2, noConf.code(), noConf.toString());
        assertTrue(noConf.err().contains("ratchet-node: no node configuration at " + missing), noConf.toString());
        ProcessRun noValue = processes.run(List.of(home.resolve("bin/ratchet-node").toString(), "--join", "--conf"), dir, Map.of());
        assertEquals(2, noValue.code(), noValue.toString());
        assertTrue(noValue.err().contains("--conf needs a FILE"), noValue.toString());

        Path notJava = dir.resolve("not-a-jdk");
        ProcessRun badHome = processes.run(List.of(home.resolve("bin/ratchet").toString(), "status"), dir, Map.of("JAVA_HOME", notJava.toString()));
        assertEquals(1, badHome.code(), badHome.toString());
        assertTrue(badHome.err().contains("ratchet: JAVA_HOME is " + notJava + ", which has no bin/java"), badHome.toString());

        // A Java 11 installation: its release file says so, and its java is never run.
        ProcessRun old = processes.run(List.of(home.resolve("bin/ratchet-node").toString(), "--version"), dir,
                Map.of("JAVA_HOME", echoingJava("11.0.2").toString()));
        assertEquals(1, old.code(), old.toString());
        assertTrue(old.err().contains("is Java 11.0.2; Ratchet needs Java 17 or later"), old.toString());
        assertEquals("", old.out(), "its java did not run");

        // No JAVA_HOME and no java on the PATH: only what the launcher needs before it looks for java.
        Path tools = Files.createDirectories(dir.resolve("tools"));
        Files.copy(onPath("readlink"), tools.resolve("readlink"), StandardCopyOption.COPY_ATTRIBUTES);
        ProcessRun noJava = processes.run(List.of(onPath("bash").toString(), home.resolve("bin/ratchet").toString(), "status"), dir,
                Map.of("PATH", tools.toString(), "JAVA_HOME", ""));
        assertEquals(1, noJava.code(), noJava.toString());
        assertTrue(noJava.err().contains("ratchet: no java on PATH: install Java 17 or later"), noJava.toString());
    }

    @Test
    void theNodeLauncherTakesJvmOptionsLineByLineAddsTheDefaultHeapOnlyWhenNoneIsSetAndPassesItsArgumentsOn()
            throws Exception {
        // A copy of the release whose java prints the command line it was given, one argument a line.
        Path release = Files.createDirectories(dir.resolve("release"));
        for (String part : List.of("bin", "conf")) {
            try (Stream<Path> files = Files.walk(home.resolve(part))) {
                for (Path file : files.toList()) {
                    Files.copy(file, release.resolve(home.relativize(file).toString()), StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
        release = release.toRealPath();
        Files.writeString(release.resolve("conf/jvm.options"),
                "# no heap here\n\n   -XX:+UseG1GC  \n-Dratchet.note=two words\n#-Xmx9g\n-XX:+ExitOnOutOfMemoryError");
        Path links = Files.createDirectories(dir.resolve("links"));
        Files.createSymbolicLink(links.resolve("ratchet-node"), release.resolve("bin/ratchet-node"));
        Map<String, String> java = Map.of("JAVA_HOME", echoingJava("17.0.9").toString());

        ProcessRun defaults = processes.run(List.of(links.resolve("ratchet-node").toString(), "--join"), dir, java);
        assertEquals(0, defaults.code(), defaults.toString());
        assertEquals(List.of("-Dslf4j.provider=ch.qos.logback.classic.spi.LogbackServiceProvider",
                "-Dslf4j.internal.verbosity=WARN", "-Dlogback.configurationFile=" + release.resolve("conf/logback.xml"),
                "-Dratchet.log.dir=" + release.resolve("logs"), "-Xms256m", "-Xmx512m", "-XX:+UseG1GC",
                "-Dratchet.note=two words", "-XX:+ExitOnOutOfMemoryError", "-cp", release.resolve("lib") + "/*",
                "io.ratchet.node.NodeMain", "--conf", release.resolve("conf/ratchet.conf").toString(), "--join"),
                defaults.out().lines().toList(), "RATCHET_HOME found through the link: " + defaults);

        Path elsewhere = Files.writeString(dir.resolve("elsewhere.conf"), "id=n1\n");
        Map<String, String> environment = new HashMap<>(java);
        environment.put("RATCHET_JVM_OPTS", "-Xmx1g -Dratchet.log.level=DEBUG");
        environment.put("RATCHET_CONF", elsewhere.toString());
        List<String> given = processes.run(List.of(release.resolve("bin/ratchet-node").toString()), dir, environment).out().lines().toList();
        assertFalse(given.contains("-Xmx512m") || given.contains("-Xms256m"), "the heap is RATCHET_JVM_OPTS': " + given);
        assertEquals(List.of("-XX:+ExitOnOutOfMemoryError", "-Xmx1g", "-Dratchet.log.level=DEBUG", "-cp"),
                given.subList(given.indexOf("-cp") - 3, given.indexOf("-cp") + 1), "after the file's: " + given);
        assertEquals(List.of("--conf", elsewhere.toString()), given.subList(given.size() - 2, given.size()), given.toString());
    }

    @Test
    void libHoldsTheModulesThinJarsAndEachRuntimeDependencyOnce() throws IOException {
        List<String> jars;
        try (Stream<Path> files = Files.list(home.resolve("lib"))) {
            jars = files.map(p -> p.getFileName().toString()).sorted().toList();
        }
        assertTrue(jars.stream().allMatch(j -> j.endsWith(".jar")), jars.toString());
        Map<String, List<String>> byArtifact = jars.stream().collect(Collectors.groupingBy(
                j -> j.replaceFirst("-\\d[^-]*(-SNAPSHOT)?\\.jar$", "")));
        byArtifact.forEach((artifact, versions) -> assertEquals(1, versions.size(), "one version of " + artifact + ": " + versions));
        for (String module : List.of("ratchet-node", "ratchet-cli", "ratchet-client", "ratchet-statemachine", "ratchet-protocol")) {
            Path jar = home.resolve("lib").resolve(module + "-" + VERSION + ".jar");
            assertTrue(Files.isRegularFile(jar), module + " in lib: " + jars);
            assertTrue(Files.size(jar) < 5L << 20, "the thin jar, not the shaded one: " + jar);
        }
        for (String needed : List.of("rocksdbjni", "logback-classic", "slf4j-simple", "picocli", "jetty-server")) {
            assertTrue(byArtifact.containsKey(needed), needed + " in lib: " + jars);
        }
        for (String testOnly : List.of("junit-jupiter-api", "awaitility", "selenium-java")) {
            assertFalse(byArtifact.containsKey(testOnly), testOnly + " is for tests only: " + jars);
        }
        for (String launcher : List.of("bin/ratchet", "bin/ratchet-node", "bin/ratchet-certs")) {
            assertTrue(Files.isExecutable(home.resolve(launcher)), launcher);
        }
    }

    /** A JDK of {@code version} by its release file, whose java prints its arguments, one a line. */
    private Path echoingJava(String version) throws IOException {
        Path jdk = Files.createDirectories(dir.resolve("jdk-" + version).resolve("bin")).getParent();
        Path java = Files.writeString(jdk.resolve("bin/java"), "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n");
        assertTrue(java.toFile().setExecutable(true));
        Files.writeString(jdk.resolve("release"), "IMPLEMENTOR=\"Test\"\nJAVA_VERSION=\"" + version + "\"\n");
        return jdk;
    }

    /** The archive's conf/ratchet.conf made this node's: every line the test changes must be there. */
    private String nodeConfiguration(String id, String peers, int httpPort, Path etc) throws IOException {
        String text = Files.readString(home.resolve("conf/ratchet.conf"));
        Map<String, String> lines = new LinkedHashMap<>();
        lines.put("id=n1", "id=" + id);
        lines.put("peers=n1=10.0.0.1:7101,n2=10.0.0.2:7101,n3=10.0.0.3:7101", "peers=" + peers);
        lines.put("storage=/var/lib/ratchet", "storage=" + dir.resolve("data").resolve(id));
        lines.put("http.port=8101", "http.port=" + httpPort);
        lines.put("#tls.cert=/etc/ratchet/n1.pem", "tls.cert=" + etc.resolve(id + ".pem"));
        lines.put("#tls.key=/etc/ratchet/n1-key.pem", "tls.key=" + etc.resolve(id + "-key.pem"));
        lines.put("#tls.ca=/etc/ratchet/ca.pem", "tls.ca=" + etc.resolve("ca.pem"));
        for (Map.Entry<String, String> line : lines.entrySet()) {
            assertTrue(text.contains("\n" + line.getKey() + "\n"), "conf/ratchet.conf has the line " + line.getKey());
            text = text.replace("\n" + line.getKey() + "\n", "\n" + line.getValue() + "\n");
        }
        return text;
    }

    private Path conf(String id) {
        return dir.resolve("etc").resolve(id + ".conf");
    }

    /**
     * Starts node {@code id} as the systemd unit does: from its data directory's parent, its log directory and
     * its class-data archive directory its own.
     */
    private Process startNode(String id) throws IOException {
        return processes.startNode(home, conf(id), dir.resolve("data"), dir.resolve(id + ".out"), dir.resolve("logs").resolve(id),
                Map.of("RATCHET_CDS_DIR", classArchives(id).toString()));
    }

    private Path classArchives(String id) {
        return dir.resolve("cds").resolve(id);
    }

    private List<String> classArchiveFiles(String id) throws IOException {
        try (Stream<Path> files = Files.list(classArchives(id))) {
            return files.map(f -> f.getFileName().toString()).sorted().toList();
        }
    }

    /** {@code bin/ratchet ARGS}, run from a directory of its own (not the release's, not the configuration's). */
    private ProcessRun ratchet(String... args) throws IOException, InterruptedException {
        return ratchet(List.of(args));
    }

    private ProcessRun ratchet(List<String> args) throws IOException, InterruptedException {
        return processes.run(concat(List.of(home.resolve("bin/ratchet").toString()), args.toArray(String[]::new)),
                Files.createDirectories(dir.resolve("elsewhere")), Map.of());
    }

    private static Path onPath(String program) {
        Optional<Path> found = Stream.of(System.getenv("PATH").split(File.pathSeparator))
                .map(d -> Path.of(d, program)).filter(Files::isExecutable).findFirst();
        return found.orElseThrow(() -> new UncheckedIOException(new IOException(program + " is not on the PATH")));
    }
}
