package io.ratchet.node.security;

import javax.net.ssl.SSLException;
import org.eclipse.jetty.io.ssl.SslHandshakeListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs each handshake the HTTPS port refuses (a plaintext request, a client that does not trust the
 * node's certificate), once per remote address every ten minutes ({@link OncePerAddress}), in one line:
 * Jetty tells only its debug log.
 */
final class RefusedHttpsHandshakes implements SslHandshakeListener {
    private static final Logger LOG = LoggerFactory.getLogger(RefusedHttpsHandshakes.class);

    private final OncePerAddress refusals = new OncePerAddress();

    @Override
    public void handshakeFailed(Event event, Throwable failure) {
        // A client that leaves before its handshake (a port probe) fails it with no TLS error: no refusal.
        if (failure instanceof SSLException && refusals.first(event.getEndPoint().getRemoteSocketAddress(), "https")) {
            LOG.warn("refused an HTTPS connection from {}: the TLS handshake failed: {} (a plaintext request, or a "
                    + "client that does not trust this node's certificate; logged once per address every 10 minutes)",
                    OncePerAddress.host(event.getEndPoint().getRemoteSocketAddress()), failure.getMessage());
        }
    }
}
