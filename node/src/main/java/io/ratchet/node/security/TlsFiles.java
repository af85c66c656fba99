package io.ratchet.node.security;

import io.ratchet.common.Credentials;
import java.nio.file.Path;
import java.util.Objects;

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
    public TlsFiles {
        Objects.requireNonNull(cert, "cert");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(ca, "ca");
    }

    /** The node as a client of its own cluster: its own certificate, trusting its CA. */
    public Credentials clientCredentials() {
        return new Credentials(ca, cert, key, null);
    }
}
