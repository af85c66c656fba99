package io.ratchet.recipes.lock;

import io.ratchet.client.RatchetClient;
import java.time.Duration;
import java.util.function.LongSupplier;

/** The lock contract for {@link Locks}: one holder, whoever asks first once it is free. */
class LocksContractTest extends LockContract<Lease> {
    @Override
    Lock<Lease> lock(RatchetClient client, String owner, LongSupplier nanoClock) {
        return new Locks(client, new LockOptions(owner, Duration.ofMinutes(5)), nanoClock).lock("job");
    }
}
