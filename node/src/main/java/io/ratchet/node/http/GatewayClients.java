package io.ratchet.node.http;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.RatchetClient;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The HTTP gateway's clients of its own cluster: one without a token, and one per token callers present
 * ({@code Authorization: Bearer TOKEN}), so an HTTP request is checked by the same rules, on the same
 * leader, as the caller's own gRPC client would be: the gateway holds no rights of its own. Each token's
 * client has its own session (exactly-once per user). The least recently used beyond {@link #MAX} are
 * closed; a request still on one then fails as unavailable (503), and its caller may resend.
 */
public final class GatewayClients implements AutoCloseable {
    static final int MAX = 64;

    private final ClientOptions options;
    private final RatchetClient anonymous;
    private final Map<String, RatchetClient> byToken = new LinkedHashMap<>(16, 0.75f, true);
    private boolean closed;

    public GatewayClients(ClientOptions options) {
        this.options = options;
        this.anonymous = RatchetClient.connect(options);
    }

    /** The client for {@code token}; the anonymous one for null. */
    RatchetClient of(String token) {
        if (token == null) {
            return anonymous;
        }
        RatchetClient evicted = null;
        RatchetClient client;
        synchronized (byToken) {
            if (closed) {
                return anonymous;
            }
            client = byToken.get(token);
            if (client == null) {
                client = RatchetClient.connect(options.withCredentials(options.credentials().withToken(token)));
                byToken.put(token, client);
                if (byToken.size() > MAX) {
                    var eldest = byToken.entrySet().iterator().next();
                    evicted = eldest.getValue();
                    byToken.remove(eldest.getKey());
                }
            }
        }
        if (evicted != null) {
            evicted.close();
        }
        return client;
    }

    @Override
    public void close() {
        synchronized (byToken) {
            closed = true;
            byToken.values().forEach(RatchetClient::close);
            byToken.clear();
        }
        anonymous.close();
    }
}
