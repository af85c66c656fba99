package io.ratchet.statemachine;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Where each part of the state lives in the {@link io.ratchet.statemachine.kv.KeyValueStore}: one byte
 * naming the part, then the part's own key. Orders are by unsigned bytes, so a normalized key sorts in
 * code point order, and a big-endian time or index sorts as a number (both are never negative). This
 * layout is the disk format of the state: a change to it is a new {@link #FORMAT}.
 *
 * <pre>
 *   m                          the store's position and counters ({@link StoreMeta})
 *   a                          the permission table
 *   i key                      an item (its record: {@link ItemRecord})
 *   e time key                 an item that expires at time: index, spelling
 *   d key                      a document
 *   T index key                a deleted key, by the index that deleted it (the order they are forgotten)
 *   r idempotency-key          a remembered request's results
 *   R time idempotency-key     the same, in the order they lapse
 *   s session                  a client session and its last results
 * </pre>
 */
final class StateKeys {
    /** The layout's version, kept in the meta record; a store of another is refused, not misread. */
    static final byte FORMAT = 1;

    static final byte META = 'm';
    static final byte AUTH = 'a';
    static final byte ITEM = 'i';
    static final byte EXPIRY = 'e';
    static final byte DOCUMENT = 'd';
    static final byte TOMBSTONE_ORDER = 'T';
    static final byte REMEMBERED = 'r';
    static final byte REMEMBERED_ORDER = 'R';
    static final byte SESSION = 's';

    private StateKeys() {
    }

    static byte[] single(byte part) {
        return new byte[] {part};
    }

    /** The part's byte, then {@code name} as UTF-8. */
    static byte[] named(byte part, String name) {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        byte[] key = new byte[1 + n.length];
        key[0] = part;
        System.arraycopy(n, 0, key, 1, n.length);
        return key;
    }

    /** The part's byte, {@code number} big-endian, then {@code name} as UTF-8 (none when null). */
    static byte[] numbered(byte part, long number, String name) {
        byte[] n = name == null ? new byte[0] : name.getBytes(StandardCharsets.UTF_8);
        byte[] key = new byte[1 + Long.BYTES + n.length];
        key[0] = part;
        ByteArrays.putLong(key, 1, number);
        System.arraycopy(n, 0, key, 1 + Long.BYTES, n.length);
        return key;
    }

    /** The name after the part's byte. */
    static String name(byte[] key) {
        return new String(key, 1, key.length - 1, StandardCharsets.UTF_8);
    }

    /** The number of a {@link #numbered} key. */
    static long number(byte[] key) {
        return ByteArrays.getLong(key, 1);
    }

    /** The name of a {@link #numbered} key. */
    static String numberedName(byte[] key) {
        return new String(key, 1 + Long.BYTES, key.length - 1 - Long.BYTES, StandardCharsets.UTF_8);
    }

    /** The first key after every key that starts with {@code prefix}; null when there is none. */
    static byte[] after(byte[] prefix) {
        byte[] end = Arrays.copyOf(prefix, prefix.length);
        for (int i = end.length - 1; i >= 0; i--) {
            if (end[i] != (byte) 0xff) {
                end[i]++;
                return Arrays.copyOf(end, i + 1);
            }
        }
        return null;
    }
}
