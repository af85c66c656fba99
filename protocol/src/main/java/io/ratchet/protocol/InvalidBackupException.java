package io.ratchet.protocol;

import java.io.IOException;

/**
 * Bytes that are not a whole, intact backup: truncated, damaged, or of a format this build does not read.
 * The message names the file (or the node that sent it) and what is wrong. Nothing was restored from it.
 */
public final class InvalidBackupException extends IOException {
    public InvalidBackupException(String message) {
        super(message);
    }

    public InvalidBackupException(String message, Throwable cause) {
        super(message, cause);
    }
}
