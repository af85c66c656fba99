package io.ratchet.image;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ratchet.node.FreePorts;
import io.ratchet.node.HostPeers;
import io.ratchet.node.ProcessRun;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The container image as a user runs it, without a container engine (none can run here). The image tar
 * {@code mvn package -Pimage} wrote is read as an engine reads it: manifest.json names the configuration and
 * the layers, and the layers are unpacked in order into one root file system. Each "container" is then what
 * an engine makes of that root and the image's configuration: its own mount, PID and host-name namespaces
 * ({@code unshare}); the root entered with {@code chroot} as the image's user; the image's entrypoint run
 * with the image's environment in its working directory, as PID 1; a /dev, /proc, /tmp and /etc/hosts of
 * its own; its volume (a copy of the image's /var/lib/ratchet with its owner, which is how an engine fills a
 * new named volume) and its /etc/ratchet (read-only) bind-mounted over the image's. {@code docker exec} is
 * {@code nsenter} into a node's namespaces and the same chroot. What this does not cover is the engine's
 * network: the three nodes share the host's, on 127.0.0.21, .22 and .23 with one port each, as three
 * containers with addresses of their own would. Needs root (CI runs as root).
 */
class ImageIT {
    private static final String VERSION = System.getProperty("ratchet.version");
    private static final Path IMAGE = Path.of(System.getProperty("ratchet.image"));
    private static final String USER = "10001:10001";
    private static final int UID = 10001;
    private static final String VOLUME = "/var/lib/ratchet";
    private static final List<String> IDS = List.of("n1", "n2", "n3");
    private static final List<String> HOSTS = List.of("127.0.0.21", "127.0.0.22", "127.0.0.23");
    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * One container's start, run by the host's sh inside the new namespaces: its /dev (a tmpfs with the
     * devices an engine gives), its files over the image's, its host name, then the image's root as its user.
     * Arguments: the root, the container's directory, the command (env ... ENTRYPOINT).
     */
    private static final String CONTAINER = """
            set -eu
            root="$1"; own="$2"; shift 2
            mount -t tmpfs -o mode=0755,nosuid tmpfs "$root/dev"
            for device in null zero full random urandom tty; do
              touch "$root/dev/$device"; mount --bind "/dev/$device" "$root/dev/$device"
            done
            ln -s /proc/self/fd "$root/dev/fd"
            mount --bind "$own/tmp" "$root/tmp"
            mount --bind -o ro "$own/hosts" "$root/etc/hosts"
            mount --bind -o ro "$own/etc" "$root/etc/ratchet"
            mount --bind "$own/volume" "$root/var/lib/ratchet"
            hostname "$(cat "$own/hostname")"
            exec chroot --userspec=%s "$root" "$@"
            """.formatted(USER);

    @TempDir
    static Path unpacked;
    private static Path rootfs;
    /** The image configuration's "config": user, entrypoint, environment, volumes, ports, labels. */
    private static JsonNode config;

    @TempDir
    Path dir;
    /** Every process a test started, stopped after it whatever happened. */
    private final List<Process> started = new ArrayList<>();

    /** A running container: its directory, and its process (unshare, whose child is the container). */
    record Container(String id, Path own, Process process) {
        /** The entrypoint's process as the host sees it: java, once the launcher has exec'd it. */
        ProcessHandle java() {
            return await("the launcher exec'd java").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                    .until(() -> process.descendants().filter(h -> h.info().command().orElse("").endsWith("/java"))
                            .findFirst().orElse(null), h -> h != null);
        }

        String output() throws IOException {
            return Files.readString(own.resolve("stdout"));
        }
    }

