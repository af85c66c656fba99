package io.ratchet.recipes.lock;

import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Limits;
import java.time.Duration;
import java.util.function.LongSupplier;

/** The lock contract for a permit of {@link Semaphores}: up to three holders at once. */
class SemaphoresContractTest extends LockContract<QueueLease> {
    private static final int PERMITS = 3;

    @Override
    int permits() {
        return PERMITS;
    }

    @Override
    Lock<QueueLease> lock(RatchetClient client, String owner, LongSupplier nanoClock) {
        return new Semaphores(client, new LockOptions(owner, Duration.ofMinutes(5)), nanoClock, Limits.MAX_PAGE_SIZE)
                .lock("pool", PERMITS);
    }
}
