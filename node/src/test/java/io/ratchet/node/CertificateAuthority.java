package io.ratchet.node;

import io.ratchet.common.Credentials;
import io.ratchet.node.security.TlsFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A certificate authority for tests, in a directory of its own: its CA certificate, and the node and client
 * certificates it issues, made by {@code scripts/certs} (openssl), as {@code scripts/cluster start --tls}
 * makes them.
 */
public final class CertificateAuthority {
    /** Certificates valid until a day before they were issued. */
    private static final Map<String, String> EXPIRED = Map.of("RATCHET_CERT_DAYS", "-1");

    private final Path dir;

    private CertificateAuthority(Path dir) {
        this.dir = dir;
    }

    /** A new CA named {@code name}, in {@code dir/name}. */
    public static CertificateAuthority create(Path dir, String name) {
        CertificateAuthority ca = new CertificateAuthority(dir.resolve(name));
        ca.run("ca", name);
        return ca;
    }

    /** The CA's certificate: what trusts what it issued. */
    public Path certificate() {
        return dir.resolve("ca.pem");
    }

    /** A node's certificate and key ({@code CN=id, OU=ratchet-node}, valid for 127.0.0.1), trusting this CA. */
    public TlsFiles node(String id) {
        run("node", id);
        return new TlsFiles(dir.resolve(id + ".pem"), dir.resolve(id + "-key.pem"), certificate());
    }

    /** A client that shows a certificate of this CA ({@code CN=name}) and trusts this CA. */
    public Credentials client(String name) {
        run("client", name);
        return new Credentials(certificate(), dir.resolve(name + ".pem"), dir.resolve(name + "-key.pem"), null);
    }

    /**
     * As {@link #client(String)}, with a certificate that expired a day ago ({@code scripts/certs} with
     * {@code RATCHET_CERT_DAYS=-1}).
     */
    public Credentials expiredClient(String name) {
        run(EXPIRED, "client", name);
        return new Credentials(certificate(), dir.resolve(name + ".pem"), dir.resolve(name + "-key.pem"), null);
    }

    /** As {@link #node(String)}, with a certificate that expired a day ago. */
    public TlsFiles expiredNode(String id) {
        run(EXPIRED, "node", id);
        return new TlsFiles(dir.resolve(id + ".pem"), dir.resolve(id + "-key.pem"), certificate());
    }

    /** A client without a certificate that trusts this CA. */
    public Credentials trusting() {
        return new Credentials(certificate(), null, null, null);
    }

    private void run(String what, String name) {
        run(Map.of(), what, name);
    }

    private void run(Map<String, String> environment, String what, String name) {
        List<String> command = List.of("bash", script().toString(), what, dir.toString(), name);
        try {
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            builder.environment().putAll(environment);
            Process p = builder.start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.waitFor() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** {@code scripts/certs}, found from the module directory a test runs in. */
    private static Path script() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path script = d.resolve("scripts/certs");
            if (Files.isRegularFile(script)) {
                return script;
            }
        }
        throw new IllegalStateException("scripts/certs not found above " + Path.of("").toAbsolutePath());
    }
}
