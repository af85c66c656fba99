package io.ratchet.chaos.workload;

import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.Item;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * FOR TESTING THE HARNESS ONLY: a deliberately broken append client whose reads of several groups are
 * taken once, one group after another, instead of again until two reads agree (docs/DESIGN.md, "Reads
 * across groups agree on one moment"). Each group's read is linearizable, but together they need not be
 * one moment: a transaction across groups that commits between them is seen in one group and not in the
 * other (a fractured read). The append checker must find it (G-single). Only the hidden
 * {@code --test-read-groups-once} option turns it on, and the summary names the mode.
 */
public final class ReadsTakenOnce implements AppendClient {
    private final RatchetClient client;

    public ReadsTakenOnce(RatchetClient client) {
        this.client = client;
    }

    @Override
    public List<Item> getAll(List<String> keys) {
        List<Item> items = new ArrayList<>();
        for (Map.Entry<Integer, List<String>> group : Groups.byGroup(keys, client.groups()).entrySet()) {
            items.addAll(client.getAll(group.getValue())); // one group: one linearizable read, and no second
        }
        items.sort(Comparator.comparing(Item::key));
        return items;
    }

    @Override
    public RatchetClient client() {
        return client;
    }
}
