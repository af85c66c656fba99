package io.ratchet.statemachine;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The stamps one group's leader gives its entries: cluster time carried on from the last stamps this replica
 * saw, at the rate of its own monotonic clock, and pulled toward the node's clock only when that is ahead, at
 * no more than {@link #PULL_PER_MILLE} per mille of the time that passes.
 *
 * <p>Without it, a new leader stamped its own clock as it was: when leadership moved to a node whose clock
 * was ahead of the old leader's by <i>d</i>, cluster time jumped <i>d</i> and leases ended <i>d</i> early (a
 * 20-minute chaos run lost 25 renewed leases and saw two fair-lock holders at once after the machine's clock
 * stepped 1.6 s under nodes started before and after it); one whose clock was behind held cluster time still.
 * Now every replica keeps an estimate, <i>cluster time ≈ monotonic time + base</i>, from the stamps it sees
 * ({@link #saw}: entries of the leader it follows now, applied as they arrive) and the ones it gives
 * ({@link #stamp}); a stamp is never below that estimate and never more than the pull above it. An entry
 * applied late (a follower catching up) makes the estimate low, never high, so cluster time can run slower
 * than real time across a leader change, never faster: a lease can be honoured late, not end early.
 *
 * <p>A replica that has seen no stamp since its start (every node after a whole cluster's restart, whose
 * entries are replays and say nothing of how long the cluster was down) stamps the node's clock as it is,
 * so a downtime counts for every lease and ttl; never below the cluster time it applied. Thread-safe; never
 * read during apply (the state machine only tells it what it applied).
 */
final class ClusterClock {
    /** How fast stamps may move ahead of the carried-on cluster time toward the node's clock: 10 ‰ = 1 %. */
    static final long PULL_PER_MILLE = 10;
    /** A node's clock further than this ahead of its stamps is logged. */
    static final long AHEAD_MILLIS = 1_000;
    private static final Logger LOG = LoggerFactory.getLogger(ClusterClock.class);

    private static final long NANOS_PER_MILLI = TimeUnit.MILLISECONDS.toNanos(1);

    private final LongSupplier nodeClock;
    private final LongSupplier monoNanos;
    private boolean anchored;
    /** Cluster time in nanos (since the epoch) is about {@code monotonic nanos + base}. */
    private long base;
    /** The monotonic nanos of the latest stamp seen or given: the pull allowed grows from there. */
    private long anchoredAt;
    private boolean farAhead;

    /**
     * @param nodeClock the node's clock, epoch millis (its wall clock through its monotonic one)
     * @param monoNanos the monotonic clock, as {@link System#nanoTime()}
     */
    ClusterClock(LongSupplier nodeClock, LongSupplier monoNanos) {
        this.nodeClock = nodeClock;
        this.monoNanos = monoNanos;
    }

    /**
     * The stamp for an entry this replica, as leader, is about to append.
     *
     * @param clusterTime the cluster time this replica has applied: no stamp is lower
     */
    synchronized long stamp(long clusterTime) {
        long now = monoNanos.getAsLong();
        long own = nodeClock.getAsLong();
        long stamp = next(now, own, clusterTime);
        noteAhead(own, stamp);
        anchor(stamp, now);
        return Math.floorDiv(stamp, NANOS_PER_MILLI);
    }

    /** The stamp {@link #stamp} would give now, without giving it (what a leader's expiry scan asks). */
    synchronized long peek(long clusterTime) {
        return Math.floorDiv(next(monoNanos.getAsLong(), nodeClock.getAsLong(), clusterTime), NANOS_PER_MILLI);
    }

    /**
     * Logs when this node's clock is ahead of the stamps it gives by more than {@link #AHEAD_MILLIS} (once, until
     * they have caught up with it), and when they have.
     */
    private void noteAhead(long own, long stamp) {
        long ahead = own - Math.floorDiv(stamp, NANOS_PER_MILLI);
        boolean far = ahead > AHEAD_MILLIS;
        if (far && !farAhead) {
            LOG.warn("this node's clock is {} ms ahead of cluster time as the last leader left it; stamps carry cluster "
                    + "time on and are drawn toward this clock at {} % of the time that passes", ahead, PULL_PER_MILLE / 10.0);
        } else if (!far && farAhead) {
            LOG.info("the stamps have caught up with this node's clock to within {} ms", AHEAD_MILLIS);
        }
        farAhead = far;
    }

    /**
     * Never below the last stamp given: that stamp raised the base to at least itself less its monotonic time,
     * and the monotonic clock has not gone back since.
     */
    private long next(long now, long own, long clusterTime) {
        long stamp = own * NANOS_PER_MILLI;
        if (anchored) {
            long carried = now + base;
            long pull = Math.max(0, (now - anchoredAt) * PULL_PER_MILLE / 1_000);
            stamp = Math.min(Math.max(stamp, carried), carried + pull);
        }
        return Math.max(stamp, clusterTime * NANOS_PER_MILLI);
    }

    /**
     * Tells the clock that this replica applied, at {@code appliedNanos} on the monotonic clock, an entry the
     * leader it follows now stamped {@code stamp} (not a replay, not an earlier leader's entry).
     */
    synchronized void saw(long stamp, long appliedNanos) {
        anchor(stamp * NANOS_PER_MILLI, appliedNanos);
    }

    private void anchor(long stampNanos, long at) {
        long seen = stampNanos - at;
        if (!anchored) {
            base = seen;
            anchoredAt = at;
            anchored = true;
        } else {
            base = Math.max(base, seen);
            anchoredAt = Math.max(anchoredAt, at);
        }
    }
}
