package io.ratchet.cli;

import io.ratchet.client.Durations;
import io.ratchet.client.ClientOptions;
import io.ratchet.client.RatchetClient;
import io.ratchet.node.NodeConfig;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import picocli.CommandLine.Option;

/** Options every client command shares: where the cluster is, and whether to print JSON. */
public final class ClientOptionsMixin {
    @Option(names = "--peers", description = "host:port,host:port,... (default: $RATCHET_PEERS, else conf/local-3)")
    String peers;

    @Option(names = "--json", description = "print one JSON object")
    boolean json;

    @Option(names = "--timeout", defaultValue = "15s", description = "give up on the cluster after this long (default ${DEFAULT-VALUE})")
    String timeout;

    RatchetClient connect() {
        Duration total = Durations.parse(timeout);
        ClientOptions options = ClientOptions.parse(resolvePeers());
        Duration perAttempt = total.compareTo(options.requestTimeout()) < 0 ? total : options.requestTimeout();
        return RatchetClient.connect(options.withTimeouts(perAttempt, options.maxAttempts(), total));
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
        return String.join(",", NodeConfig.parsePeers(p.getProperty("peers", "")).values());
    }
}
