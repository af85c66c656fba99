package io.ratchet.statemachine;

import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Result;
import java.util.List;

/**
 * For benchmarks only: a store and its watches, applied as {@link RatchetStateMachine#applyTransaction}
 * applies an entry (the store applies it, then {@link Watches#fired} takes out the watches it answered),
 * without Raft and without the lock. It lives in the statemachine package, in the microbench module, to
 * reach the package-private {@link Watches} without widening the state machine's API.
 */
public final class ApplyWithWatches implements AutoCloseable {
    private final CompareExchangeStore store = new CompareExchangeStore();
    private final Watches watches = new Watches();

    public CompareExchangeStore store() {
        return store;
    }

    /** Parks a watch, as the state machine does when the store has nothing to report yet. */
    public void park(Query.Watch watch) {
        if (store.watched(watch).changed()) {
            throw new IllegalArgumentException("the store answers " + watch + " at once; it would not wait");
        }
        watches.register(watch, store::watched);
    }

    /** Watches parked and not yet answered. */
    public int parked() {
        return watches.size();
    }

    /** Applies one entry and answers the watches it fired: the state machine's apply path. */
    public List<Result> apply(Entry entry, long index) {
        List<Result> results = store.applyEntry(entry, index);
        watches.fired(store).forEach(Runnable::run);
        return results;
    }

    @Override
    public void close() {
        watches.close();
    }
}
