package io.ratchet.client;

/**
 * The client's user has no permission for what it asked; the message names the key and the permission
 * missing. Nothing was written: a transaction or document save with one such key is refused whole.
 */
public final class PermissionDeniedException extends RatchetException {
    public PermissionDeniedException(String message) {
        super(ErrorCode.PERMISSION_DENIED, message, null);
    }
}
