package io.ratchet.statemachine;

import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Result;
import java.util.List;

/**
 * Hears every log entry the state machine applied: what it held, what it answered and how long applying
 * it took. For measuring only: nothing it does can change state. It runs on Ratis' apply thread after
 * the store's lock is released, so it must be quick; an exception it throws is logged and dropped.
 */
@FunctionalInterface
public interface ApplyListener {
    /** Hears nothing: the state machine's default. */
    ApplyListener NONE = (entry, results, applyNanos) -> {
    };

    /**
     * @param entry      the decoded entry (an entry that cannot be decoded is not reported)
     * @param results    one per command, in the entry's order
     * @param applyNanos from the entry reaching the state machine to its results, wake-ups included
     */
    void applied(Entry entry, List<Result> results, long applyNanos);
}
