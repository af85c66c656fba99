package io.ratchet.statemachine;

import io.ratchet.protocol.Item;
import java.nio.charset.StandardCharsets;

/**
 * An item as the store keeps it, under its normalized key: a flags byte, the index, then only what is
 * there (created index when it differs, expiry, spelling when it differs from the normalized key,
 * metadata), and the value to the end, all text as UTF-8. An {@link Item} is made only when a read asks
 * for one; conditions need only the index, which sits at a fixed place.
 */
final class ItemRecord {
    private static final int CREATED = 1;
    private static final int EXPIRES = 2;
    private static final int SPELLED = 4;
    private static final int METADATA = 8;
    private static final int MAX_SHORT = 0xffff;
    private static final int INDEX_AT = 1;

    private ItemRecord() {
    }

    static byte[] encode(String id, Item item) {
        byte[] spelling = id.equals(item.key()) ? null : item.key().getBytes(StandardCharsets.UTF_8);
        byte[] metadata = item.metadata() == null ? null : item.metadata().getBytes(StandardCharsets.UTF_8);
        byte[] value = item.value().getBytes(StandardCharsets.UTF_8);
        if (spelling != null && spelling.length > MAX_SHORT) {
            throw new IllegalStateException("key '" + item.key() + "' is longer than any valid key");
        }
        boolean created = item.createdIndex() != item.index();
        boolean expires = item.expiresAt() != 0;
        int flags = (created ? CREATED : 0) | (expires ? EXPIRES : 0) | (spelling != null ? SPELLED : 0)
                | (metadata != null ? METADATA : 0);
        int size = 1 + Long.BYTES + (created ? Long.BYTES : 0) + (expires ? Long.BYTES : 0)
                + (spelling != null ? 2 + spelling.length : 0) + (metadata != null ? 4 + metadata.length : 0) + value.length;
        byte[] r = new byte[size];
        r[0] = (byte) flags;
        int at = INDEX_AT;
        ByteArrays.putLong(r, at, item.index());
        at += Long.BYTES;
        if (created) {
            ByteArrays.putLong(r, at, item.createdIndex());
            at += Long.BYTES;
        }
        if (expires) {
            ByteArrays.putLong(r, at, item.expiresAt());
            at += Long.BYTES;
        }
        if (spelling != null) {
            r[at] = (byte) (spelling.length >>> 8);
            r[at + 1] = (byte) spelling.length;
            System.arraycopy(spelling, 0, r, at + 2, spelling.length);
            at += 2 + spelling.length;
        }
        if (metadata != null) {
            ByteArrays.putInt(r, at, metadata.length);
            System.arraycopy(metadata, 0, r, at + 4, metadata.length);
            at += 4 + metadata.length;
        }
        System.arraycopy(value, 0, r, at, value.length);
        return r;
    }

    /** The parts of a record, located. */
    private static final class Layout {
        final int flags;
        final long index;
        final long createdIndex;
        final long expiresAt;
        final int spellingAt;
        final int spellingLength;
        final int metadataAt;
        final int metadataLength;
        final int valueAt;

        Layout(byte[] r) {
            flags = r[0];
            int at = INDEX_AT;
            index = ByteArrays.getLong(r, at);
            at += Long.BYTES;
            createdIndex = (flags & CREATED) != 0 ? ByteArrays.getLong(r, at) : index;
            at += (flags & CREATED) != 0 ? Long.BYTES : 0;
            expiresAt = (flags & EXPIRES) != 0 ? ByteArrays.getLong(r, at) : 0;
            at += (flags & EXPIRES) != 0 ? Long.BYTES : 0;
            spellingLength = (flags & SPELLED) != 0 ? ((r[at] & 0xff) << 8) | (r[at + 1] & 0xff) : 0;
            spellingAt = at + 2;
            at += (flags & SPELLED) != 0 ? 2 + spellingLength : 0;
            metadataLength = (flags & METADATA) != 0 ? ByteArrays.getInt(r, at) : 0;
            metadataAt = at + 4;
            at += (flags & METADATA) != 0 ? 4 + metadataLength : 0;
            valueAt = at;
        }
    }

    /** The item a record under normalized key {@code id} holds. */
    static Item decode(String id, byte[] r) {
        Layout l = new Layout(r);
        String spelling = (l.flags & SPELLED) != 0 ? new String(r, l.spellingAt, l.spellingLength, StandardCharsets.UTF_8) : id;
        String metadata = (l.flags & METADATA) != 0
                ? new String(r, l.metadataAt, l.metadataLength, StandardCharsets.UTF_8) : null;
        return new Item(spelling, new String(r, l.valueAt, r.length - l.valueAt, StandardCharsets.UTF_8),
                l.index, l.createdIndex, l.expiresAt, metadata);
    }

    static long index(byte[] r) {
        return ByteArrays.getLong(r, INDEX_AT);
    }

    static long expiresAt(byte[] r) {
        int flags = r[0];
        if ((flags & EXPIRES) == 0) {
            return 0;
        }
        return ByteArrays.getLong(r, INDEX_AT + Long.BYTES + ((flags & CREATED) != 0 ? Long.BYTES : 0));
    }

    /** What the item counts for against the quota ({@link Footprint#item}); {@code keyBytes}: its normalized key's. */
    static long footprint(int keyBytes, byte[] r) {
        Layout l = new Layout(r);
        return Footprint.item(keyBytes, l.spellingLength, r.length - l.valueAt, l.metadataLength, l.expiresAt != 0);
    }
}
