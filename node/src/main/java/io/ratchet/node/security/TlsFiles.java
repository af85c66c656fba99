package io.ratchet.node.security;

import io.ratchet.client.Credentials;
import java.nio.file.Path;
import java.util.Objects;
import org.apache.ratis.conf.RaftProperties;

/**
 * The PEM files a node's TLS is configured with ({@code tls.cert}, {@code tls.key}, {@code tls.ca}).
 *
 * @param cert the node's certificate chain, its own certificate first; its subject carries
 *             {@code OU=ratchet-node} (see {@link Peer}), its names the host or address of the node's
 *             {@code peers} entry
 * @param key  the certificate's private key, PKCS#8, unencrypted
 * @param ca   the CA certificates the node trusts for its peers' and its clients' certificates
 */
public record TlsFiles(Path cert, Path key, Path ca) {
    private static final String CERT = "ratchet.tls.cert";
    private static final String KEY = "ratchet.tls.key";
    private static final String CA = "ratchet.tls.ca";

    public TlsFiles {
        Objects.requireNonNull(cert, "cert");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(ca, "ca");
    }

    /** The node as a client of its own cluster: its own certificate, trusting its CA. */
    public Credentials clientCredentials() {
        return new Credentials(ca, cert, key, null);
    }

    /**
     * Keeps the files in the node's Ratis properties, which Ratis ignores: code that holds only the Ratis
     * server finds them there ({@link #clientCredentials(RaftProperties)}).
     */
    public void into(RaftProperties properties) {
        properties.set(CERT, cert.toString());
        properties.set(KEY, key.toString());
        properties.set(CA, ca.toString());
    }

    /**
     * What the node whose Ratis properties these are shows as a client of its cluster (a leader asking a
     * node that waits to join for its status): its certificate with TLS, plaintext without.
     */
    public static Credentials clientCredentials(RaftProperties properties) {
        String cert = properties.get(CERT);
        return cert == null ? Credentials.NONE
                : new TlsFiles(Path.of(cert), Path.of(properties.get(KEY)), Path.of(properties.get(CA))).clientCredentials();
    }
}
