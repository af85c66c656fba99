package io.ratchet.node;

import java.util.ArrayList;
import java.util.List;

/**
 * A resource a lock protects, as a printer or a storage service would be: it refuses a write whose
 * fencing token is lower than the highest it has seen, and it notes every time a second holder
 * began while another was inside, which a correct lock never lets happen.
 */
final class FencedResource {
    private long highestToken;
    private String occupant;
    private final List<String> overlaps = new ArrayList<>();
    private final List<String> rejected = new ArrayList<>();

    /** A holder starts using the resource with its token; false (and nothing done) when the token is outdated. */
    synchronized boolean enter(String holder, long token) {
        if (!write(holder, token)) {
            return false;
        }
        if (occupant != null) {
            overlaps.add(holder + " (token " + token + ") entered while " + occupant + " was inside");
        }
        occupant = holder;
        return true;
    }

    /** One write under a token; false (and nothing written) when a higher token was seen before. */
    synchronized boolean write(String holder, long token) {
        if (token < highestToken) {
            rejected.add(holder + " wrote with token " + token + " after " + highestToken);
            return false;
        }
        highestToken = token;
        return true;
    }

    synchronized void leave(String holder) {
        if (holder.equals(occupant)) {
            occupant = null;
        }
    }

    synchronized List<String> overlaps() {
        return List.copyOf(overlaps);
    }

    synchronized List<String> rejected() {
        return List.copyOf(rejected);
    }
}
