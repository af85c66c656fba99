package io.ratchet.common.tls;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * Reads the PEM files TLS is configured with: certificates ({@code -----BEGIN CERTIFICATE-----}, as many as
 * the file holds) and one unencrypted PKCS#8 private key ({@code -----BEGIN PRIVATE KEY-----}, what
 * {@code openssl genpkey} and {@code openssl req -nodes} write). Every failure names the file and what is
 * wrong with it.
 */
public final class Pem {
    private static final String KEY_BEGIN = "-----BEGIN PRIVATE KEY-----";
    private static final String KEY_END = "-----END PRIVATE KEY-----";
    /** The key algorithms a PKCS#8 key is tried as, in turn: the file does not say which it holds. */
    private static final List<String> KEY_ALGORITHMS = List.of("EC", "RSA", "EdDSA", "RSASSA-PSS");
    /** A signature each key algorithm can make, to check a key belongs to its certificate. */
    private static final Map<String, String> PROOF = Map.of("EC", "SHA256withECDSA", "RSA", "SHA256withRSA",
            "EdDSA", "EdDSA", "Ed25519", "Ed25519", "Ed448", "Ed448");

    private Pem() {
    }

    /** The certificates in {@code file}, in their order there (a chain: the holder's own first). */
    public static List<X509Certificate> certificates(Path file) throws IOException, GeneralSecurityException {
        List<X509Certificate> certificates = new ArrayList<>();
        try (InputStream in = Files.newInputStream(file)) {
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                certificates.add((X509Certificate) c);
            }
        } catch (CertificateException e) {
            throw new CertificateException(file + " holds no readable PEM certificate: " + e.getMessage(), e);
        }
        if (certificates.isEmpty()) {
            throw new CertificateException(file + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
        }
        return certificates;
    }

    /** The PKCS#8 private key in {@code file}. */
    public static PrivateKey privateKey(Path file) throws IOException, GeneralSecurityException {
        String text = Files.readString(file, StandardCharsets.US_ASCII);
        int begin = text.indexOf(KEY_BEGIN);
        int end = text.indexOf(KEY_END);
        if (begin < 0 || end < begin) {
            throw new InvalidKeySpecException(file + " holds no unencrypted PKCS#8 key (" + KEY_BEGIN + ")"
                    + (text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") ? ": it is encrypted; write it without a passphrase"
                    : text.contains(" PRIVATE KEY-----") ? ": convert it with 'openssl pkcs8 -topk8 -nocrypt -in " + file + "'" : ""));
        }
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(text.substring(begin + KEY_BEGIN.length(), end));
        } catch (IllegalArgumentException e) {
            throw new InvalidKeySpecException(file + ": the key is not valid base64", e);
        }
        for (String algorithm : KEY_ALGORITHMS) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (InvalidKeySpecException notThisOne) {
                // the next algorithm
            }
        }
        throw new InvalidKeySpecException(file + " holds a key of none of the algorithms " + KEY_ALGORITHMS);
    }

    /**
     * Checks that {@code key} is the private key of {@code certificate}, by signing with one and verifying
     * with the other: a certificate renewed with a new key, read before its new key file was written, is
     * refused here instead of failing every handshake. A key of an algorithm without a known signature
     * (RSASSA-PSS) is not checked.
     */
    public static void requireKeyOf(PrivateKey key, X509Certificate certificate, Path keyFile, Path certFile)
            throws GeneralSecurityException {
        String algorithm = PROOF.get(key.getAlgorithm());
        if (algorithm == null) {
            return;
        }
        byte[] probe = new byte[32];
        new SecureRandom().nextBytes(probe);
        Signature sign = Signature.getInstance(algorithm);
        sign.initSign(key);
        sign.update(probe);
        byte[] signature = sign.sign();
        Signature verify = Signature.getInstance(algorithm);
        boolean matches;
        try {
            verify.initVerify(certificate.getPublicKey());
            verify.update(probe);
            matches = verify.verify(signature);
        } catch (GeneralSecurityException e) {
            matches = false;
        }
        if (!matches) {
            throw new InvalidKeySpecException("the key in " + keyFile + " is not the key of the certificate in " + certFile);
        }
    }

    /**
     * Checks that {@code certificate} is valid now: an expired one (or one not valid yet) would fail every
     * handshake, so it is refused where it is read, naming the file and the date, instead of there.
     */
    public static void requireValidNow(X509Certificate certificate, Path certFile) throws CertificateException {
        Instant now = Instant.now();
        Instant notAfter = certificate.getNotAfter().toInstant();
        Instant notBefore = certificate.getNotBefore().toInstant();
        if (now.isAfter(notAfter)) {
            throw new CertificateExpiredException("the certificate in " + certFile + " expired at " + notAfter
                    + "; renew it");
        }
        if (now.isBefore(notBefore)) {
            throw new CertificateNotYetValidException("the certificate in " + certFile + " is not valid before "
                    + notBefore + " (is this machine's clock right?)");
        }
    }
}
