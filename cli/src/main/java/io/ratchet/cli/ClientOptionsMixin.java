package io.ratchet.cli;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.Credentials;
import io.ratchet.client.Durations;
import io.ratchet.client.RatchetClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * Options every command shares: where the cluster is, how to connect to it (TLS, a client certificate, a
 * token), how long to try, and whether to print JSON. They are declared once, on {@code ratchet} itself,
 * and inherited by every subcommand, so they are taken before the command or after it
 * ({@code ratchet --json get k} and {@code ratchet get k --json}), as etcdctl's global flags are. Each
 * connection option falls back to an environment variable; {@code scripts/ratchet} sets those of the local
 * cluster {@code scripts/cluster} started.
 */
public final class ClientOptionsMixin {
    @Option(names = "--peers", scope = ScopeType.INHERIT, description = "host:port,host:port,... (default: $RATCHET_PEERS, else conf/local-3)")
    String peers;

    @Option(names = "--json", scope = ScopeType.INHERIT, description = "print one JSON object")
    boolean json;

    @Option(names = "--timeout", defaultValue = "15s", scope = ScopeType.INHERIT, description = "give up on the cluster after this long (default ${DEFAULT-VALUE})")
    String timeout;

    @Option(names = "--ca", paramLabel = "FILE", scope = ScopeType.INHERIT,
            description = "connect with TLS, trusting the CA certificates in FILE (PEM) (default: $RATCHET_CA)")
    Path ca;

    @Option(names = "--cert", paramLabel = "FILE", scope = ScopeType.INHERIT,
            description = "show this client certificate (PEM; needs --ca and --key) (default: $RATCHET_CERT)")
    Path cert;

    @Option(names = "--key", paramLabel = "FILE", scope = ScopeType.INHERIT,
            description = "the client certificate's private key (PKCS#8 PEM) (default: $RATCHET_KEY)")
    Path key;

    @Option(names = "--token", paramLabel = "TOKEN", scope = ScopeType.INHERIT,
            description = "the user's token (default: $RATCHET_TOKEN, which is better: other users see a command "
                    + "line in ps)")
    String token;

    RatchetClient connect() {
        return RatchetClient.connect(options());
    }

    /**
     * The client options the global flags say: the peers, the credentials, and the timeouts
     * {@code --timeout} bounds.
     */
    ClientOptions options() {
        Duration total = Durations.parse(timeout);
        ClientOptions options = ClientOptions.parse(resolvePeers()).withCredentials(credentials());
        Duration perAttempt = total.compareTo(options.requestTimeout()) < 0 ? total : options.requestTimeout();
        return options.withTimeouts(perAttempt, options.maxAttempts(), total);
    }

    /** The TLS files and token the flags (else the environment) name; {@link Credentials#NONE} for none. */
    Credentials credentials() {
        return new Credentials(ca != null ? ca : envPath("RATCHET_CA"), cert != null ? cert : envPath("RATCHET_CERT"),
                key != null ? key : envPath("RATCHET_KEY"), token != null ? token : env("RATCHET_TOKEN"));
    }

    private static String env(String name) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? null : value;
    }

    private static Path envPath(String name) {
        String value = env(name);
        return value == null ? null : Path.of(value);
    }

    /** How long a node has to accept a connection, and to answer the protocol probe, before the command decides. */
    private static final int CONNECT_PROBE_MILLIS = 1000;

    /** What a connection to a node's port found. */
    private enum Reach { NOTHING, LISTENING, TLS_ONLY }

    /**
     * Fails at once, naming the addresses, when no node accepts a connection: a command would
     * otherwise retry for its whole --timeout against a cluster that is not running. A node that
     * accepts but cannot serve yet (starting, electing) is left to the client's retries. Without a CA
     * file it also fails at once when the node speaks only TLS, and says to give one.
     */
    void requireSomeNodeListening() {
        List<String> addresses = List.copyOf(ClientOptions.parse(resolvePeers()).peers().values());
        boolean plaintext = !credentials().tls();
        // The common case, a running cluster, costs one local connect and no thread.
        Reach first = reach(addresses.get(0), plaintext);
        if (first == Reach.TLS_ONLY) {
            throw tlsOnly(addresses.get(0));
        }
        if (first == Reach.LISTENING) {
            return;
        }
        List<CompletableFuture<Reach>> probes = addresses.stream().skip(1)
                .map(a -> CompletableFuture.supplyAsync(() -> reach(a, plaintext)))
                .toList();
        for (int i = 0; i < probes.size(); i++) {
            Reach r = probes.get(i).join();
            if (r == Reach.TLS_ONLY) {
                throw tlsOnly(addresses.get(i + 1));
            }
            if (r == Reach.LISTENING) {
                return;
            }
        }
        throw new ClusterUnavailableException("no node accepts connections at " + String.join(", ", addresses)
                + ": is the cluster running? Start a local one with scripts/cluster start, or name yours with"
                + " --peers or RATCHET_PEERS", null);
    }

    private static ClusterUnavailableException tlsOnly(String address) {
        return new ClusterUnavailableException("the node at " + address + " speaks only TLS: give the CA that "
                + "issued its certificate with --ca FILE (or RATCHET_CA)", null);
    }

    /**
     * The client's connection preface (RFC 9113, 3.4) and an empty SETTINGS frame: a node in plaintext
     * answers with its own SETTINGS frame, one that speaks only TLS takes the bytes for a broken handshake
     * and closes the connection.
     */
    private static final byte[] HTTP2_PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0\0\0"
            .getBytes(StandardCharsets.ISO_8859_1);
    private static final int TLS_ALERT_RECORD = 0x15;

    /**
     * Connects to {@code address}; with {@code sniff}, also tells whether the node there speaks only TLS.
     * An answer the probe cannot read (none in time) counts as listening: the client's retries decide then.
     */
    private static Reach reach(String address, boolean sniff) {
        int colon = address.lastIndexOf(':');
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1))),
                    CONNECT_PROBE_MILLIS);
            if (!sniff) {
                return Reach.LISTENING;
            }
            try {
                socket.setSoTimeout(CONNECT_PROBE_MILLIS);
                socket.getOutputStream().write(HTTP2_PREFACE);
                int first = socket.getInputStream().read();
                return first == -1 || first == TLS_ALERT_RECORD ? Reach.TLS_ONLY : Reach.LISTENING;
            } catch (IOException unknown) {
                return Reach.LISTENING;
            }
        } catch (IOException | RuntimeException e) {
            return Reach.NOTHING;
        }
    }

    String resolvePeers() {
        if (peers != null && !peers.isBlank()) {
            return peers;
        }
        String env = System.getenv("RATCHET_PEERS");
        if (env != null && !env.isBlank()) {
            return env;
        }
        String home = System.getenv().getOrDefault("RATCHET_HOME", ".");
        Path conf = Path.of(home, "conf", "local-3", "n1.properties");
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(conf)) {
            p.load(in);
        } catch (IOException e) {
            throw new IllegalArgumentException("no peers given: use --peers or RATCHET_PEERS (" + conf + " is not readable)");
        }
        return p.getProperty("peers", "");
    }
}
