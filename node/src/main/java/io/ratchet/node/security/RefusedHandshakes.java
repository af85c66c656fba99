package io.ratchet.node.security;

import io.ratchet.common.Failures;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import javax.net.ssl.SSLException;
import org.apache.ratis.thirdparty.io.grpc.netty.GrpcHttp2ConnectionHandler;
import org.apache.ratis.thirdparty.io.grpc.netty.InternalProtocolNegotiator;
import org.apache.ratis.thirdparty.io.grpc.netty.InternalProtocolNegotiators;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelDuplexHandler;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelHandler;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelHandlerContext;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.NotSslRecordException;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;
import org.apache.ratis.thirdparty.io.netty.util.AsciiString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node port's TLS, as gRPC's own server negotiation does it, and a log line for each refused handshake:
 * a plaintext client, a client certificate the CA did not issue. gRPC itself closes such a connection
 * and tells only its own debug log, without the address; here each remote address is named, once every
 * ten minutes ({@link OncePerAddress}), in one line without a stack trace.
 *
 * <p>Why a negotiator: it is the one place where a connection's remote address and its handshake's
 * failure meet. The failure travels the connection's pipeline as an exception from the negotiation
 * handlers to gRPC's handler after them, which closes the connection; the watch sits between the two.
 * It is gRPC's {@code Internal} API, public but without a promise of stability: a gRPC upgrade that
 * changes it shows in the TLS cluster tests.
 */
final class RefusedHandshakes implements InternalProtocolNegotiator.ProtocolNegotiator {
    private static final Logger LOG = LoggerFactory.getLogger(RefusedHandshakes.class);

    private final InternalProtocolNegotiator.ProtocolNegotiator tls;
    private final OncePerAddress refusals = new OncePerAddress();

    RefusedHandshakes(SslContext context) {
        this.tls = InternalProtocolNegotiators.serverTls(context);
    }

    @Override
    public AsciiString scheme() {
        return tls.scheme();
    }

    @Override
    public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpc) {
        return new Watch(tls.newHandler(grpc));
    }

    @Override
    public void close() {
        tls.close();
    }

    /** One connection's: puts the TLS negotiation before itself, and passes everything on. */
    private final class Watch extends ChannelDuplexHandler {
        private final ChannelHandler negotiation;
        private boolean refused;

        Watch(ChannelHandler negotiation) {
            this.negotiation = negotiation;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            ctx.pipeline().addBefore(ctx.name(), null, negotiation);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            Refusal refusal = refusal(cause);
            // A failed handshake arrives twice (as the decoder's error and as the handshake's outcome).
            if (refusal != null && !refused) {
                refused = true;
                if (refusals.first(ctx.channel().remoteAddress(), refusal.kind())) {
                    LOG.warn("refused a connection from {}: {} (logged once per address every 10 minutes)",
                            OncePerAddress.host(ctx.channel().remoteAddress()), refusal.why());
                }
            }
            ctx.fireExceptionCaught(cause);
        }
    }

    /** Why a handshake was refused, in words, and the kind of reason, which the log is limited by. */
    private record Refusal(String kind, String why) {
    }

    /**
     * Why a handshake was refused, or null when {@code cause} is no refusal (a client that went away
     * before its handshake, as a port probe does, is none).
     */
    private static Refusal refusal(Throwable cause) {
        // An expiry lies deepest, under the validator's "validity check failed": looked for first.
        CertificateExpiredException expired = Failures.find(cause, CertificateExpiredException.class);
        if (expired != null) {
            return new Refusal("expired", "its certificate expired (" + expired.getMessage() + ")");
        }
        if (Failures.find(cause, NotSslRecordException.class) != null) {
            return new Refusal("plaintext", "a plaintext connection (this port speaks only TLS)");
        }
        CertificateException refused = Failures.find(cause, CertificateException.class);
        if (refused != null) {
            return new Refusal("certificate", "its certificate is not trusted: " + refused.getMessage());
        }
        SSLException tls = Failures.find(cause, SSLException.class);
        return tls == null ? null : new Refusal("handshake", "the TLS handshake failed (often: the client does not trust "
                + "this node's certificate): " + tls.getMessage());
    }
}
