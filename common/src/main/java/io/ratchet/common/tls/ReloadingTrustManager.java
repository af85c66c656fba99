package io.ratchet.common.tls;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Trusts the certificates a PEM file of CA certificates issued, and only those, read again when the file
 * changes (looked at, on use, at most once per {@code checkEvery}): adding a new CA to the file before
 * renewing certificates from it rolls the CA over without a restart. The checks themselves (chain, expiry,
 * and, on a client, the host name against the certificate's names) are the JDK's PKIX trust manager's.
 */
public final class ReloadingTrustManager extends X509ExtendedTrustManager {
    private final Reloading<X509ExtendedTrustManager> trust;

    /** Looks for a renewed file at most every five seconds. */
    public ReloadingTrustManager(Path caFile) throws IOException, GeneralSecurityException {
        this(caFile, Duration.ofSeconds(5));
    }

    public ReloadingTrustManager(Path caFile, Duration checkEvery) throws IOException, GeneralSecurityException {
        this.trust = new Reloading<>("TLS CA certificates", List.of(caFile), checkEvery, () -> read(caFile));
    }

    private static X509ExtendedTrustManager read(Path caFile) throws IOException, GeneralSecurityException {
        List<X509Certificate> authorities = Pem.certificates(caFile);
        KeyStore store = KeyStore.getInstance("JKS");
        store.load(null, null);
        for (int i = 0; i < authorities.size(); i++) {
            store.setCertificateEntry("ca-" + i, authorities.get(i));
        }
        TrustManagerFactory factory = TrustManagerFactory.getInstance("PKIX");
        factory.init(store);
        return (X509ExtendedTrustManager) factory.getTrustManagers()[0];
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        trust.get().checkClientTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        trust.get().checkClientTrusted(chain, authType, socket);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        trust.get().checkClientTrusted(chain, authType, engine);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        trust.get().checkServerTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        trust.get().checkServerTrusted(chain, authType, socket);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        trust.get().checkServerTrusted(chain, authType, engine);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return trust.get().getAcceptedIssuers();
    }
}
