package io.ratchet.protocol;

import java.util.List;

/**
 * A Raft log entry's payload: one or more requests, in order, stamped by the leader with its clock
 * (epoch milliseconds) when it accepted them. Apply derives cluster time from the stamps, never from
 * its own clock.
 */
public record Entry(long stamp, List<Request> requests) {
    public Entry {
        requests = List.copyOf(requests);
    }
}
