package io.ratchet.client;

import io.ratchet.protocol.Item;

/**
 * An add was refused because the sum of the item's value and the delta is outside the signed 64-bit range
 * ({@link Long#MIN_VALUE} to {@link Long#MAX_VALUE}). Nothing was written; the same add fails the same way
 * until the value has moved far enough back.
 */
public final class AddOverflowException extends RatchetException {
    private final String key;
    private final Item item;
    private final long delta;

    public AddOverflowException(String key, Item item, long delta) {
        super(ErrorCode.OVERFLOW, "adding " + delta + " to item '" + key + "', which holds " + item.value() + " at index "
                + item.index() + ", passes the signed 64-bit range: nothing was added", null);
        this.key = key;
        this.item = item;
        this.delta = delta;
    }

    /** The key as the item spells it. */
    public String key() {
        return key;
    }

    /** The item as it is. */
    public Item item() {
        return item;
    }

    public long delta() {
        return delta;
    }
}
