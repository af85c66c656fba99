package io.ratchet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * An operator on one of the cluster's machines runs {@code ratchet --conf /etc/ratchet/ratchet.conf status}:
 * the command finds the cluster, and trusts its CA, from the node's own configuration.
 */
class NodeConfigFileTest {
    @TempDir
    Path dir;

    @Test
    void aCommandTalksToThePeersOfTheNodeConfigurationItIsGiven() throws IOException {
        int port = unusedPort();
        Path conf = write("ratchet.conf", "id=n2\npeers=n1=127.0.0.1:" + port + ",n2=127.0.0.1:" + port + "\nstorage=/x\n");
        CommandRun run = CommandRun.of("--conf", conf.toString(), "get", "k");
        assertEquals(ExitCode.UNAVAILABLE, run.code(), run.toString());
        assertTrue(run.err().contains("no node accepts connections at 127.0.0.1:" + port), run.err());
    }

    @Test
    void theCaOfATlsClusterIsTakenFromTheConfigurationUnlessOneIsNamed() throws IOException {
        assumeTrue(System.getenv("RATCHET_CA") == null, "RATCHET_CA, set here, wins over the file");
        Path conf = write("ratchet.conf", "id=n1\npeers=n1=10.0.0.1:7101\nstorage=/x\ntls.cert=/etc/ratchet/n1.pem\n"
                + "tls.key=/etc/ratchet/n1-key.pem\ntls.ca=/etc/ratchet/ca.pem\n");
        assertEquals(Path.of("/etc/ratchet/ca.pem"), parse("--conf", conf.toString()).credentials().caFile());
        assertEquals("n1=10.0.0.1:7101", parse("--conf", conf.toString()).resolvePeers());
        assertEquals(Path.of("/tmp/other-ca.pem"),
                parse("--conf", conf.toString(), "--ca", "/tmp/other-ca.pem").credentials().caFile());
        assertNull(parse("--peers", "10.0.0.1:7101").credentials().certFile(), "a node's own certificate is never shown");
        Path plaintext = write("plain.conf", "id=n1\npeers=n1=10.0.0.1:7101\nstorage=/x\n#tls.ca=/etc/ratchet/ca.pem\n");
        assertNull(parse("--conf", plaintext.toString()).credentials().caFile());
    }

    @Test
    void aMissingFileAFileWithoutPeersAndTwoNamesForTheClusterAreRefusedSayingWhy() throws IOException {
        CommandRun missing = CommandRun.of("--conf", dir.resolve("nope.conf").toString(), "status");
        assertEquals(ExitCode.INVALID, missing.code(), missing.toString());
        assertTrue(missing.err().contains("cannot read the node configuration " + dir.resolve("nope.conf")), missing.err());

        Path empty = write("empty.conf", "# peers=n1=10.0.0.1:7101\n");
        CommandRun noPeers = CommandRun.of("status", "--conf", empty.toString());
        assertEquals(ExitCode.INVALID, noPeers.code(), noPeers.toString());
        assertTrue(noPeers.err().contains(empty + " has no peers= line"), noPeers.err());

        CommandRun both = CommandRun.of("--peers", "127.0.0.1:1", "--conf", empty.toString(), "status");
        assertEquals(ExitCode.INVALID, both.code(), both.toString());
        assertTrue(both.err().contains("--peers and --conf both name the cluster"), both.err());
    }

    private static ClientOptionsMixin parse(String... args) {
        Main main = new Main();
        new CommandLine(main).parseArgs(args);
        return main.options;
    }

    private Path write(String name, String text) throws IOException {
        return Files.writeString(dir.resolve(name), text);
    }

    private static int unusedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
