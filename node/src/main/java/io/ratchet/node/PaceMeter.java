package io.ratchet.node;

import io.ratchet.protocol.PaceRpc;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.ratis.thirdparty.io.grpc.ServerServiceDefinition;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;

/**
 * How starved of CPU this process is: a thread of its own asks to run every {@link #TICK} and counts how
 * long past that it actually ran. {@link #stalledShare} is the share of the last {@link Window#SPAN} (a
 * second) spent waiting so: about 0 for a process that runs when it asks, even on a busy machine (the scheduler
 * favours a thread that slept), and most of the time for one held back by a CPU quota (a container's
 * limit, cgroup throttling), a hypervisor that does not schedule it, or long GC pauses.
 *
 * <p>One node's figure alone cannot tell a slow node from a busy machine; {@link SlowLeaderWatch}
 * compares it with the others'.
 */
final class PaceMeter implements AutoCloseable {
    static final Duration TICK = Duration.ofMillis(10);

    private final Window window = new Window();
    private final Thread ticker;
    private volatile boolean closed;

    PaceMeter() {
        ticker = new Thread(this::tick, "ratchet-pace");
        ticker.setDaemon(true);
        ticker.start();
    }

    /** The share, 0 to 1, of the last second this process waited beyond when it was due to run. */
    double stalledShare() {
        return window.share(System.nanoTime());
    }

    /**
     * The same share over only the last {@link Window#RECENT} slots (a quarter of a second): high while the
     * process is starved now, back to nothing soon after a single pause that {@link #stalledShare} still holds.
     */
    double recentStalledShare() {
        return window.share(System.nanoTime(), Window.RECENT);
    }

    /** The {@link PaceRpc} service: this node's stalled share, for the leader's {@link SlowLeaderWatch}. */
    ServerServiceDefinition service() {
        return ServerServiceDefinition.builder(PaceRpc.SERVICE)
                .addMethod(PaceRpc.STALLED, ServerCalls.asyncUnaryCall((byte[] request, StreamObserver<byte[]> observer) -> {
                    if (request.length != 0) {
                        observer.onError(Status.INVALID_ARGUMENT.withDescription("a pace request is empty; this one has "
                                + request.length + " bytes").asRuntimeException());
                        return;
                    }
                    observer.onNext(PaceRpc.encode(stalledShare()));
                    observer.onCompleted();
                }))
                .build();
    }

    private void tick() {
        long tick = TICK.toNanos();
        long due = System.nanoTime() + tick;
        while (!closed) {
            LockSupport.parkNanos(due - System.nanoTime());
            long now = System.nanoTime();
            if (now < due) {
                continue; // woken early (parkNanos may return spuriously)
            }
            window.add(now, now - due);
            due = now + tick;
        }
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(ticker);
    }

    /**
     * Time spent late, in slots of {@link #SLOT} over the last {@link #SPAN}: {@code add(now, late)}
     * counts a wait that ended at {@code now} and lasted {@code late} past its due time (counted in the
     * slots it spans, so a single long stall counts in full whenever it ends); {@code share(now)} is the
     * late time within the span ending at {@code now}, over the span. A second, so that a leader starved of
     * CPU knows it within half a second (a 10 % quota leaves it late 90 % of the time): the hand-over that
     * follows has to fit, with the election, in the two seconds a writer may wait.
     */
    static final class Window {
        static final long SPAN = TimeUnit.SECONDS.toNanos(1);
        static final long SLOT = TimeUnit.MILLISECONDS.toNanos(125);
        private static final int SLOTS = (int) (SPAN / SLOT);
        /** The slots of {@link PaceMeter#recentStalledShare}. */
        static final int RECENT = 2;

        /** Late nanoseconds per slot; {@code slotOf[i]} says which slot (time / SLOT) entry i holds. */
        private final long[] late = new long[SLOTS + 1];
        private final long[] slotOf = new long[SLOTS + 1];

        Window() {
            java.util.Arrays.fill(slotOf, Long.MIN_VALUE);
        }

        synchronized void add(long now, long lateNanos) {
            long from = now - Math.min(lateNanos, SPAN);
            for (long t = from; t < now; ) {
                long slot = Math.floorDiv(t, SLOT);
                long end = Math.min(now, (slot + 1) * SLOT);
                int i = (int) Math.floorMod(slot, (long) late.length);
                if (slotOf[i] != slot) {
                    slotOf[i] = slot;
                    late[i] = 0;
                }
                late[i] += end - t;
                t = end;
            }
        }

        double share(long now) {
            return share(now, SLOTS);
        }

        /** The late share of the {@code slots} whole slots before the current one (1 to {@link #SLOTS}). */
        synchronized double share(long now, int slots) {
            if (slots < 1 || slots > SLOTS) {
                throw new IllegalArgumentException("a share is over 1 to " + SLOTS + " slots, not " + slots);
            }
            long current = Math.floorDiv(now, SLOT);
            long sum = 0;
            // Whole slots before the current one: a span that does not move within a slot.
            for (long slot = current - slots; slot < current; slot++) {
                int i = (int) Math.floorMod(slot, (long) late.length);
                if (slotOf[i] == slot) {
                    sum += late[i];
                }
            }
            return Math.min(1.0, (double) sum / (slots * SLOT));
        }
    }
}
