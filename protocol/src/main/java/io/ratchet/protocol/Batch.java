package io.ratchet.protocol;

import java.util.List;

/**
 * One client message of writes, as a front end receives it and a log entry carries it: requests applied
 * in order, tagged with the client session that sent them so that a resend is answered, not applied
 * again (client sessions, Raft dissertation §6.3).
 *
 * <p>A client numbers its messages 1, 2, 3, ... within its session and sends the next only once the
 * last is answered, so a message's number also says that every lower one has been answered. The state
 * machine applies a sequence number once and answers a resend of the latest with its results.
 *
 * @param session  the session's id, or 0 for an untagged batch (the sweeper's, an administrator's)
 * @param sequence this message's number in the session, from 1; 0 when untagged
 * @param requests the requests, applied in order at the entry's index
 */
public record Batch(long session, long sequence, List<Request> requests) {
    public Batch {
        requests = List.copyOf(requests);
    }

    /** A batch outside any session: applied each time it is delivered. */
    public static Batch untagged(List<Request> requests) {
        return new Batch(0, 0, requests);
    }

    /** The results its requests produce: one per command. */
    public int commandCount() {
        int n = 0;
        for (Request r : requests) {
            n += r.commands().size();
        }
        return n;
    }

    /** Checks the tag and every request; throws {@link InvalidCommandException} when one is bad. */
    public void validate() {
        if (requests.isEmpty()) {
            throw new InvalidCommandException("a write carries at least one request");
        }
        if (session == 0 ? sequence != 0 : sequence < 1) {
            throw new InvalidCommandException(session == 0 ? "a batch outside a session carries no sequence number"
                    : "session " + session + ": sequence numbers start at 1, not " + sequence);
        }
        requests.forEach(Request::validate);
    }
}
