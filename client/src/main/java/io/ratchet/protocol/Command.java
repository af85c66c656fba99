package io.ratchet.protocol;

/**
 * A write that goes through the Raft log. Each is conditioned on an item's index: the Raft log index
 * of the entry that last wrote it. Index 0 names an absent item.
 */
public sealed interface Command permits Command.Put, Command.Delete {

    /** The key the command is conditioned on. */
    String key();

    /** Checks the command's own fields; throws {@link InvalidCommandException} when one is bad. */
    void validate();

    /**
     * Store {@code value} under {@code key} when {@code index} is 0 and the key is absent (create-only),
     * or {@code index} equals the item's current index.
     *
     * @param value    compact JSON text, any value but null
     * @param metadata compact JSON object text, or null for none
     */
    record Put(String key, String value, long index, String metadata) implements Command {
        @Override
        public void validate() {
            Keys.validateWritable(key);
            checkIndex(index);
            Json.validateValue(value);
            Json.validateMetadata(metadata);
        }
    }

    /** Remove {@code key} when {@code index} (never 0) equals the item's current index. */
    record Delete(String key, long index) implements Command {
        @Override
        public void validate() {
            Keys.validateWritable(key);
            checkIndex(index);
            if (index == 0) {
                throw new InvalidCommandException("delete of '" + key + "' needs the item's index; 0 names no item");
            }
        }
    }

    private static void checkIndex(long index) {
        if (index < 0) {
            throw new InvalidCommandException("index must be 0 (create-only) or an item's index, not " + index);
        }
    }
}
