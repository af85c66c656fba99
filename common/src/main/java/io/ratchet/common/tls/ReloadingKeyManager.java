package io.ratchet.common.tls;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * The certificate chain and private key a TLS endpoint shows, from a PEM certificate file and a PKCS#8 key
 * file, read again when either changes (looked at, on use, at most once per {@code checkEvery}). The key
 * must be the certificate's: a pair that does not match is refused at start, and when renewed files do not
 * match yet (one written before the other), the pair in use stays until they do. So does it when the
 * certificate is not valid now: an expired certificate is refused at start, and a renewal that is expired
 * (or not valid yet) does not replace a pair that works.
 *
 * <p>As a client it always shows its certificate, whichever CAs the server says it accepts: a certificate
 * the server does not trust then fails the handshake, with an error that says so, rather than being left
 * out and the connection made as nobody. Whether the key suits the handshake's key types is decided by
 * the JDK's own key manager over the pair. Each reading has its own alias, and the last two readings are kept, so a handshake that chose
 * an alias just before a renewal still gets that reading's chain and key, never a chain with another key.
 */
public final class ReloadingKeyManager extends X509ExtendedKeyManager {
    /** Protects the key only inside the in-memory key store the JDK's key manager reads; never written anywhere. */
    private static final char[] IN_MEMORY = "in-memory".toCharArray();
    private static final AtomicLong READINGS = new AtomicLong();

    /** One reading of the files: the JDK's key manager over it, under its own alias. */
    private record Pair(String alias, X509ExtendedKeyManager keys, X509Certificate certificate) {
    }

    private final Reloading<Pair> pair;

    /** Looks for renewed files at most every five seconds. */
    public ReloadingKeyManager(Path certFile, Path keyFile) throws IOException, GeneralSecurityException {
        this(certFile, keyFile, Duration.ofSeconds(5));
    }

    public ReloadingKeyManager(Path certFile, Path keyFile, Duration checkEvery) throws IOException, GeneralSecurityException {
        this.pair = new Reloading<>("TLS certificate and key", List.of(certFile, keyFile), checkEvery,
                () -> read(certFile, keyFile));
    }

    private static Pair read(Path certFile, Path keyFile) throws IOException, GeneralSecurityException {
        List<X509Certificate> chain = Pem.certificates(certFile);
        PrivateKey key = Pem.privateKey(keyFile);
        Pem.requireKeyOf(key, chain.get(0), keyFile, certFile);
        Pem.requireValidNow(chain.get(0), certFile);
        String alias = "ratchet-" + READINGS.incrementAndGet();
        // JKS: the key's protection in a PKCS#12 store is a slow key derivation, paid at every reading for
        // a store that never leaves memory.
        KeyStore store = KeyStore.getInstance("JKS");
        store.load(null, null);
        store.setKeyEntry(alias, key, IN_MEMORY, chain.toArray(new X509Certificate[0]));
        KeyManagerFactory factory = KeyManagerFactory.getInstance("SunX509");
        factory.init(store, IN_MEMORY);
        return new Pair(alias, (X509ExtendedKeyManager) factory.getKeyManagers()[0], chain.get(0));
    }

    /** The certificate in use now (the holder's own, first of its chain). */
    public X509Certificate certificate() {
        return pair.get().certificate();
    }

    private X509ExtendedKeyManager keys() {
        return pair.get().keys();
    }

    /** The reading {@code alias} was chosen from: the current one, or the one just before it. */
    private X509ExtendedKeyManager keysOf(String alias) {
        Pair now = pair.get();
        Pair before = pair.previous();
        return before != null && before.alias().equals(alias) ? before.keys() : now.keys();
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
        return keys().getClientAliases(keyType, null);
    }

    @Override
    public String chooseClientAlias(String[] keyTypes, Principal[] issuers, Socket socket) {
        return keys().chooseClientAlias(keyTypes, null, socket);
    }

    @Override
    public String chooseEngineClientAlias(String[] keyTypes, Principal[] issuers, SSLEngine engine) {
        return keys().chooseEngineClientAlias(keyTypes, null, engine);
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
        return keys().getServerAliases(keyType, issuers);
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        return keys().chooseServerAlias(keyType, issuers, socket);
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
        return keys().chooseEngineServerAlias(keyType, issuers, engine);
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
        return keysOf(alias).getCertificateChain(alias);
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
        return keysOf(alias).getPrivateKey(alias);
    }
}
