package io.ratchet.common;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Reading a failure's chain of causes: the layers futures wrap around it, its innermost cause, a cause of
 * one kind (Netty and the JDK wrap the reason a TLS handshake failed a few layers deep).
 */
public final class Failures {
    private Failures() {
    }

    /**
     * {@code failure} without the {@link CompletionException} and {@link ExecutionException} layers futures
     * wrap around it (a layer without a cause is kept); null for null.
     */
    public static Throwable unwrap(Throwable failure) {
        Throwable t = failure;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** The innermost cause of {@code failure}: {@code failure} itself when it has none. */
    public static Throwable rootCause(Throwable failure) {
        Throwable t = failure;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t;
    }

    /** The first throwable of {@code type} in {@code failure}'s chain of causes, {@code failure} included; null if none. */
    public static <T extends Throwable> T find(Throwable failure, Class<T> type) {
        for (Throwable c = failure; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        return null;
    }
}
