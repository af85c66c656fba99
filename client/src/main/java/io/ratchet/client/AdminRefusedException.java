package io.ratchet.client;

/**
 * An administrative change the cluster refused because its state does not allow it (an id that is
 * already a member, a node that does not answer, a removal that would lose the majority, a change
 * already under way). Nothing changed; the message says why.
 */
public final class AdminRefusedException extends RatchetException {
    public AdminRefusedException(String message) {
        super(ErrorCode.ADMIN_REFUSED, message, null);
    }
}
