package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.ratchet.client.AdminRefusedException;
import io.ratchet.client.ClientOptions;
import io.ratchet.client.ClusterAdmin;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.common.Credentials;
import io.ratchet.common.NodeChannels;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.RatchetException;
import io.ratchet.protocol.Rpc;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.apache.ratis.client.impl.ClientProtoUtils;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupListRequest;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;
import org.apache.ratis.thirdparty.io.grpc.netty.GrpcSslContexts;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * A real 3-node cluster with TLS on every port: clients that trust its CA are served, with a client
 * certificate or without; a plaintext client, or one whose certificate another CA issued or that expired, is
 * refused and writes nothing; only nodes may speak Ratis' own protocols; a node of another CA cannot join; the HTTP
 * API is HTTPS alone.
 */
class TlsClusterTest {
    @TempDir
    static Path dir;
    private static CertificateAuthority ca;
    private static CertificateAuthority other;
    private static LocalCluster cluster;

    @BeforeAll
    static void startCluster() {
        ca = CertificateAuthority.create(dir, "cluster-ca");
        other = CertificateAuthority.create(dir, "other-ca");
        cluster = LocalCluster.startTls(3, dir.resolve("nodes"), ca);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Options for a client that gives up within a few seconds: refusals here are certain, not slow. */
    private static ClientOptions quick(Credentials credentials) {
        return cluster.options().withCredentials(credentials)
                .withTimeouts(Duration.ofMillis(500), 3, Duration.ofSeconds(2));
    }

    @Test
    void aClientThatTrustsTheCaWritesAndReadsWithOrWithoutACertificate() {
        RatchetClient anonymous = cluster.client();
        CompareExchangeResult put = anonymous.put("tls/anonymous", "a", 0);
        assertTrue(put.successful());
        RatchetClient alice = cluster.client(cluster.options().withCredentials(ca.client("alice")));
        assertTrue(alice.put("tls/alice", "b", 0).successful());
        assertEquals(put.index(), alice.get("tls/anonymous").orElseThrow().index());
        assertEquals("\"b\"", anonymous.get("tls/alice").orElseThrow().value());
    }

    @Test
    void aPlaintextClientIsRefusedAndWritesNothing() {
        try (RatchetClient plaintext = RatchetClient.connect(quick(Credentials.NONE))) {
            RatchetException refused = assertThrows(RatchetException.class, () -> plaintext.put("tls/plaintext", "x", 0));
            assertTrue(refused instanceof ClusterUnavailableException, refused.toString());
        }
        assertTrue(cluster.client().get("tls/plaintext").isEmpty());
        assertNoItemOnAnyNode("tls/plaintext");
    }

    @Test
    void aClientWithACertificateOfAnotherCaIsRefusedAndWritesNothing() {
        Credentials mallory = other.client("mallory");
        // It trusts the cluster's CA, but shows a certificate the cluster's CA did not issue.
        Credentials shown = new Credentials(ca.certificate(), mallory.certFile(), mallory.keyFile(), null);
        try (RatchetClient client = RatchetClient.connect(quick(shown))) {
            ClusterUnavailableException refused = assertThrows(ClusterUnavailableException.class,
                    () -> client.put("tls/mallory", "x", 0));
            assertTrue(refused.getMessage().contains("TLS handshake"), refused.getMessage());
        }
        // One that trusts only the other CA refuses the nodes' certificates itself, and once every node's
        // was refused it says so at once instead of retrying until its budget runs out.
        try (RatchetClient client = RatchetClient.connect(cluster.options().withCredentials(mallory))) {
            ClusterUnavailableException refused = assertThrows(ClusterUnavailableException.class,
                    () -> client.put("tls/mallory", "x", 0));
            assertTrue(refused.getMessage().contains("every node refused the TLS handshake"), refused.getMessage());
            assertTrue(refused.getMessage().contains("not trusted with the CA file " + other.certificate()), refused.getMessage());
        }
        assertNoItemOnAnyNode("tls/mallory");
    }

    @Test
    void anExpiredClientCertificateIsRefusedByTheClientItselfAndByTheNodeWhichLogsItOnce() throws Exception {
        Credentials expired = ca.expiredClient("frank");
        IllegalArgumentException own = assertThrows(IllegalArgumentException.class, () -> RatchetClient.connect(quick(expired)));
        assertTrue(own.getMessage().contains("the certificate in " + expired.certFile() + " expired at"), own.getMessage());

        // Shown anyway, by a client that does not check its own certificate: the node refuses the handshake.
        String address = cluster.address(cluster.nodeIds().get(1));
        Logger logger = (Logger) LoggerFactory.getLogger("io.ratchet.node.security.RefusedHandshakes");
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        log.start();
        logger.addAppender(log);
        try {
            for (int attempt = 0; attempt < 3; attempt++) {
                assertEquals(Status.Code.UNAVAILABLE, showingUncheckedCertificate(address, expired).getCode());
            }
            assertTrue(cluster.client().put("tls/after-expired", 1, 0).successful());
            // Logged once for the address and the reason, however often it tries.
            await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> expiredLines(log).size() == 1);
        } finally {
            logger.detachAppender(log);
        }
    }

