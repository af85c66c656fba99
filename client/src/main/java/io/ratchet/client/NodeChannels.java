package io.ratchet.client;

import java.net.InetSocketAddress;
import org.apache.ratis.thirdparty.com.google.common.net.InetAddresses;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;

/** How the client reaches a node's port: every gRPC channel to a node is built here. */
public final class NodeChannels {
    /** Answers carry items of up to 2 MiB each, many to a list page; the same bound Ratis gives its server. */
    static final int MAX_ANSWER_BYTES = 64 << 20;

    private NodeChannels() {
    }

    /**
     * A channel for a few administrative calls (status, membership, backup), on gRPC's shared threads;
     * the caller shuts it down.
     */
    public static ManagedChannel open(String address) {
        return builder(address).usePlaintext().maxInboundMessageSize(MAX_ANSWER_BYTES).build();
    }

    /**
     * An IP address is connected to directly; a host name goes through gRPC's DNS resolver, which looks
     * it up again when the connection is lost, so a node that moves to a new address is found.
     * Skipping the resolver for addresses is also what a short-lived command line wants: no resolver
     * thread, no lookup.
     */
    static NettyChannelBuilder builder(String address) {
        int colon = address.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("'" + address + "' is not host:port");
        }
        String host = address.substring(0, colon);
        int port = Integer.parseInt(address.substring(colon + 1));
        return InetAddresses.isUriInetAddress(host)
                ? NettyChannelBuilder.forAddress(new InetSocketAddress(InetAddresses.forUriString(host), port))
                : NettyChannelBuilder.forAddress(host, port);
    }
}
