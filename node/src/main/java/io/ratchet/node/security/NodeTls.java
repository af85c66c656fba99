package io.ratchet.node.security;

import io.ratchet.common.tls.ReloadingKeyManager;
import io.ratchet.common.tls.ReloadingTrustManager;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.thirdparty.io.grpc.netty.GrpcSslContexts;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyServerBuilder;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.ClientAuth;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContextBuilder;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * A node's TLS: its certificate and key, and the CA it trusts, read from its {@link TlsFiles} and read again
 * when they are renewed (checked at most every five seconds, on use; see {@link ReloadingKeyManager}), and
 * how each of the node's ports uses them.
 *
 * <ul>
 *   <li>To its peers, through Ratis, the node shows its certificate and checks theirs against the CA
 *       (mutual TLS: {@link #ratis()}).</li>
 *   <li>Its one gRPC port ({@link #secure}) speaks only TLS, and asks every caller for a certificate but
 *       lets one without connect ({@code ClientAuth.OPTIONAL}): clients may prove who they are by a token
 *       instead; a certificate a caller does show must be the CA's, or the handshake fails. Peers show theirs,
 *       and only a node's certificate may call Ratis' services ({@link PeerGate}).</li>
 *   <li>Its HTTP API and console are HTTPS with the same certificate ({@link #https()}).</li>
 * </ul>
 */
public final class NodeTls {
    private final ReloadingKeyManager keys;
    private final ReloadingTrustManager trust;
    private final SslContext server;

    private NodeTls(ReloadingKeyManager keys, ReloadingTrustManager trust, SslContext server) {
        this.keys = keys;
        this.trust = trust;
        this.server = server;
    }

    /**
     * Reads and checks the files: the key must be the certificate's, and the certificate a node's
     * ({@code OU=ratchet-node}; its peers would refuse any other).
     *
     * @throws IOException naming the file and what is wrong with it
     */
    public static NodeTls load(TlsFiles files) throws IOException {
        try {
            ReloadingKeyManager keys = new ReloadingKeyManager(files.cert(), files.key());
            ReloadingTrustManager trust = new ReloadingTrustManager(files.ca());
            Peer self = Peer.of(keys.certificate());
            if (!self.node()) {
                throw new IOException("TLS: the certificate in " + files.cert() + " (" + self.subject() + ") is no node's: "
                        + "its subject needs OU=" + Peer.NODE_UNIT + ", or its peers refuse it");
            }
            SslContext server = GrpcSslContexts.configure(SslContextBuilder.forServer(keys))
                    .trustManager(trust)
                    .clientAuth(ClientAuth.OPTIONAL)
                    .build();
            return new NodeTls(keys, trust, server);
        } catch (NoSuchFileException e) {
            throw new IOException("TLS: there is no file " + e.getFile(), e);
        } catch (GeneralSecurityException e) {
            throw new IOException("TLS: " + e.getMessage(), e);
        }
    }

    /** The certificate the node shows now: the one read last, which a renewal replaces. */
    public X509Certificate certificate() {
        return keys.certificate();
    }

    /**
     * Ratis' connections between the nodes: each shows its certificate and checks the other's (mutual TLS),
     * which must be a node's ({@link NodePeerTrust}). The server side Ratis would build from this is
     * replaced on every port by {@link #secure}.
     */
    public GrpcTlsConfig ratis() {
        return new GrpcTlsConfig(keys, new NodePeerTrust(trust), true);
    }

    /**
     * Makes a gRPC server port of the node TLS only: the handshake Ratis set up (which requires a client
     * certificate) becomes one that asks for it, refused handshakes are logged ({@link RefusedHandshakes}),
     * and Ratis' services answer only nodes ({@link PeerGate}). Returns {@code builder}.
     */
    public NettyServerBuilder secure(NettyServerBuilder builder) {
        return builder.protocolNegotiator(new RefusedHandshakes(server)).intercept(new PeerGate());
    }

    /**
     * The HTTP API's TLS, in front of its HTTP/1.1: the node's certificate and key (renewed as the gRPC
     * port's are); no client certificate is asked for; refused handshakes are logged
     * ({@link RefusedHttpsHandshakes}).
     */
    public SslConnectionFactory https() throws IOException {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(new KeyManager[] {keys}, null, null);
            SslContextFactory.Server server = new SslContextFactory.Server();
            server.setSslContext(context);
            SslConnectionFactory https = new SslConnectionFactory(server, HttpVersion.HTTP_1_1.asString());
            https.addBean(new RefusedHttpsHandshakes());
            return https;
        } catch (GeneralSecurityException e) {
            throw new IOException("TLS: the JDK cannot serve HTTPS: " + e.getMessage(), e);
        }
    }
}
