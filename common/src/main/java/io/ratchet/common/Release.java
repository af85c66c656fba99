package io.ratchet.common;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The release this code was built as: the project version the build writes into
 * {@code io/ratchet/common/release.properties}. The node, the command line and the client share it, so
 * {@code ratchet --version}, {@code ratchet-node --version} and a node's first log line name one version
 * and no source file has to be edited to change it.
 */
public final class Release {
    private static final String VERSION = read();

    private Release() {
    }

    /** The project version, e.g. {@code 0.1.0}; {@code unknown} for classes not built by Maven (an IDE's). */
    public static String version() {
        return VERSION;
    }

    private static String read() {
        try (InputStream in = Release.class.getResourceAsStream("release.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            String version = p.getProperty("version", "");
            // Unfiltered, the file still holds the placeholder.
            return version.isBlank() || version.startsWith("${") ? "unknown" : version.trim();
        } catch (IOException e) {
            throw new UncheckedIOException("reading this release's version", e);
        }
    }
}
