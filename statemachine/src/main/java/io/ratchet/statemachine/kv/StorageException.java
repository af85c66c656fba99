package io.ratchet.statemachine.kv;

/**
 * The store could not read or write its disk. Unchecked on purpose: it is never an answer to a client,
 * and the state machine must stop rather than apply on (a node that skipped a write would hold another
 * state than its peers from then on).
 */
public final class StorageException extends RuntimeException {
    public StorageException(String message, Throwable cause) {
        super(message, cause);
    }

    public StorageException(String message) {
        super(message);
    }
}
