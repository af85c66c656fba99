package io.ratchet.recipes.lock;

import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Limits;
import java.time.Duration;
import java.util.function.LongSupplier;

/** The lock contract for {@link FairLocks}: one holder, first come first served. */
class FairLocksContractTest extends LockContract<QueueLease> {
    @Override
    Lock<QueueLease> lock(RatchetClient client, String owner, LongSupplier nanoClock) {
        return new FairLocks(client, new LockOptions(owner, Duration.ofMinutes(5)), nanoClock, Limits.MAX_PAGE_SIZE)
                .lock("job");
    }
}
