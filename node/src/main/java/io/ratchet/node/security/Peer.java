package io.ratchet.node.security;

import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Optional;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.security.auth.x500.X500Principal;
import org.apache.ratis.thirdparty.io.grpc.Context;

/**
 * Who is at the other end of a TLS connection, by the certificate it presented and the node verified
 * against its CA: the subject, its common name, and whether it is one of the cluster's nodes.
 *
 * <p><b>The node marker.</b> A node's certificate carries {@code OU=ratchet-node} in its subject (e.g.
 * {@code CN=n1,OU=ratchet-node}); any other certificate from the CA is a client's. So the CA must put that
 * unit only into the certificates of nodes: whoever holds one may speak Raft to the cluster.
 *
 * @param subject    the certificate's subject, as RFC 2253 writes it
 * @param commonName its {@code CN}, or null
 * @param node       whether the subject carries {@link #NODE_UNIT}
 */
public record Peer(String subject, String commonName, boolean node) {
    /** The organizational unit that marks a node's certificate. */
    public static final String NODE_UNIT = "ratchet-node";
    static final Context.Key<Peer> KEY = Context.key("ratchet-peer");
    /** Where a TLS session keeps its peer once worked out: a connection's calls share its session. */
    private static final String IN_SESSION = "ratchet.peer";
    /** Kept in a session whose peer presented no certificate. */
    private static final Object NONE = new Object();

    /**
     * The caller of the gRPC call being served: present when it presented a certificate the node verified;
     * empty on a plaintext node, and for a TLS client without a certificate (which a token identifies).
     */
    public static Optional<Peer> current() {
        return Optional.ofNullable(KEY.get());
    }

    /** The holder of {@code certificate}. */
    public static Peer of(X509Certificate certificate) {
        String subject = certificate.getSubjectX500Principal().getName(X500Principal.RFC2253);
        String commonName = null;
        boolean node = false;
        try {
            for (Rdn rdn : new LdapName(subject).getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    commonName = String.valueOf(rdn.getValue());
                } else if (rdn.getType().equalsIgnoreCase("OU") && NODE_UNIT.equals(String.valueOf(rdn.getValue()))) {
                    node = true;
                }
            }
        } catch (InvalidNameException e) {
            throw new IllegalStateException("the JDK wrote a subject it cannot read back: " + subject, e);
        }
        return new Peer(subject, commonName, node);
    }

    /** The peer of a TLS session; null when it presented no certificate (or there is no session: plaintext). */
    static Peer of(SSLSession session) {
        if (session == null) {
            return null;
        }
        Object known = session.getValue(IN_SESSION);
        if (known == null) {
            try {
                Certificate[] chain = session.getPeerCertificates();
                known = of((X509Certificate) chain[0]);
            } catch (SSLPeerUnverifiedException noCertificate) {
                known = NONE;
            }
            session.putValue(IN_SESSION, known);
        }
        return known instanceof Peer peer ? peer : null;
    }
}
