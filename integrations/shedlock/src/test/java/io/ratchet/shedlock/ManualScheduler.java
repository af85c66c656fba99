package io.ratchet.shedlock;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A scheduler whose periodic task runs only when the test calls {@link #tick()}: KeepAliveLockProvider's
 * extensions, at the moments a test chooses on cluster time, without waiting for them in real time.
 */
final class ManualScheduler extends ScheduledThreadPoolExecutor {
    private volatile Runnable task;
    private volatile Duration period;
    private volatile ScheduledFuture<?> future;

    ManualScheduler() {
        super(1);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        this.task = command;
        this.period = Duration.ofNanos(unit.toNanos(period));
        // A real future that never fires, so that cancelling it can be seen.
        this.future = schedule(() -> { }, 1, TimeUnit.DAYS);
        return future;
    }

    /** Runs the periodic task once, now, on the calling thread. */
    void tick() {
        task.run();
    }

    Duration period() {
        return period;
    }

    boolean cancelled() {
        return future.isCancelled();
    }
}
