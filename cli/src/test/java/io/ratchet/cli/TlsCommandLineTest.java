package io.ratchet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.common.Credentials;
import io.ratchet.node.CertificateAuthority;
import io.ratchet.node.LocalCluster;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command line against a cluster with TLS: {@code --ca} (with or without a client certificate) is
 * served; without it, or with another CA, the command says what is wrong and exits 3 (unavailable).
 */
class TlsCommandLineTest {
    @TempDir
    Path dir;

    @Test
    void caConnectsAndItsAbsenceOrAnotherCaIsACleanExit3() {
        CertificateAuthority ca = CertificateAuthority.create(dir, "cluster-ca");
        CertificateAuthority other = CertificateAuthority.create(dir, "other-ca");
        try (LocalCluster cluster = LocalCluster.startTls(3, dir.resolve("nodes"), ca)) {
            String peers = cluster.peers();
            String caFile = ca.certificate().toString();

            CommandRun put = CommandRun.of("put", "tls/k", "\"v\"", "--index", "0", "--peers", peers, "--ca", caFile);
            assertEquals(ExitCode.DONE, put.code(), put.toString());
            Credentials alice = ca.client("alice");
            CommandRun get = CommandRun.of("--ca", caFile, "--cert", alice.certFile().toString(), "--key",
                    alice.keyFile().toString(), "get", "tls/k", "--peers", peers, "--json");
            assertEquals(ExitCode.DONE, get.code(), get.toString());
            assertTrue(get.out().contains("\"value\":\"v\""), get.out());
            CommandRun status = CommandRun.of("status", "--peers", peers, "--ca", caFile);
            assertEquals(ExitCode.DONE, status.code(), status.toString());

            CommandRun plaintext = CommandRun.of("get", "tls/k", "--peers", peers);
            assertEquals(ExitCode.UNAVAILABLE, plaintext.code(), plaintext.toString());
            assertTrue(plaintext.err().contains("speaks only TLS") && plaintext.err().contains("--ca"), plaintext.err());

            CommandRun untrusted = CommandRun.of("get", "tls/k", "--peers", peers, "--ca", other.certificate().toString(),
                    "--timeout", "2s");
            assertEquals(ExitCode.UNAVAILABLE, untrusted.code(), untrusted.toString());
            assertTrue(untrusted.err().contains("not trusted with the CA file " + other.certificate()), untrusted.err());

            CommandRun missing = CommandRun.of("get", "tls/k", "--peers", peers, "--ca", dir.resolve("nope.pem").toString());
            assertEquals(ExitCode.INVALID, missing.code(), missing.toString());
            assertTrue(missing.err().contains("there is no file " + dir.resolve("nope.pem")), missing.err());
        }
    }

    @Test
    void connectionOptionsTakeAValueBeforeTheCommand() {
        assertEquals("get", Main.commandWord(new String[] {"--ca", "ca.pem", "--cert", "c.pem", "--key", "k.pem",
                "--token", "t", "get", "k"}));
    }
}
