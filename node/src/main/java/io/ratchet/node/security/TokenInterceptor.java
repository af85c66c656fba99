package io.ratchet.node.security;

import org.apache.ratis.thirdparty.io.grpc.Context;
import org.apache.ratis.thirdparty.io.grpc.Contexts;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;

/**
 * Takes the bearer token a call carries ({@code authorization: Bearer TOKEN}) into the call's gRPC
 * context, where {@link Authorizer} finds it. It decides nothing: whether a token is needed, and what it
 * allows, depends on the replicated permission table at the moment each message is checked.
 */
public final class TokenInterceptor implements ServerInterceptor {
    static final Context.Key<String> TOKEN = Context.key("ratchet-token");
    private static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private static final String BEARER = "Bearer ";

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        String value = headers.get(AUTHORIZATION);
        if (value == null || !value.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return next.startCall(call, headers);
        }
        return Contexts.interceptCall(Context.current().withValue(TOKEN, value.substring(BEARER.length()).trim()),
                call, headers, next);
    }

    /** The token of the call being served, or null. */
    public static String current() {
        return TOKEN.get();
    }
}
