package io.ratchet.microbench;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Request;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ObjLongConsumer;

/** Fills a store for a benchmark: {@code items} items {@code users/N}, a thousand puts to an entry. */
final class StoreFill {
    private StoreFill() {
    }

    /** Hands each entry to {@code apply} with its log index, from 1; returns the last index. */
    static long users(int items, ObjLongConsumer<Entry> apply) {
        long index = 0;
        List<Request> batch = new ArrayList<>();
        for (int i = 0; i < items; i++) {
            batch.add(Request.of(List.of(new Command.Put("users/" + i, "{\"name\":\"user " + i + "\"}", 0, null))));
            if (batch.size() == 1000 || i == items - 1) {
                apply.accept(Entry.untagged(1_000, List.copyOf(batch)), ++index);
                batch.clear();
            }
        }
        return index;
    }
}
