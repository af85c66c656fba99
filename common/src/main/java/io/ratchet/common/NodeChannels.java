package io.ratchet.common;

import io.ratchet.common.tls.ReloadingKeyManager;
import io.ratchet.common.tls.ReloadingTrustManager;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.ratis.thirdparty.com.google.common.net.InetAddresses;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.netty.GrpcSslContexts;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContextBuilder;

/**
 * How the client reaches a node's port: every gRPC channel to a node is built here, speaking what the
 * {@link Credentials} say: plaintext, or TLS trusting their CA file (showing their client certificate when
 * they have one); and, when they carry a token, sending it with every call
 * ({@code authorization: Bearer TOKEN}).
 */
public final class NodeChannels {
    /** Answers carry items of up to 2 MiB each, many to a list page; the same bound Ratis gives its server. */
    public static final int MAX_ANSWER_BYTES = 64 << 20;
    /**
     * One TLS context for each set of files, shared by every channel that uses them: the files are read
     * once, and again only when they change (the key and trust managers look at most every few seconds).
     */
    private static final Map<List<Path>, SslContext> TLS = new ConcurrentHashMap<>();

    private NodeChannels() {
    }

    /**
     * A channel for a few administrative calls (status, membership, backup), on gRPC's shared threads;
     * the caller shuts it down.
     *
     * @throws IllegalArgumentException when the credentials' TLS files cannot be read or used
     */
    public static ManagedChannel open(String address, Credentials credentials) {
        return builder(address, credentials).maxInboundMessageSize(MAX_ANSWER_BYTES).build();
    }

    /**
     * An IP address is connected to directly; a host name goes through gRPC's DNS resolver, which looks
     * it up again when the connection is lost, so a node that moves to a new address is found.
     * Skipping the resolver for addresses is also what a short-lived command line wants: no resolver
     * thread, no lookup. With TLS the node's certificate must name the host or address given here.
     */
    public static NettyChannelBuilder builder(String address, Credentials credentials) {
        int colon = address.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("'" + address + "' is not host:port");
        }
        String host = address.substring(0, colon);
        int port = Integer.parseInt(address.substring(colon + 1));
        NettyChannelBuilder builder = InetAddresses.isUriInetAddress(host)
                ? NettyChannelBuilder.forAddress(new InetSocketAddress(InetAddresses.forUriString(host), port))
                : NettyChannelBuilder.forAddress(host, port);
        if (credentials.tls()) {
            builder.sslContext(tls(credentials));
        } else {
            builder.usePlaintext();
        }
        if (credentials.token() != null) {
            builder.intercept(new BearerToken(credentials.token()));
        }
        return builder;
    }

    /**
     * Reads the credentials' TLS files now (when they name any), so that a missing or unusable file is
     * reported where a client is made, not by every call it makes.
     *
     * @throws IllegalArgumentException naming the file and what is wrong with it
     */
    public static void requireUsable(Credentials credentials) {
        if (credentials.tls()) {
            tls(credentials);
        }
    }

    private static SslContext tls(Credentials credentials) {
        return TLS.computeIfAbsent(Arrays.asList(credentials.caFile(), credentials.certFile(), credentials.keyFile()), files -> {
            try {
                SslContextBuilder builder = GrpcSslContexts.forClient().trustManager(new ReloadingTrustManager(credentials.caFile()));
                if (credentials.certFile() != null) {
                    builder.keyManager(new ReloadingKeyManager(credentials.certFile(), credentials.keyFile()));
                }
                return builder.build();
            } catch (IOException | GeneralSecurityException e) {
                throw new IllegalArgumentException("cannot use the TLS files: "
                        + (e instanceof NoSuchFileException missing ? "there is no file " + missing.getFile() : e.getMessage()), e);
            }
        });
    }
}
