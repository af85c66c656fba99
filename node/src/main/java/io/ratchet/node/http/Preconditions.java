package io.ratchet.node.http;

import io.ratchet.client.ErrorCode;

/**
 * The index a write is conditioned on, from its {@code If-Match: "<index>"} or {@code If-None-Match: *}
 * header. Ratchet has no blind writes: a write with neither is refused with 428, and
 * {@code If-Match: *} ("whatever is there") is refused as the blind write it would be.
 */
final class Preconditions {
    private Preconditions() {
    }

    /** A put: {@code If-None-Match: *} creates only (index 0); {@code If-Match} updates at that index. */
    static long forPut(HttpCall call) {
        String ifNoneMatch = call.header("If-None-Match");
        String ifMatch = call.header("If-Match");
        if (ifNoneMatch != null && ifMatch != null) {
            throw HttpError.badRequest("send If-Match or If-None-Match, not both");
        }
        if (ifNoneMatch != null) {
            if (!ifNoneMatch.equals("*")) {
                throw HttpError.badRequest("If-None-Match takes only * (create only), not " + ifNoneMatch);
            }
            return 0;
        }
        if (ifMatch == null) {
            throw required("a put needs If-None-Match: * (create only) or If-Match: \"<index>\" (update at that index)");
        }
        return index(ifMatch);
    }

    /** A delete: {@code If-Match} names the index the item must have. */
    static long forDelete(HttpCall call) {
        return ifMatch(call, "delete");
    }

    /** A write that needs {@code If-Match}; {@code what} names it in the error. */
    static long ifMatch(HttpCall call, String what) {
        String ifMatch = call.header("If-Match");
        if (ifMatch == null) {
            throw required("a " + what + " needs If-Match: \"<index>\"");
        }
        if (call.header("If-None-Match") != null) {
            throw HttpError.badRequest("a " + what + " takes If-Match only");
        }
        long index = index(ifMatch);
        if (index == 0) {
            throw HttpError.badRequest("a " + what + " needs the item's index; \"0\" names no item");
        }
        return index;
    }

    /** {@code "42"} (or a bare {@code 42}) to 42. */
    private static long index(String ifMatch) {
        if (ifMatch.equals("*")) {
            throw HttpError.badRequest("If-Match: * would be a blind write; send the index you read: If-Match: \"<index>\"");
        }
        String tag = ifMatch.startsWith("W/") ? null : ifMatch;
        if (tag != null && tag.length() >= 2 && tag.startsWith("\"") && tag.endsWith("\"")) {
            tag = tag.substring(1, tag.length() - 1);
        }
        try {
            long index = tag == null ? -1 : Long.parseLong(tag);
            if (index >= 0) {
                return index;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw HttpError.badRequest("If-Match must be an item's index as an entity tag, e.g. \"42\", not " + ifMatch);
    }

    private static HttpError required(String message) {
        return new HttpError(428, "precondition_required", ErrorCode.INVALID_REQUEST, message);
    }
}