    private static List<String> expiredLines(ListAppender<ILoggingEvent> log) {
        synchronized (log.list) {
            return log.list.stream().map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains("certificate expired")).toList();
        }
    }

    /** The status of a write over a TLS connection showing {@code credentials}' certificate as it is. */
    private static Status showingUncheckedCertificate(String address, Credentials credentials) throws IOException {
        SslContext tls = GrpcSslContexts.forClient().trustManager(credentials.caFile().toFile())
                .keyManager(credentials.certFile().toFile(), credentials.keyFile().toFile()).build();
        ManagedChannel channel = NettyChannelBuilder.forTarget(address).sslContext(tls).build();
        try {
            ClientCalls.blockingUnaryCall(channel, Rpc.WRITE, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), new byte[0]);
            return Status.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void onlyANodeCertificateMayCallRatisOwnServices() {
        String id = cluster.nodeIds().get(0);
        String address = cluster.address(id);
        byte[] groupList = ClientProtoUtils.toGroupListRequestProto(new GroupListRequest(ClientId.randomId(),
                RaftPeerId.valueOf(id), cluster.node(id).groupId(), 1)).toByteArray();
        assertEquals(Status.Code.UNAUTHENTICATED, ratisCall(address, ca.trusting(), VOTE, new byte[0]).getCode());
        assertEquals(Status.Code.UNAUTHENTICATED, ratisCall(address, ca.trusting(), GROUP_LIST, groupList).getCode());
        assertEquals(Status.Code.PERMISSION_DENIED, ratisCall(address, ca.client("bob"), GROUP_LIST, groupList).getCode());
        assertEquals(Status.Code.OK, ratisCall(address, ca.node("n9").clientCredentials(), GROUP_LIST, groupList).getCode());
    }

    @Test
    void aNodeOfAnotherCaCannotJoinAndOneOfTheClusterCaCan() {
        try (ClusterAdmin admin = ClusterAdmin.connect(cluster.options())) {
            String rogue = cluster.startJoining("n4", other.node("n4"));
            AdminRefusedException refused = assertThrows(AdminRefusedException.class, () -> admin.addMember("n4", rogue));
            assertTrue(refused.getMessage().contains("n4") || refused.getMessage().contains(rogue), refused.getMessage());
            cluster.stopNode("n4");
            assertEquals(3, admin.members().members().size());
            assertTrue(cluster.client().put("tls/after-rogue", 1, 0).successful());

            String good = cluster.startJoining("n5");
            admin.addMember("n5", good);
            await().atMost(Duration.ofSeconds(20)).until(() -> cluster.itemsOn("n5").stream()
                    .anyMatch(i -> i.key().equals("tls/after-rogue")));
            admin.removeMember("n5");
            cluster.stopNode("n5");
            assertEquals(3, admin.members().members().size());
        }
    }

    @Test
    void theHttpApiIsHttpsAlone() throws Exception {
        String https = cluster.httpUrl(cluster.nodeIds().get(0));
        HttpClient client = HttpClient.newBuilder().sslContext(trusting(ca.certificate())).build();
        HttpResponse<String> live = client.send(HttpRequest.newBuilder(URI.create(https + "/health/live")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, live.statusCode());
        HttpResponse<String> put = client.send(HttpRequest.newBuilder(URI.create(https + "/v1/items/tls/http"))
                .header("If-None-Match", "*").PUT(HttpRequest.BodyPublishers.ofString("1")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(201, put.statusCode(), put.body());

        String plain = https.replace("https://", "http://");
        assertThrows(IOException.class, () -> HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(plain + "/health/live")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString()));
    }

    @Test
    void aRenewedNodeCertificateIsShownToNewConnectionsWithoutARestartAndItsExpiryInTheMetrics() throws Exception {
        String id = cluster.nodeIds().get(2);
        X509Certificate before = servedCertificate(cluster.address(id));
        assertEquals(before.getNotAfter().getTime() / 1000, certificateExpiryMetric(id));
        ca.node(id); // issues it anew, over the files the node was started with
        // A node looks at its files at most every five seconds.
        await().atMost(Duration.ofSeconds(15)).until(() -> !servedCertificate(cluster.address(id)).getSerialNumber()
                .equals(before.getSerialNumber()));
        assertTrue(cluster.client().put("tls/after-renewal", 1, 0).successful());
        assertEquals(servedCertificate(cluster.address(id)).getNotAfter().getTime() / 1000, certificateExpiryMetric(id));
    }

    /** {@code ratchet_tls_certificate_not_after_seconds} as node {@code id}'s {@code /metrics} shows it. */
    private static long certificateExpiryMetric(String id) throws Exception {
        System.gc(); // a gauge that held its supplier weakly read NaN after a collection
        HttpClient client = HttpClient.newBuilder().sslContext(trusting(ca.certificate())).build();
        String metrics = client.send(HttpRequest.newBuilder(URI.create(cluster.httpUrl(id) + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        String line = metrics.lines().filter(l -> l.startsWith("ratchet_tls_certificate_not_after_seconds{")).findFirst()
                .orElseThrow(() -> new AssertionError("no certificate expiry in " + id + "'s metrics"));
        return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
    }

    /** The certificate a node's gRPC port shows a new connection. */
    private static X509Certificate servedCertificate(String address) throws Exception {
        int colon = address.lastIndexOf(':');
        try (SSLSocket socket = (SSLSocket) trusting(ca.certificate()).getSocketFactory()
                .createSocket(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)))) {
            socket.startHandshake();
            return (X509Certificate) socket.getSession().getPeerCertificates()[0];
        }
    }

    private static final MethodDescriptor<byte[], byte[]> VOTE = unary("ratis.grpc.RaftServerProtocolService/requestVote");
    private static final MethodDescriptor<byte[], byte[]> GROUP_LIST = unary("ratis.grpc.AdminProtocolService/groupList");

    /** A unary method of raw bytes, as the front end's are. */
    private static MethodDescriptor<byte[], byte[]> unary(String name) {
        return Rpc.WRITE.toBuilder().setFullMethodName(name).build();
    }

    /** The status of a raw call; OK when it was answered. */
    private static Status ratisCall(String address, Credentials credentials, MethodDescriptor<byte[], byte[]> method,
                                    byte[] request) {
        ManagedChannel channel = NodeChannels.open(address, credentials);
        try {
            ClientCalls.blockingUnaryCall(channel, method, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), request);
            return Status.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        } finally {
            channel.shutdownNow();
        }
    }

    private static void assertNoItemOnAnyNode(String key) {
        for (String id : List.of("n1", "n2", "n3")) {
            assertFalse(cluster.itemsOn(id).stream().anyMatch(i -> i.key().equals(key)), key + " reached " + id);
        }
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
