package io.ratchet.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * What a command takes from a node's configuration file ({@code --conf}, {@code RATCHET_CONF}, or the
 * release's {@code conf/ratchet.conf}): the cluster's {@code peers}, and the CA the nodes' certificates
 * come from ({@code tls.ca}), so that a command run on a node's machine reaches its cluster as the node
 * does, with no address list or CA of its own. The node's own certificate is not shown: a client needs
 * none, and the node's identifies a node, not a user.
 *
 * @param file  the file read
 * @param peers the {@code peers} line, {@code id=host:port,...} (clients take that form)
 * @param ca    {@code tls.ca}, resolved against the working directory as the node resolves it; null
 *              when the cluster is plaintext
 */
record NodeConfigFile(Path file, String peers, Path ca) {

    /** Reads {@code file}; a file that is missing, unreadable or has no peers is an invalid command line. */
    static NodeConfigFile read(Path file) {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            p.load(in);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the node configuration " + file + " (" + e + ")");
        }
        String peers = p.getProperty("peers", "").trim();
        if (peers.isEmpty()) {
            throw new IllegalArgumentException(file + " has no peers= line: is it a node's configuration?");
        }
        String ca = p.getProperty("tls.ca", "").trim();
        return new NodeConfigFile(file, peers, ca.isEmpty() ? null : Path.of(ca).toAbsolutePath().normalize());
    }
}
