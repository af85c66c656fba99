package io.ratchet.client.internal;

import io.ratchet.protocol.DaemonThreads;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.io.netty.util.HashedWheelTimer;
import org.apache.ratis.thirdparty.io.netty.util.Timeout;

/**
 * Coarse timers for deadlines that are nearly always cancelled before they are due: a call's timeout and
 * its hedge, two per message. On a {@link java.util.concurrent.ScheduledThreadPoolExecutor} each one that
 * became the earliest woke the timer thread to wait anew, and each cancel took it out of a heap: 20 µs of
 * CPU per operation on the timer thread alone, a tenth of the client's, at 16 client instances
 * (docs/PERFORMANCE.md, "Where a write's CPU goes"). A hashed wheel (Netty's, inside ratis-thirdparty)
 * takes a timer with a queue offer and no wake-up, and its thread looks every {@link #TICK}: a deadline
 * fires up to one tick late, never early. Pauses between attempts, which are short and must be on time,
 * stay on the transport's scheduler.
 *
 * <p>One wheel and one thread for every client of the process, made when the first client opens and
 * stopped when the last one closes, so that a program that closes its clients ends with no thread of theirs.
 */
public final class Deadlines {
    /** How often the wheel looks: the most a deadline fires late. */
    static final Duration TICK = Duration.ofMillis(10);
    private static final int TICKS_PER_WHEEL = 512;

    private static HashedWheelTimer wheel;
    private static int users;

    private Deadlines() {
    }

    /** A client opened: the wheel runs while any client is open. */
    public static synchronized HashedWheelTimer acquire() {
        if (users++ == 0) {
            wheel = new HashedWheelTimer(DaemonThreads.named("ratchet-client-deadlines"), TICK.toNanos(),
                    TimeUnit.NANOSECONDS, TICKS_PER_WHEEL);
        }
        return wheel;
    }

    /** A client closed; the last one stops the wheel (deadlines still pending are dropped, as the client is gone). */
    public static synchronized void release() {
        if (users > 0 && --users == 0) {
            wheel.stop();
            wheel = null;
        }
    }

    /** How many clients hold the wheel now. */
    public static synchronized int users() {
        return users;
    }

    /** Runs {@code task} on the wheel's thread once {@code delay} has passed; cancel the result to drop it. */
    public static Timeout after(HashedWheelTimer wheel, Duration delay, Runnable task) {
        return wheel.newTimeout(t -> task.run(), delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Completes once {@code delay} has passed; cancelling it takes the timer off the wheel. */
    public static CompletableFuture<Void> future(HashedWheelTimer wheel, Duration delay) {
        CompletableFuture<Void> due = new CompletableFuture<>();
        try {
            Timeout timeout = after(wheel, delay, () -> due.complete(null));
            due.whenComplete((v, e) -> {
                if (due.isCancelled()) {
                    timeout.cancel();
                }
            });
        } catch (IllegalStateException e) {
            due.completeExceptionally(new IllegalStateException("the client is closed"));
        }
        return due;
    }
}
