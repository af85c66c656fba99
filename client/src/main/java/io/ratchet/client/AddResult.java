package io.ratchet.client;

/**
 * The outcome of an add: the item's value after it and its index, the log index of the entry that applied
 * the add. An add has no condition, so it always lands when it returns: a refusal is an exception
 * ({@link NotAnIntegerException}, {@link AddOverflowException}), never a failed result.
 *
 * @param key   the key as the item spells it (its first spelling)
 * @param value the sum
 * @param index the item's new index
 */
public record AddResult(String key, long value, long index) {
}
