package io.ratchet.statemachine.kv;

/** A pass over entries in key order: {@link #next} moves to the next entry and says whether there is one. */
public interface Cursor extends AutoCloseable {
    boolean next();

    /** The current entry's key; valid after {@link #next} returned true, until it is called again. */
    byte[] key();

    /** The current entry's value. */
    byte[] value();

    @Override
    void close();

    /** A cursor over nothing. */
    Cursor EMPTY = new Cursor() {
        @Override
        public boolean next() {
            return false;
        }

        @Override
        public byte[] key() {
            throw new IllegalStateException("no entry");
        }

        @Override
        public byte[] value() {
            throw new IllegalStateException("no entry");
        }

        @Override
        public void close() {
        }
    };
}
