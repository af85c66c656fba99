package io.ratchet.cli;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.Durations;
import io.ratchet.client.RatchetClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * Options every command shares: where the cluster is, how long to try, and whether to print JSON. They
 * are declared once, on {@code ratchet} itself, and inherited by every subcommand, so they are taken
 * before the command or after it ({@code ratchet --json get k} and {@code ratchet get k --json}), as
 * etcdctl's global flags are.
 */
public final class ClientOptionsMixin {
    @Option(names = "--peers", scope = ScopeType.INHERIT, description = "host:port,host:port,... (default: $RATCHET_PEERS, else conf/local-3)")
    String peers;

    @Option(names = "--json", scope = ScopeType.INHERIT, description = "print one JSON object")
    boolean json;

    @Option(names = "--timeout", defaultValue = "15s", scope = ScopeType.INHERIT, description = "give up on the cluster after this long (default ${DEFAULT-VALUE})")
    String timeout;

    RatchetClient connect() {
        return RatchetClient.connect(options());
    }

    /** The client options the global flags say: the peers, and the timeouts {@code --timeout} bounds. */
    ClientOptions options() {
        Duration total = Durations.parse(timeout);
        ClientOptions options = ClientOptions.parse(resolvePeers());
        Duration perAttempt = total.compareTo(options.requestTimeout()) < 0 ? total : options.requestTimeout();
        return options.withTimeouts(perAttempt, options.maxAttempts(), total);
    }

    /** How long a node has to accept a connection before the command says no cluster is there. */
    private static final int CONNECT_PROBE_MILLIS = 1000;

    /**
     * Fails at once, naming the addresses, when no node accepts a connection: a command would
     * otherwise retry for its whole --timeout against a cluster that is not running. A node that
     * accepts but cannot serve yet (starting, electing) is left to the client's retries.
     */
    void requireSomeNodeListening() {
        List<String> addresses = List.copyOf(ClientOptions.parse(resolvePeers()).peers().values());
        // The common case, a running cluster, costs one local connect and no thread.
        if (accepts(addresses.get(0))) {
            return;
        }
        List<CompletableFuture<Boolean>> probes = addresses.stream().skip(1)
                .map(a -> CompletableFuture.supplyAsync(() -> accepts(a)))
                .toList();
        if (probes.stream().noneMatch(CompletableFuture::join)) {
            throw new ClusterUnavailableException("no node accepts connections at " + String.join(", ", addresses)
                    + ": is the cluster running? Start a local one with scripts/cluster start, or name yours with"
                    + " --peers or RATCHET_PEERS", null);
        }
    }

    private static boolean accepts(String address) {
        int colon = address.lastIndexOf(':');
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1))),
                    CONNECT_PROBE_MILLIS);
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
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
