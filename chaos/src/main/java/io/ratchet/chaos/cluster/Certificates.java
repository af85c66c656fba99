package io.ratchet.chaos.cluster;

import io.ratchet.common.Credentials;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The TLS files of a run's cluster: a CA of its own and one certificate per node slot (spares too), made
 * by {@code scripts/certs} (openssl), the script {@code scripts/cluster start --tls} and the node tests use,
 * so the harness's certificates are the ones an operator is told to make. Each node's certificate names
 * the address it serves at, which a connecting node or client checks.
 */
public final class Certificates {
    /** Relative to the working directory, which {@code scripts/chaos} makes the repository's root. */
    private static final Path SCRIPT = Path.of("scripts", "certs");

    private final Path dir;

    private Certificates(Path dir) {
        this.dir = dir;
    }

    /**
     * Makes a CA in {@code dir} and a node certificate for each {@code id -> host} ({@code n1.pem},
     * {@code n1-key.pem}).
     */
    static Certificates make(Path dir, Map<String, String> hosts) throws IOException {
        if (!Files.isExecutable(SCRIPT)) {
            throw new IOException("no " + SCRIPT + " in " + Path.of("").toAbsolutePath()
                    + ": run the harness from the repository's root (scripts/chaos does)");
        }
        Path abs = dir.toAbsolutePath();
        Shell.run(SCRIPT.toString(), "ca", abs.toString(), "Ratchet chaos CA");
        for (Map.Entry<String, String> node : hosts.entrySet()) {
            Shell.run(SCRIPT.toString(), "node", abs.toString(), node.getKey(), node.getValue());
        }
        return new Certificates(abs);
    }

    public Path ca() {
        return dir.resolve("ca.pem");
    }

    /** The {@code tls.*} lines of node {@code id}'s configuration. */
    List<String> nodeConfig(String id) {
        return List.of("tls.cert=" + dir.resolve(id + ".pem"), "tls.key=" + dir.resolve(id + "-key.pem"), "tls.ca=" + ca());
    }

    /** What a client shows: trust in the CA, no certificate of its own (a token says who it is). */
    public Credentials clientCredentials() {
        return new Credentials(ca(), null, null, null);
    }
}
