package io.ratchet.common;

import java.nio.file.Path;

/**
 * What a client shows a cluster that runs with TLS and authentication (see docs/DEPLOYING.md, "Security").
 *
 * @param caFile   PEM certificates the client trusts for the nodes' TLS certificates; null for plaintext
 * @param certFile the client's own certificate chain (PEM), for mutual TLS; null for none
 * @param keyFile  the private key of {@code certFile} (PEM, PKCS#8); null when there is no certificate
 * @param token    the bearer token that names the user on a cluster with authentication on; null for none
 */
public record Credentials(Path caFile, Path certFile, Path keyFile, String token) {
    /** Plaintext, no user: a cluster without TLS or authentication. */
    public static final Credentials NONE = new Credentials(null, null, null, null);

    public Credentials {
        if ((certFile == null) != (keyFile == null)) {
            throw new IllegalArgumentException("a client certificate and its key go together");
        }
        if (certFile != null && caFile == null) {
            throw new IllegalArgumentException("a client certificate needs TLS: give the CA file too");
        }
        if (token != null && token.isBlank()) {
            throw new IllegalArgumentException("a token must not be blank");
        }
    }

    /** Whether connections use TLS. */
    public boolean tls() {
        return caFile != null;
    }

    public Credentials withToken(String token) {
        return new Credentials(caFile, certFile, keyFile, token);
    }

    /** Hides the token: options are printed in logs and errors. */
    @Override
    public String toString() {
        return "Credentials[ca=" + caFile + ", cert=" + certFile + ", token=" + (token == null ? "none" : "***") + "]";
    }
}
