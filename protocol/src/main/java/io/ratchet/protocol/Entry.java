package io.ratchet.protocol;

import java.util.List;

/**
 * A Raft log entry's payload: one or more batches of requests (from one or many clients: group commit on
 * the leader's front end), in order, stamped by the leader with its clock (epoch milliseconds) when it
 * accepted them. Apply derives cluster time from the stamps, never from its own clock.
 */
public record Entry(long stamp, List<Batch> batches) {
    public Entry {
        batches = List.copyOf(batches);
    }

    /** An entry of requests outside any session, as one batch. */
    public static Entry untagged(long stamp, List<Request> requests) {
        return new Entry(stamp, requests.isEmpty() ? List.of() : List.of(Batch.untagged(requests)));
    }
}
