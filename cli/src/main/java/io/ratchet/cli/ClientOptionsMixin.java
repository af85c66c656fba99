package io.ratchet.cli;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.common.Credentials;
import io.ratchet.common.Durations;
import io.ratchet.client.RatchetClient;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
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
    @Option(names = "--peers", scope = ScopeType.INHERIT,
            description = "host:port,host:port,... (default: $RATCHET_PEERS, else the node configuration: see --conf)")
    String peers;

    @Option(names = "--conf", paramLabel = "FILE", scope = ScopeType.INHERIT,
            description = "take the peers, and the CA (tls.ca), from a node's configuration file (default: $RATCHET_CONF, "
                    + "else $RATCHET_HOME/conf/ratchet.conf, else $RATCHET_HOME/conf/local-3/n1.properties)")
    Path conf;

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

    /**
     * The TLS files and token the flags (else the environment) name; {@link Credentials#NONE} for none. With
     * no CA named, a cluster found through a node's configuration is trusted as that node trusts its peers.
     */
    Credentials credentials() {
        Path caFile = ca != null ? ca : envPath("RATCHET_CA");
        if (caFile == null) {
            NodeConfigFile node = nodeConfig();
            caFile = node == null ? null : node.ca();
        }
        return new Credentials(caFile, cert != null ? cert : envPath("RATCHET_CERT"),
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
                + ": is the cluster running? Name yours with --peers or --conf (or RATCHET_PEERS, RATCHET_CONF); in"
                + " the repository, scripts/cluster start starts a local one", null);
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

    /** The peers a command talks to: an address list, or the peers line of {@link #nodeConfig()}. */
    String resolvePeers() {
        NodeConfigFile node = nodeConfig();
        if (node != null) {
            return node.peers();
        }
        return peers != null && !peers.isBlank() ? peers : env("RATCHET_PEERS");
    }

    /**
     * The node configuration the cluster is taken from, or null when an address list names it. A flag wins
     * over the environment, and at each level an address list over a file: {@code --peers}, {@code --conf},
     * {@code RATCHET_PEERS}, {@code RATCHET_CONF}; else the first of the release's {@code conf/ratchet.conf}
     * and the repository's {@code conf/local-3/n1.properties} under {@code RATCHET_HOME} (which both
     * launchers set) that exists.
     */
    NodeConfigFile nodeConfig() {
        boolean listed = peers != null && !peers.isBlank();
        if (listed && conf != null) {
            throw new IllegalArgumentException("--peers and --conf both name the cluster: give one of them");
        }
        if (listed) {
            return null;
        }
        if (conf != null) {
            return NodeConfigFile.read(conf);
        }
        if (env("RATCHET_PEERS") != null) {
            return null;
        }
        Path named = envPath("RATCHET_CONF");
        if (named != null) {
            return NodeConfigFile.read(named);
        }
        Path home = Path.of(System.getenv().getOrDefault("RATCHET_HOME", "."));
        List<Path> defaults = List.of(home.resolve("conf/ratchet.conf"), home.resolve("conf/local-3/n1.properties"));
        return defaults.stream().filter(Files::isRegularFile).findFirst().map(NodeConfigFile::read)
                .orElseThrow(() -> new IllegalArgumentException("no peers given: use --peers, --conf FILE, RATCHET_PEERS "
                        + "or RATCHET_CONF (neither " + defaults.get(0) + " nor " + defaults.get(1) + " is there)"));
    }
}
