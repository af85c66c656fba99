package io.ratchet.node.security;

import org.apache.ratis.thirdparty.io.grpc.Context;
import org.apache.ratis.thirdparty.io.grpc.Contexts;
import org.apache.ratis.thirdparty.io.grpc.Grpc;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * On a node with TLS, lets only the cluster's nodes call Ratis' own services, and tells every service who
 * calls. Ratis' services (Raft between the nodes, and Ratis' client and admin protocols: every service not
 * named {@code ratchet.v1.*}) append to the log and change the membership past every check Ratchet's own
 * services make, so they answer only a caller whose verified certificate is a node's ({@link Peer}: it
 * carries {@code OU=ratchet-node}). Ratchet's services ({@code ratchet.v1.FrontEnd}, {@code Admin},
 * {@code Backup}) take any caller the handshake let in, with a client certificate or without: a token says
 * who their callers are. The caller's certificate, when it showed one, is {@link Peer#current()} while the
 * call is served.
 */
final class PeerGate implements ServerInterceptor {
    private static final Logger LOG = LoggerFactory.getLogger(PeerGate.class);
    private static final String RATCHET_SERVICES = "ratchet.v1.";

    private final OncePerAddress refusals = new OncePerAddress();

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        Peer peer = Peer.of(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
        String service = call.getMethodDescriptor().getServiceName();
        if ((service == null || !service.startsWith(RATCHET_SERVICES)) && (peer == null || !peer.node())) {
            Status refusal = peer == null
                    ? Status.UNAUTHENTICATED.withDescription(service + " answers only the cluster's nodes: "
                            + "connect with a node's certificate (OU=" + Peer.NODE_UNIT + ")")
                    : Status.PERMISSION_DENIED.withDescription(service + " answers only the cluster's nodes, and "
                            + peer.subject() + " is not one (no OU=" + Peer.NODE_UNIT + ")");
            var remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
            String why = peer == null ? "no client certificate" : peer.subject() + " is no node";
            if (refusals.first(remote, why)) {
                LOG.warn("refused a call to {} from {}: {} (logged once per address every 10 minutes)",
                        service, OncePerAddress.host(remote), why);
            }
            call.close(refusal, new Metadata());
            return new ServerCall.Listener<>() {
            };
        }
        if (peer == null) {
            return next.startCall(call, headers);
        }
        return Contexts.interceptCall(Context.current().withValue(Peer.KEY, peer), call, headers, next);
    }
}
