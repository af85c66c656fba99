package io.ratchet.protocol;

/**
 * A command that breaks the protocol's rules: a bad key, value, index or an undecodable message.
 * It is refused before anything is written; resending the same command can never succeed.
 */
public class InvalidCommandException extends IllegalArgumentException {
    public InvalidCommandException(String message) {
        super(message);
    }

    public InvalidCommandException(String message, Throwable cause) {
        super(message, cause);
    }
}
