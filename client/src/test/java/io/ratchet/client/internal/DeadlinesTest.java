package io.ratchet.client.internal;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.ratis.thirdparty.io.netty.util.HashedWheelTimer;
import org.junit.jupiter.api.Test;

/** The deadline wheel: never early, cancelled timers never run, and its thread ends with the last client. */
class DeadlinesTest {
    @Test
    void aDeadlineFiresNoEarlierThanAskedAndACancelledOneNever() throws Exception {
        HashedWheelTimer wheel = Deadlines.acquire();
        try {
            long start = System.nanoTime();
            CompletableFuture<Void> due = Deadlines.future(wheel, Duration.ofMillis(50));
            due.get(5, TimeUnit.SECONDS);
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(50), "not early");

            // A cancelled timer's task never runs, and cancelling the future takes its timer off the wheel.
            long pendingBefore = wheel.pendingTimeouts();
            AtomicBoolean ran = new AtomicBoolean();
            Deadlines.after(wheel, Duration.ofMillis(20), () -> ran.set(true)).cancel();
            CompletableFuture<Void> cancelled = Deadlines.future(wheel, Duration.ofSeconds(30));
            assertTrue(cancelled.cancel(false));
            await().atMost(Duration.ofSeconds(5)).until(() -> wheel.pendingTimeouts() == pendingBefore);
            // Well past the first timer's slot: the wheel has passed it by.
            Deadlines.future(wheel, Duration.ofMillis(80)).get(5, TimeUnit.SECONDS);
            assertFalse(ran.get(), "a cancelled deadline does not run");
        } finally {
            Deadlines.release();
        }
    }

    @Test
    void clientsShareOneWheelWhoseThreadEndsWhenTheLastCloses() {
        // Another test's client left open in this JVM would keep the wheel: then only the count is checked.
        int before = Deadlines.users();
        HashedWheelTimer first = Deadlines.acquire();
        HashedWheelTimer second = Deadlines.acquire();
        assertSame(first, second, "one wheel for the process's clients");
        Deadlines.future(first, Duration.ofMillis(1)).join(); // the wheel's thread starts with its first timer
        assertEquals(before + 2, Deadlines.users());
        Deadlines.release();
        assertTrue(wheelThreadAlive(), "still one client open");
        Deadlines.release();
        assertEquals(before, Deadlines.users());
        if (before == 0) {
            await().atMost(Duration.ofSeconds(5)).until(() -> !wheelThreadAlive());
        }
    }

    private static boolean wheelThreadAlive() {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.isAlive() && t.getName().startsWith("ratchet-client-deadlines"));
    }
}
