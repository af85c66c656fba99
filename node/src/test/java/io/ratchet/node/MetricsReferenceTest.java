package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code docs/reference/metrics.md} lists what a running node's {@code /metrics} serves: one node, two Raft
 * groups and TLS, so that the families only those register show too.
 */
class MetricsReferenceTest {
    @TempDir
    Path dir;

    @Test
    void theMetricsReferenceIsWhatARunningNodeServes() throws Exception {
        CertificateAuthority ca = CertificateAuthority.create(dir, "ca");
        String scrape;
        try (LocalCluster cluster = LocalCluster.start(1, dir, c -> c.withGroups(2).withTls(ca.node(c.id())))) {
            HttpClient http = HttpClient.newBuilder().sslContext(trusting(ca.certificate()))
                    .connectTimeout(Duration.ofSeconds(5)).build();
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:"
                    + cluster.config("n1").httpPort() + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, response.statusCode(), response.body());
            scrape = response.body();
        }
        String page = MetricsReference.page(scrape);
        for (String prefix : MetricsReference.ONLY_WHEN.keySet()) {
            assertTrue(page.contains("| `" + prefix), "the node the page is made from registers " + prefix + "*");
        }
        ReferencePage.check("metrics.md", "node", MetricsReferenceTest.class, page);
    }

    private static SSLContext trusting(Path caFile) throws Exception {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        try (InputStream in = Files.newInputStream(caFile)) {
            store.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(store);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        return context;
    }
}
