package io.ratchet.node.security;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.common.Credentials;
import io.ratchet.common.tls.Pem;
import io.ratchet.common.tls.ReloadingKeyManager;
import io.ratchet.common.tls.ReloadingTrustManager;
import io.ratchet.node.CertificateAuthority;
import io.ratchet.node.NodeConfig;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node's TLS files: read and checked at start, and read again when renewed, without a restart; a
 * renewal caught half written, or expired, keeps the pair in use.
 */
class CertificateFilesTest {
    /** Short, so a renewal is seen at once; a node looks every five seconds. */
    private static final Duration LOOK = Duration.ofMillis(20);

    @TempDir
    Path dir;
    private CertificateAuthority ca;
    private Path cert;
    private Path key;

    @BeforeEach
    void files() throws IOException {
        ca = CertificateAuthority.create(dir, "ca");
        cert = dir.resolve("node.pem");
        key = dir.resolve("node-key.pem");
        install(ca.node("first"));
    }

    private void install(TlsFiles files) throws IOException {
        Files.copy(files.cert(), cert, StandardCopyOption.REPLACE_EXISTING);
        Files.copy(files.key(), key, StandardCopyOption.REPLACE_EXISTING);
    }

    private static BigInteger serial(Path file) throws Exception {
        return Pem.certificates(file).get(0).getSerialNumber();
    }

    @Test
    void aRenewedCertificateIsShownWithoutARestart() throws Exception {
        ReloadingKeyManager keys = new ReloadingKeyManager(cert, key, LOOK);
        String before = keys.chooseEngineServerAlias("EC", null, null);
        X509Certificate[] oldChain = keys.getCertificateChain(before);

        install(ca.node("second"));
        BigInteger renewed = serial(cert);
        await().atMost(Duration.ofSeconds(5)).until(() -> keys.certificate().getSerialNumber().equals(renewed));

        String after = keys.chooseEngineServerAlias("EC", null, null);
        assertEquals(renewed, keys.getCertificateChain(after)[0].getSerialNumber());
        // A handshake that chose its alias just before the renewal still gets that reading's chain.
        assertArrayEquals(oldChain, keys.getCertificateChain(before));
    }

    @Test
    void aCertificateRenewedBeforeItsKeyKeepsThePairInUseUntilTheKeyArrives() throws Exception {
        ReloadingKeyManager keys = new ReloadingKeyManager(cert, key, LOOK);
        BigInteger first = keys.certificate().getSerialNumber();
        TlsFiles second = ca.node("second");

        Files.copy(second.cert(), cert, StandardCopyOption.REPLACE_EXISTING);
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2))
                .until(() -> keys.certificate().getSerialNumber().equals(first));

        Files.copy(second.key(), key, StandardCopyOption.REPLACE_EXISTING);
        BigInteger renewed = serial(cert);
        await().atMost(Duration.ofSeconds(5)).until(() -> keys.certificate().getSerialNumber().equals(renewed));
    }

    @Test
    void aRenewedCaFileIsTrustedWithoutARestart() throws Exception {
        Path caFile = dir.resolve("trusted.pem");
        Files.copy(ca.certificate(), caFile);
        ReloadingTrustManager trust = new ReloadingTrustManager(caFile, LOOK);
        CertificateAuthority next = CertificateAuthority.create(dir, "next");
        X509Certificate[] fromNext = Pem.certificates(next.client("carol").certFile()).toArray(new X509Certificate[0]);
        assertThrows(CertificateException.class, () -> trust.checkClientTrusted(fromNext, "EC"));

        // Rolling the CA over: the file holds both, old and new.
        Files.writeString(caFile, Files.readString(ca.certificate()) + Files.readString(next.certificate()));
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> trust.checkClientTrusted(fromNext, "EC"));
    }

    @Test
    void aNodeRefusesToStartWithACertificateThatIsNoNodesOrAKeyThatIsNotItsCertificates() throws Exception {
        Credentials client = ca.client("dave");
        IOException notANode = assertThrows(IOException.class,
                () -> NodeTls.load(new TlsFiles(client.certFile(), client.keyFile(), ca.certificate())));
        assertTrue(notANode.getMessage().contains("CN=dave") && notANode.getMessage().contains("OU=ratchet-node"),
                notANode.getMessage());

        TlsFiles other = ca.node("other");
        IOException mismatch = assertThrows(IOException.class, () -> NodeTls.load(new TlsFiles(cert, other.key(), ca.certificate())));
        assertTrue(mismatch.getMessage().contains("is not the key of the certificate in " + cert), mismatch.getMessage());

        IOException missing = assertThrows(IOException.class,
                () -> NodeTls.load(new TlsFiles(cert, key, dir.resolve("absent.pem"))));
        assertTrue(missing.getMessage().contains("there is no file " + dir.resolve("absent.pem")), missing.getMessage());
    }

    @Test
    void anExpiredCertificateIsRefusedAtStartAndAnExpiredRenewalKeepsThePairInUse() throws Exception {
        TlsFiles expired = ca.expiredNode("late");
        IOException refused = assertThrows(IOException.class, () -> NodeTls.load(expired));
        assertTrue(refused.getMessage().contains("the certificate in " + expired.cert() + " expired at"), refused.getMessage());

        ReloadingKeyManager keys = new ReloadingKeyManager(cert, key, LOOK);
        BigInteger first = keys.certificate().getSerialNumber();
        install(expired);
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2))
                .until(() -> keys.certificate().getSerialNumber().equals(first));
        // It was looked at: a valid renewal after it is taken.
        install(ca.node("renewed"));
        BigInteger renewed = serial(cert);
        await().atMost(Duration.ofSeconds(5)).until(() -> keys.certificate().getSerialNumber().equals(renewed));
    }

    @Test
    void aKeyInAnotherFormatIsRefusedWithTheCommandThatConvertsIt() throws IOException {
        Path rsa = dir.resolve("rsa.pem");
        Files.writeString(rsa, "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n");
        Exception refused = assertThrows(Exception.class, () -> Pem.privateKey(rsa));
        assertTrue(refused.getMessage().contains("openssl pkcs8 -topk8 -nocrypt -in " + rsa), refused.getMessage());
    }

    @Test
    void aConfigNamesAllThreeTlsFilesOrNone() throws IOException {
        String base = "id=n1\npeers=n1=127.0.0.1:7101\nstorage=data/n1\n";
        Path plain = dir.resolve("plain.properties");
        Files.writeString(plain, base);
        assertNull(NodeConfig.load(plain, dir).tls());

        Path tls = dir.resolve("tls.properties");
        Files.writeString(tls, base + "tls.cert=tls/n1.pem\ntls.key=tls/n1-key.pem\ntls.ca=tls/ca.pem\n");
        assertEquals(new TlsFiles(dir.resolve("tls/n1.pem"), dir.resolve("tls/n1-key.pem"), dir.resolve("tls/ca.pem")),
                NodeConfig.load(tls, dir).tls());

        Path half = dir.resolve("half.properties");
        Files.writeString(half, base + "tls.cert=tls/n1.pem\n");
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> NodeConfig.load(half, dir));
        assertTrue(refused.getMessage().contains("only tls.cert is set"), refused.getMessage());
    }

    @Test
    void theNodeMarkerIsTheOrganizationalUnit() throws Exception {
        Peer node = Peer.of(Pem.certificates(ca.node("n7").cert()).get(0));
        assertEquals(new Peer("CN=n7,OU=ratchet-node", "n7", true), node);
        Peer client = Peer.of(Pem.certificates(ca.client("erin").certFile()).get(0));
        assertEquals(new Peer("CN=erin", "erin", false), client);
    }
}
