package io.ratchet.chaos.workload;

import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Json;
import java.util.Map;
import java.util.Optional;

/**
 * Locks built from compare-exchange primitives, as DESIGN.md describes them: the lock is an item
 * {@code chaos-locks/<name>} holding its owner, acquired with a create-only put and released with a
 * delete at the index it was acquired at. That index is the fencing token: a log index is never reused,
 * so each holder's is greater than every earlier one's. Grants never expire (no lease), so a holder that
 * never releases holds for good; {@link LeasedLocks} is the leased version the runs use.
 */
public final class CompareExchangeLocks implements LockService {
    public static final String PREFIX = "chaos-locks/";

    private final RatchetClient client;

    public CompareExchangeLocks(RatchetClient client) {
        this.client = client;
    }

    @Override
    public String key(String name) {
        return PREFIX + name;
    }

    @Override
    public Acquisition tryAcquire(String name, String owner) {
        CompareExchangeResult r = client.put(PREFIX + name, Map.of("owner", owner), 0);
        if (r.successful()) {
            return new Acquisition(true, new LockGrant(name, owner, r.index()));
        }
        return new Acquisition(false, r.value() == null ? null : new LockGrant(name, ownerIn(r.value()), r.index()));
    }

    @Override
    public Optional<LockGrant> holder(String name) {
        return client.get(PREFIX + name).map(item -> new LockGrant(name, ownerIn(item.value()), item.index()));
    }

    @Override
    public boolean release(LockGrant grant) {
        return client.delete(PREFIX + grant.name(), grant.token()).successful();
    }

    private static String ownerIn(String value) {
        return Json.parse(value).path("owner").asText();
    }
}
