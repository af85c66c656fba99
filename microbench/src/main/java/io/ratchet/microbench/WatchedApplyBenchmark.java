package io.ratchet.microbench;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Request;
import io.ratchet.statemachine.ApplyWithWatches;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The apply path of one node with {@code watches} watches parked, none of them on the key written: decode
 * a log entry of one create-only put, apply it to a store of {@code items} items, take out the watches
 * it fired (as the state machine does after each entry, under its write lock), encode the results. The
 * parked watches are on existing keys at their current index, so none fires: what they cost is the
 * difference between {@code watches=0} and the others.
 */
public class WatchedApplyBenchmark extends Microbenchmark {
    /** Outlasts any run, so no parked watch times out during the measurement. */
    private static final long PARKED_MILLIS = TimeUnit.DAYS.toMillis(1);

    @Param({"0", "1000", "10000"})
    public int watches;

    @Param({"100000"})
    public int items;

    private ApplyWithWatches node;
    private long index;
    private long sequence;

    @Setup(Level.Trial)
    public void fill() {
        node = new ApplyWithWatches();
        index = StoreFill.users(items, (entry, i) -> node.apply(entry, i));
        for (int i = 0; i < watches; i++) {
            String key = "users/" + (i % items);
            node.park(new Query.Watch(key, node.store().lastChange(key), PARKED_MILLIS));
        }
        if (node.parked() != watches) {
            throw new IllegalStateException(node.parked() + " watches parked, not " + watches);
        }
        sequence = 0;
    }

    @TearDown(Level.Trial)
    public void close() {
        if (node.parked() != watches) {
            throw new IllegalStateException("a write to an unwatched key answered a watch: "
                    + node.parked() + " of " + watches + " still parked");
        }
        node.close();
    }

    /** One create-only put of a fresh key, a key no watch waits on, as one entry. */
    @Benchmark
    public byte[] putEntry() {
        Entry entry = Entry.untagged(2_000, List.of(Request.of(List.of(
                new Command.Put("emails/" + sequence++ + "@example.com", "\"users/1\"", 0, null)))));
        Entry decoded = Codec.decodeEntry(Codec.encodeEntry(entry));
        return Codec.encodeResults(node.apply(decoded, ++index));
    }
}
