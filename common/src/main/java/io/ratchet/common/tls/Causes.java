package io.ratchet.common.tls;

/**
 * Finding what a failed TLS handshake comes to in its chain of causes: Netty and the JDK wrap the reason
 * (an expired certificate, an unknown issuer, a plaintext peer) a few layers deep, and the layers differ
 * between the two sides and the TLS versions.
 */
public final class Causes {
    private Causes() {
    }

    /** The first throwable of {@code type} in {@code t}'s chain of causes, {@code t} included; null if none. */
    public static <T extends Throwable> T find(Throwable t, Class<T> type) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        return null;
    }
}
