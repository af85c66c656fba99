package io.ratchet.client;

/**
 * The cluster has authentication on and this client named no user: no token, or one that no user has
 * (wrong, or its user was removed). Nothing was written; retrying with the same token gets the same.
 */
public final class AuthenticationException extends RatchetException {
    public AuthenticationException(String message) {
        super(ErrorCode.UNAUTHENTICATED, message, null);
    }
}