    @BeforeAll
    static void unpackTheImageAsAnEngineDoes() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")),
                "a container's namespaces, mounts and chroot need root (CI runs as root)");
        assertTrue(Files.isRegularFile(IMAGE), IMAGE + " was built by mvn package -Pimage");
        Path image = Files.createDirectories(unpacked.resolve("image"));
        command(List.of("tar", "xf", IMAGE.toString(), "-C", image.toString()));
        JsonNode manifest = JSON.readTree(image.resolve("manifest.json").toFile());
        assertEquals(1, manifest.size(), manifest.toString());
        assertEquals("ratchet:" + VERSION, manifest.get(0).path("RepoTags").path(0).asText(), "docker load's name: " + manifest);
        JsonNode configuration = JSON.readTree(image.resolve(manifest.get(0).path("Config").asText()).toFile());
        config = configuration.path("config");
        assertEquals("amd64", configuration.path("architecture").asText());
        assertEquals("linux", configuration.path("os").asText());

        rootfs = Files.createDirectories(unpacked.resolve("rootfs"));
        JsonNode layers = manifest.get(0).path("Layers");
        assertEquals(configuration.path("rootfs").path("diff_ids").size(), layers.size(), "a layer for each diff id");
        for (JsonNode layer : layers) {
            Path file = image.resolve(layer.asText());
            // An engine would apply whiteouts (.wh. files, deletions from lower layers); neither Jib nor
            // scripts/image-base writes one, and this test would not apply them: it says so if one comes.
            List<String> names = command(List.of("tar", "tzf", file.toString())).lines().toList();
            assertFalse(names.stream().anyMatch(n -> n.contains(".wh.")), "a whiteout in " + layer);
            command(List.of("tar", "xzf", file.toString(), "-C", rootfs.toString(), "--numeric-owner", "--same-permissions"));
        }
        // What an engine mounts over in every container (these are files of its own, not the image's).
        for (String mountPoint : List.of("etc/hosts", "etc/hostname", "etc/resolv.conf")) {
            if (!Files.exists(rootfs.resolve(mountPoint))) {
                Files.createFile(rootfs.resolve(mountPoint));
            }
        }
    }

    /** The root file system before JUnit deletes the rest: JUnit warns of each of its absolute links. */
    @AfterAll
    static void removeTheRootFileSystem() throws Exception {
        if (rootfs != null) {
            command(List.of("rm", "-rf", rootfs.toString()));
        }
    }

    @AfterEach
    void stopEveryProcess() throws InterruptedException {
        for (Process p : started) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        for (Process p : started) {
            p.waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void theImageRunsTheNodeAsAUserThatIsNotRootWithItsDataAsAVolume() throws Exception {
        assertEquals(USER, config.path("User").asText());
        assertEquals(List.of(VOLUME), names(config.path("Volumes")));
        assertEquals(VOLUME, config.path("WorkingDir").asText());
        assertEquals(List.of("/opt/ratchet/bin/ratchet-node", "--conf", "/etc/ratchet/ratchet.conf"), strings(config.path("Entrypoint")));
        assertTrue(config.path("Cmd").isMissingNode() || config.path("Cmd").isNull(), "no arguments unless given: " + config);
        assertEquals(List.of("7101/tcp", "8101/tcp"), names(config.path("ExposedPorts")).stream().sorted().toList());
        assertEquals(VERSION, config.path("Labels").path("org.opencontainers.image.version").asText());
        Map<String, String> environment = environment();
        assertEquals("/etc/ratchet/ratchet.conf", environment.get("RATCHET_CONF"), "docker exec NAME ratchet: the node's configuration");
        assertTrue(Files.isExecutable(inRoot(environment.get("JAVA_HOME")).resolve("bin/java")), "JAVA_HOME: " + environment);

        // The volume's directory belongs to the image's user, so a named volume mounted there does too.
        Path volume = inRoot(VOLUME);
        assertEquals(UID, Files.getAttribute(volume, "unix:uid", LinkOption.NOFOLLOW_LINKS));
        assertEquals(UID, Files.getAttribute(volume, "unix:gid", LinkOption.NOFOLLOW_LINKS));
        assertFalse(Files.getPosixFilePermissions(volume).contains(PosixFilePermission.OTHERS_READ), "the data is its user's");
        assertTrue(Files.readAllLines(inRoot("/etc/passwd")).contains(
                "ratchet:x:10001:10001:Ratchet node:/var/lib/ratchet:/usr/sbin/nologin"), "a name and a home for uid 10001");
        // The node's user can change nothing of the image but its volume: the release and its configuration
        // belong to root.
        for (String path : List.of("/opt/ratchet", "/opt/ratchet/lib", "/opt/ratchet/bin/ratchet-node", "/etc/ratchet/ratchet.conf",
                "/opt/ratchet/conf/logback.xml")) {
            assertEquals(0, Files.getAttribute(inRoot(path), "unix:uid"), path);
            Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(inRoot(path));
            assertFalse(permissions.contains(PosixFilePermission.OTHERS_WRITE) || permissions.contains(PosixFilePermission.GROUP_WRITE),
                    path + " " + permissions);
        }
        String conf = Files.readString(inRoot("/etc/ratchet/ratchet.conf"));
        assertTrue(conf.contains("\nstorage=" + VOLUME + "\n") && conf.contains(":7101,") && conf.contains("\nhttp.port=8101\n"),
                "the image's configuration uses its volume and its two ports: " + conf);

        // docker run IMAGE --version: arguments go to the launcher after the entrypoint's.
        Container container = start("version", List.of("--version"));
        assertTrue(container.process().waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, container.process().exitValue(), container.output());
        assertEquals("ratchet-node " + VERSION, container.output().strip());
    }

    @Test
    void threeContainersServeTheCommandLineAndOneKilledAndStartedAgainFromItsVolumeServesWhatItMissed() throws Exception {
        int port = FreePorts.next();
        int httpPort = FreePorts.next();
        Map<String, String> addresses = HostPeers.of(IDS, HOSTS, port).addresses();
        String peers = HostPeers.of(IDS, HOSTS, port).line();
        Map<String, Container> nodes = new HashMap<>();
        for (int i = 0; i < IDS.size(); i++) {
            String id = IDS.get(i);
            Path own = Files.createDirectories(dir.resolve(id));
            // -v ratchet-nX:/var/lib/ratchet: a new named volume starts as a copy of the image's directory.
            command(List.of("cp", "-a", inRoot(VOLUME).toString(), own.resolve("volume").toString()));
            // -v nX.conf:/etc/ratchet/ratchet.conf:ro, made from the image's own file.
            Files.createDirectories(own.resolve("etc"));
            Files.writeString(own.resolve("etc/ratchet.conf"), nodeConfiguration(id, peers, httpPort));
            Files.writeString(own.resolve("hosts"), "127.0.0.1 localhost\n" + HOSTS.get(i) + " " + id + "\n");
            nodes.put(id, start(id, List.of()));
        }

        // A conditional delete of a key that never exists is a write through the log that changes nothing:
        // exit 1 (condition failed) says a leader committed it. docker exec ratchet-1 ratchet ...: the command
        // line finds the cluster in the node's configuration (RATCHET_CONF in the image's environment).
        await("a write committed").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500))
                .until(() -> exec(nodes.get("n1"), "ratchet", "--timeout", "5s", "delete", "image/probe", "--index", "1").code() == 1);
        ProcessRun put = exec(nodes.get("n1"), "ratchet", "put", "image/greeting", "\"hello\"", "--index", "0", "--json");
        assertEquals(0, put.code(), put.toString());
        long index = put.json().path("index").asLong();
        assertTrue(put.json().path("successful").asBoolean() && index > 0, put.toString());
        ProcessRun get = exec(nodes.get("n2"), "ratchet", "get", "image/greeting", "--json");
        assertEquals(0, get.code(), get.toString());
        assertEquals("hello", get.json().path("value").asText(), get.toString());
        assertEquals(index, get.json().path("index").asLong(), get.toString());
        JsonNode status = await("every node ready").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500))
                .until(() -> exec(nodes.get("n3"), "ratchet", "status", "--json"), r -> r.code() == 0 && readyNodes(r.json()) == IDS.size())
                .json();

        for (String id : IDS) {
            Container node = nodes.get(id);
            String said = node.output();
            // Logs go to the container's stdout (the image's logback.xml), none to a file.
            assertTrue(said.contains("ratchet node " + id + " serving"), said);
            assertTrue(said.contains("INFO  [main] io.ratchet.node.NodeMain - ratchet-node " + VERSION + " starting node " + id), said);
            try (Stream<Path> files = Files.list(node.own().resolve("tmp"))) {
                assertFalse(files.anyMatch(f -> f.getFileName().toString().endsWith(".log")), "no log file in the container");
            }
            // The entrypoint is PID 1 and java itself (the launcher exec'd it): an engine's SIGTERM reaches it.
            ProcessHandle java = node.java();
            assertTrue(Files.readAllLines(Path.of("/proc", Long.toString(java.pid()), "status")).stream()
                    .anyMatch(l -> l.matches("NSpid:\\s+" + java.pid() + "\\s+1")), "java is PID 1 in its container");
            List<String> arguments = List.of(java.info().arguments().orElseThrow());
            assertTrue(arguments.indexOf("-Xmx512m") >= 0 && arguments.indexOf("-Xmx512m") < arguments.indexOf("-Xmx256m"),
                    "conf/jvm.options, then RATCHET_JVM_OPTS from the container's environment: " + arguments);
            assertEquals(List.of("io.ratchet.node.NodeMain", "--conf", "/etc/ratchet/ratchet.conf"),
                    arguments.subList(arguments.size() - 3, arguments.size()), arguments.toString());
        }

        // The leader's container is killed (kill -9 of its PID 1); the two others go on and take a write.
        String leader = status.path("leader").asText();
        Container killed = nodes.get(leader);
        killed.java().destroyForcibly();
        assertTrue(killed.process().waitFor(30, TimeUnit.SECONDS), "the container ends with its PID 1");
        String survivor = IDS.stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
        ProcessRun whileDown = exec(nodes.get(survivor), "ratchet", "put", "image/while-down", "\"yes\"", "--index", "0", "--json");
        assertEquals(0, whileDown.code(), whileDown.toString());

        // docker start: the same container again, its volume as the kill left it. It recovers from the volume,
        // catches up, and serves both writes from its own state.
        nodes.put(leader, start(leader, List.of()));
        Container restarted = nodes.get(leader);
        String[] fromItAlone = {"ratchet", "--peers", leader + "=" + addresses.get(leader), "--timeout", "5s"};
        ProcessRun caughtUp = await("the restarted node serves the write it missed").atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> exec(restarted, concat(fromItAlone, "get", "image/while-down", "--stale", "--json")), r -> r.code() == 0);
        assertEquals(addresses.get(leader), caughtUp.json().path("servedBy").asText(), caughtUp.toString());
        assertEquals("yes", caughtUp.json().path("value").asText(), caughtUp.toString());
        ProcessRun kept = exec(restarted, concat(fromItAlone, "get", "image/greeting", "--stale", "--json"));
        assertEquals(0, kept.code(), kept.toString());
        assertEquals(index, kept.json().path("index").asLong(), kept.toString());

        // docker stop: SIGTERM to PID 1, which closes the node cleanly (143, as under systemd).
        restarted.java().destroy();
        assertTrue(restarted.process().waitFor(30, TimeUnit.SECONDS), "stopped within docker stop's 10 s and more");
        assertEquals(143, restarted.process().exitValue(), restarted.output());

        // Everything the nodes wrote in their volumes belongs to the image's user.
        for (String id : IDS) {
            try (Stream<Path> files = Files.walk(dir.resolve(id).resolve("volume"))) {
                List<Path> all = files.toList();
                assertTrue(all.stream().anyMatch(f -> f.getFileName().toString().equals("cluster.id")), id + "'s volume: " + all);
                for (Path file : all) {
                    assertEquals(UID, Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS), file.toString());
                    assertEquals(UID, Files.getAttribute(file, "unix:gid", LinkOption.NOFOLLOW_LINKS), file.toString());
                }
            }
        }
    }

    /**
     * docker run: a container named {@code id} from the image, its entrypoint given {@code arguments}, with
     * the image's environment and (-e) RATCHET_JVM_OPTS for a small heap: three nodes on a small machine.
     * Its directory holds what is mounted into it (volume, etc, hosts, tmp) and its stdout.
     */
    private Container start(String id, List<String> arguments) throws IOException, InterruptedException {
        Path own = Files.createDirectories(dir.resolve(id));
        Files.createDirectories(own.resolve("volume"));
        Files.createDirectories(own.resolve("etc"));
        if (!Files.exists(own.resolve("hosts"))) {
            Files.writeString(own.resolve("hosts"), "127.0.0.1 localhost\n");
        }
        Files.writeString(own.resolve("hostname"), id + "\n");
        Path tmp = Files.createDirectories(own.resolve("tmp"));
        command(List.of("chmod", "1777", tmp.toString()));
        Path script = Files.writeString(dir.resolve("container.sh"), CONTAINER);
        Map<String, String> environment = new LinkedHashMap<>(environment());
        environment.put("HOSTNAME", id);
        environment.put("HOME", VOLUME);
        environment.put("RATCHET_JVM_OPTS", "-Xmx256m -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1");
        List<String> command = new ArrayList<>(List.of("unshare", "--mount", "--uts", "--pid", "--fork", "--kill-child",
                "--mount-proc=" + rootfs.resolve("proc"), "sh", script.toString(), rootfs.toString(), own.toString()));
        command.addAll(inImage(environment, config.path("WorkingDir").asText()));
        command.addAll(strings(config.path("Entrypoint")));
        command.addAll(arguments);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(own.resolve("stdout").toFile()));
        builder.environment().clear();
        builder.environment().put("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        Process process = builder.start();
        started.add(process);
        return new Container(id, own, process);
    }

    /** docker exec: {@code command} in the container's namespaces and root, as its user, with its environment. */
    private ProcessRun exec(Container container, String... command) throws IOException, InterruptedException {
        Map<String, String> environment = new LinkedHashMap<>(environment());
        environment.put("HOSTNAME", container.id());
        environment.put("HOME", VOLUME);
        List<String> line = new ArrayList<>(List.of("nsenter", "--target", Long.toString(container.java().pid()),
                "--mount", "--uts", "--pid", "--", "chroot", "--userspec=" + USER, rootfs.toString()));
        line.addAll(inImage(environment, config.path("WorkingDir").asText()));
        line.addAll(List.of(command));
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        ProcessBuilder builder = new ProcessBuilder(line).redirectOutput(out.toFile()).redirectError(err.toFile());
        builder.environment().clear();
        builder.environment().put("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        Process p = builder.start();
        started.add(p);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(List.of(command) + " did not finish in 60 s");
        }
        return new ProcessRun(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    /** The image's env, without the host's, in its working directory: what an engine starts a command with. */
    private static List<String> inImage(Map<String, String> environment, String workingDirectory) {
        List<String> line = new ArrayList<>(List.of("/usr/bin/env", "-i", "--chdir=" + workingDirectory));
        environment.forEach((k, v) -> line.add(k + "=" + v));
        return line;
    }

    /** The image's ratchet.conf made this node's: every line the test changes must be there. */
    private static String nodeConfiguration(String id, String peers, int httpPort) throws IOException {
        String text = Files.readString(inRoot("/etc/ratchet/ratchet.conf"));
        Map<String, String> lines = new LinkedHashMap<>();
        lines.put("id=n1", "id=" + id);
        lines.put("peers=n1=ratchet-1:7101,n2=ratchet-2:7101,n3=ratchet-3:7101", "peers=" + peers);
        lines.put("http.port=8101", "http.port=" + httpPort);
        for (Map.Entry<String, String> line : lines.entrySet()) {
            assertTrue(text.contains("\n" + line.getKey() + "\n"), "the image's ratchet.conf has the line " + line.getKey());
            text = text.replace("\n" + line.getKey() + "\n", "\n" + line.getValue() + "\n");
        }
        return text;
    }

    private static Map<String, String> environment() {
        Map<String, String> environment = new LinkedHashMap<>();
        for (String entry : strings(config.path("Env"))) {
            int equals = entry.indexOf('=');
            environment.put(entry.substring(0, equals), entry.substring(equals + 1));
        }
        return environment;
    }

    private static Path inRoot(String absolute) {
        return rootfs.resolve(absolute.substring(1));
    }

    private static int readyNodes(JsonNode status) {
        int ready = 0;
        for (JsonNode node : status.path("nodes")) {
            ready += node.path("ready").asBoolean() ? 1 : 0;
        }
        return ready;
    }

    private static List<String> strings(JsonNode array) {
        List<String> all = new ArrayList<>();
        array.forEach(e -> all.add(e.asText()));
        return all;
    }

    private static List<String> names(JsonNode object) {
        List<String> all = new ArrayList<>();
        object.fieldNames().forEachRemaining(all::add);
        return all;
    }

    private static String[] concat(String[] first, String... rest) {
        return Stream.concat(Stream.of(first), Stream.of(rest)).toArray(String[]::new);
    }

    /** Runs a host command to its end; its output, or an AssertionError saying how it failed. */
    private static String command(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0, command + ": " + said);
        return said;
    }
}
