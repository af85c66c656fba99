package io.ratchet.chaos.nemesis;

/**
 * A fault that did not happen, nothing having changed: a membership change the cluster refused (another
 * under way, a voter just restarted that the leader does not count as live yet, a live majority that
 * would be lost), or one whose call had no known outcome and that the configuration shows not done.
 * Expected while other faults run; the loop records it as a failed nemesis operation and goes on.
 */
public final class FaultRefused extends Exception {
    public FaultRefused(String message) {
        super(message);
    }
}
