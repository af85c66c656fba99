package io.ratchet.node;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The clock a leader stamps its entries with (cluster time is the highest stamp applied): the wall clock,
 * followed through the monotonic clock at a bounded rate, so that a step of the wall clock (an operator's
 * {@code date -s}, a bad NTP step, a VM restored from a snapshot) moves stamps by at most
 * {@link #SLEW_PER_MILLE} per mille of the time that passes, never by the step at once.
 *
 * <p>Without it a leader whose clock jumped five minutes ahead expired every lease and ttl five minutes
 * early, and one whose clock jumped back held cluster time still for five minutes (leases honoured five
 * minutes late). With it, stamps run between 0.99 and 1.01 times as fast as the monotonic clock, so a lease
 * of {@code d} is honoured for between {@code 0.99 d} and {@code 1.01 d} of this node's real time while it
 * leads, whatever its wall clock does; a wall clock that stays moved is caught up with at that rate (a
 * five-minute step in about eight hours). The wall clock at the node's start is trusted as it is; each
 * group's {@code ClusterClock} then keeps a new leader's stamps from jumping to it when it is ahead of the
 * cluster time the last leader left.
 *
 * <p>Each reading compares the wall clock with where the monotonic clock says it should be; a difference
 * over {@link #STEP_MILLIS} is logged as a step (once per step) and counted. Thread-safe.
 */
public final class StampClock implements LongSupplier {
    private static final Logger LOG = LoggerFactory.getLogger(StampClock.class);
    /** How fast stamps may drift from the monotonic clock toward the wall clock: 10 ‰ = 1 %. */
    static final long SLEW_PER_MILLE = 10;
    /** A difference between wall and stamp above this is a step, logged; below, ordinary NTP work. */
    static final long STEP_MILLIS = 1_000;

    private final LongSupplier wallMillis;
    private final LongSupplier monoNanos;
    /** stamp = monotonic millis + offset. */
    private long offset;
    private long lastMono;
    /** Leftover allowance below a millisecond, in millis × 1000 / SLEW, so slow readings still slew. */
    private long allowanceMicros;
    private boolean stepping;
    private long steps;

    /** The node's clock: {@link System#currentTimeMillis()} through {@link System#nanoTime()}. */
    public StampClock() {
        this(System::currentTimeMillis, System::nanoTime);
    }

    StampClock(LongSupplier wallMillis, LongSupplier monoNanos) {
        this.wallMillis = wallMillis;
        this.monoNanos = monoNanos;
        this.lastMono = TimeUnit.NANOSECONDS.toMillis(monoNanos.getAsLong());
        this.offset = wallMillis.getAsLong() - lastMono;
    }

    /** The stamp now, in epoch milliseconds: never lower than the last one. */
    @Override
    public synchronized long getAsLong() {
        long mono = TimeUnit.NANOSECONDS.toMillis(monoNanos.getAsLong());
        long wall = wallMillis.getAsLong();
        long elapsed = Math.max(0, mono - lastMono);
        lastMono = mono;
        long gap = wall - (mono + offset);
        allowanceMicros += elapsed * SLEW_PER_MILLE;
        long allowance = allowanceMicros / 1_000;
        if (Math.abs(gap) <= allowance) {
            offset += gap;
            allowanceMicros = 0;
        } else {
            offset += Long.signum(gap) * allowance;
            allowanceMicros -= allowance * 1_000;
        }
        noteStep(gap);
        return mono + offset;
    }

    /** How far the wall clock is from the stamps now (positive: the wall clock is ahead), in millis. */
    public synchronized long wallAhead() {
        return wallMillis.getAsLong() - (TimeUnit.NANOSECONDS.toMillis(monoNanos.getAsLong()) + offset);
    }

    /** Steps of the wall clock seen since the start. */
    public synchronized long steps() {
        return steps;
    }

    private void noteStep(long gap) {
        boolean step = Math.abs(gap) > STEP_MILLIS;
        if (step && !stepping) {
            steps++;
            LOG.warn("the wall clock is {} ms {} where the monotonic clock puts it: a step, not a drift; entries are "
                            + "stamped on the monotonic clock, following the wall clock at {} % of the time that passes",
                    Math.abs(gap), gap > 0 ? "ahead of" : "behind", SLEW_PER_MILLE / 10.0);
        } else if (!step && stepping) {
            LOG.info("the stamps have caught up with the wall clock to within {} ms", STEP_MILLIS);
        }
        stepping = step;
    }
}
