package io.ratchet.chaos.workload;

import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import java.util.Map;
import java.util.Optional;

/**
 * A resource that checks fencing tokens, kept as one item {@code {"token":t,"owner":o}}: it refuses a
 * write whose token is lower than the one it holds. The check and the write are one compare-exchange on
 * the item's index, so no other writer can slip in between: the item's index orders what it accepted.
 */
public final class FencedResource {
    public static final String PREFIX = "fenced/";
    private static final int ATTEMPTS = 5;

    /**
     * @param accepted whether the write went in
     * @param index    the resource's index after an accepted write
     * @param highest  the token the resource held when it refused (0 when refused for contention)
     */
    public record Acceptance(boolean accepted, long index, long highest) {
    }

    private FencedResource() {
    }

    /**
     * Writes to resource {@code name} under {@code token}. Another writer moving the item between the
     * read and the write makes it read again, a few times at most.
     */
    public static Acceptance write(RatchetClient client, String name, long token, String owner) {
        String key = PREFIX + name;
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            Optional<Item> current = client.get(key);
            long highest = current.map(item -> item.valueNode().path("token").asLong()).orElse(0L);
            if (token < highest) {
                return new Acceptance(false, current.get().index(), highest);
            }
            CompareExchangeResult r = client.put(key, Map.of("token", token, "owner", owner),
                    current.map(Item::index).orElse(0L));
            if (r.successful()) {
                return new Acceptance(true, r.index(), token);
            }
        }
        return new Acceptance(false, 0, 0);
    }
}
