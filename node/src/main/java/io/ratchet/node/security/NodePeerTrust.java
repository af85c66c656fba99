package io.ratchet.node.security;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The trust a node's Raft connections use: a certificate must be the CA's, and the peer a node connects to
 * must show a node's certificate ({@code OU=ratchet-node}), as {@link PeerGate} requires of the nodes that
 * connect to it. So Raft's traffic (the log, snapshots, votes) goes only between holders of node
 * certificates, whichever end opened the connection: a server added by mistake with any other certificate
 * of the CA gets nothing.
 */
final class NodePeerTrust extends X509ExtendedTrustManager {
    private final X509ExtendedTrustManager ca;

    NodePeerTrust(X509ExtendedTrustManager ca) {
        this.ca = ca;
    }

    private static void requireNode(X509Certificate[] chain) throws CertificateException {
        Peer peer = Peer.of(chain[0]);
        if (!peer.node()) {
            throw new CertificateException(peer.subject() + " is no node's certificate (no OU=" + Peer.NODE_UNIT + ")");
        }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        ca.checkServerTrusted(chain, authType);
        requireNode(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        ca.checkServerTrusted(chain, authType, socket);
        requireNode(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        ca.checkServerTrusted(chain, authType, engine);
        requireNode(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        ca.checkClientTrusted(chain, authType);
        requireNode(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        ca.checkClientTrusted(chain, authType, socket);
        requireNode(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        ca.checkClientTrusted(chain, authType, engine);
        requireNode(chain);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return ca.getAcceptedIssuers();
    }
}
