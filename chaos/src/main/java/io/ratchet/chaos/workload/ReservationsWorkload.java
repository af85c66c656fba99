package io.ratchet.chaos.workload;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.chaos.checker.Checker;
import io.ratchet.chaos.checker.ReservationChecker;
import io.ratchet.chaos.history.History;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Limits;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Unique reservations, as for sign-up emails: processes race to reserve keys with create-only puts, each
 * attempt carrying an owner no other attempt carries. The keys contended move along as the run goes, so
 * every key sees a few rivals and the run keeps creating. Keys are never deleted.
 * {@link ReservationChecker} decides.
 */
public final class ReservationsWorkload implements Workload {
    public static final String PREFIX = ReservationChecker.WORKLOAD + "/";
    /** The largest page the cluster serves; the final read pages through the prefix with it. */
    static final int PAGE = Limits.MAX_PAGE_SIZE;
    /** Attempts before the window of contended keys moves one key along; with a window 3 wide, each key gets about this many. */
    private static final int ATTEMPTS_PER_KEY = 6;

    private final AtomicLong attempts = new AtomicLong();
    private final AtomicLong owners = new AtomicLong();

    @Override
    public String name() {
        return ReservationChecker.WORKLOAD;
    }

    @Override
    public Worker newWorker() {
        return process -> {
            long slot = attempts.getAndIncrement() / ATTEMPTS_PER_KEY + process.random().nextInt(3);
            String key = PREFIX + "slot-" + slot;
            String owner = "o" + owners.incrementAndGet();
            process.write("reserve", key, History.object().put("owner", owner),
                    () -> process.client().put(key, owner, 0), RegisterWorkload::output);
        };
    }

    @Override
    public void finalReads(ClientProcess reader) {
        int start = 0;
        for (int attempt = 0; attempt < 10; ) {
            int from = start;
            Outcome<List<Item>> page = reader.read("list", PREFIX,
                    History.object().put("start", from).put("page_size", PAGE),
                    () -> reader.client().list(PREFIX, from, PAGE), ReservationsWorkload::items);
            if (!page.ok()) {
                attempt++;
                Pause.briefly();
            } else if (page.value().size() < PAGE) {
                return;
            } else {
                start += page.value().size();
            }
        }
    }

    private static ObjectNode items(List<Item> items) {
        ObjectNode o = History.object();
        ArrayNode array = o.putArray("items");
        for (Item item : items) {
            ObjectNode i = array.addObject().put("key", item.key()).put("index", item.index());
            i.set("value", item.valueNode());
        }
        return o;
    }

    @Override
    public Checker checker() {
        return new ReservationChecker();
    }
}
