package io.ratchet.client.internal;

import io.ratchet.common.Credentials;
import io.ratchet.common.Failures;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import javax.net.ssl.SSLException;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.NotSslRecordException;

/** What a failed TLS handshake with a node means, said so that the reader knows what to change. */
public final class TlsFailures {
    private TlsFailures() {
    }

    public static String describe(SSLException failure, Credentials credentials) {
        if (failure instanceof NotSslRecordException) {
            return "the node does not speak TLS (its port is plaintext): connect without a CA file";
        }
        CertificateExpiredException expired = Failures.find(failure, CertificateExpiredException.class);
        if (expired != null) {
            return "the node's certificate expired (" + expired.getMessage() + "): the node needs a renewed one";
        }
        // What this client's trust manager refused: the node's certificate (its issuer, its dates, or the
        // names it holds against the address connected to).
        CertificateException refused = Failures.find(failure, CertificateException.class);
        if (refused != null) {
            return "the node's certificate is not trusted with the CA file " + credentials.caFile() + ": "
                    + refused.getMessage();
        }
        return "the node refused the TLS handshake (" + failure.getMessage() + ")"
                + (credentials.certFile() == null ? "" : "; is the client certificate " + credentials.certFile()
                + " issued by the cluster's CA, and valid now?");
    }
}
