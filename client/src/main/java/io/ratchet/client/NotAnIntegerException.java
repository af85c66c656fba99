package io.ratchet.client;

import io.ratchet.protocol.Item;

/**
 * An add was refused because the item under its key does not hold a JSON integer in the signed 64-bit
 * range: a string, an object, a number with a fraction or an exponent ({@code 1.5}, even {@code 5.0}), or an
 * integer past the range. Nothing was written. The same add fails the same way until the item holds an
 * integer (put one, or delete the item: an absent key counts as 0).
 */
public final class NotAnIntegerException extends RatchetException {
    private final String key;
    private final Item item;

    public NotAnIntegerException(String key, Item item) {
        super(ErrorCode.NOT_AN_INTEGER, "item '" + key + "' holds " + abbreviated(item.value()) + " at index " + item.index()
                + ", not a JSON integer in the signed 64-bit range: nothing was added", null);
        this.key = key;
        this.item = item;
    }

    /** The key as the item spells it. */
    public String key() {
        return key;
    }

    /** The item as it is: its value, index and metadata. */
    public Item item() {
        return item;
    }

    static String abbreviated(String json) {
        return json.length() <= 60 ? json : json.substring(0, 57) + "...";
    }
}
