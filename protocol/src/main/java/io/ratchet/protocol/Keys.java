package io.ratchet.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Keys compare case-insensitively, as in RavenDB: two keys are the same item when their
 * {@link Locale#ROOT} lower-case forms are equal. Responses carry the key as it was first written.
 */
public final class Keys {
    private Keys() {
    }

    /** The form a key is compared and ordered by. */
    public static String normalize(String key) {
        return key.toLowerCase(Locale.ROOT);
    }

    /** Checks a key's size; returns it unchanged. */
    public static String validate(String key) {
        if (key == null || key.isEmpty()) {
            throw new InvalidCommandException("key must not be empty");
        }
        int bytes = key.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > Limits.MAX_KEY_BYTES) {
            throw new InvalidCommandException(
                    "key is " + bytes + " UTF-8 bytes; the limit is " + Limits.MAX_KEY_BYTES);
        }
        return key;
    }

    /** Checks a key that a plain compare-exchange write names: Atomic Guard keys are not for it. */
    public static String validateWritable(String key) {
        validate(key);
        if (isGuard(key)) {
            throw new InvalidCommandException("key '" + key + "' is reserved: the prefix "
                    + Limits.RESERVED_GUARD_PREFIX + " belongs to Atomic Guards, which only document writes change");
        }
        return key;
    }

    public static boolean isGuard(String key) {
        return normalize(key).startsWith(Limits.RESERVED_GUARD_PREFIX);
    }
}
