package io.ratchet.statemachine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Request;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The hot key shows itself: refusals and attempts per commit are counted per key as entries apply. */
class KeyContentionTest {
    private final CompareExchangeStore store = new CompareExchangeStore();
    private final KeyContention contention = new KeyContention(0);
    private long nextIndex = 1;

    KeyContentionTest() {
        store.countContentionIn(contention);
    }

    private void apply(Command command) {
        store.applyEntry(Entry.untagged(1_000, List.of(Request.of(List.of(command)))), nextIndex++);
    }

    private KeyContention.Counts counts(String key) {
        return contention.hottest(100).stream().filter(c -> c.key().equalsIgnoreCase(key)).findFirst().orElseThrow();
    }

    @Test
    void aContendedCounterIsCountedFromItsFirstRefusalOn() {
        apply(new Command.Put("counter", "0", 0, null));
        for (int i = 0; i < 4; i++) {
            apply(new Command.Put("counter", "1", 1, null)); // all read index 1; the first wins
        }
        apply(new Command.Put("counter", "2", 2, null)); // the next round: one commit
        apply(new Command.Put("quiet", "1", 0, null));
        KeyContention.Counts hot = counts("counter");
        assertEquals(new KeyContention.Counts("counter", 4, 1, 3), hot);
        assertEquals(4.0, hot.attemptsPerCommit());
        assertEquals(List.of("counter"), contention.hottest(10).stream().map(KeyContention.Counts::key).toList(),
                "a key never refused is not tracked");
    }

    @Test
    void aFailedTransactionRefusesOnlyTheConditionsThatFailedAndCommitsNothing() {
        apply(new Command.Put("a", "1", 0, null));
        apply(new Command.Put("a", "1", 0, null)); // refused: "a" is tracked from here
        apply(new Command.Transaction(List.of(new Command.Check("a", 1), new Command.Put("b", "1", 5, null))));
        assertEquals(new KeyContention.Counts("a", 2, 0, 1), counts("a"));
        assertEquals(new KeyContention.Counts("b", 1, 0, 1), counts("b"));
        assertNull(counts("b").attemptsPerCommit());
    }

    @Test
    void manyKeysAreBoundedKeepingTheHottest() {
        apply(new Command.Put("hot", "0", 0, null));
        apply(new Command.Put("hot", "0", 0, null));
        apply(new Command.Put("hot", "0", 0, null));
        for (int i = 0; i < KeyContention.MAX_KEYS + 10; i++) {
            apply(new Command.Put("cold/" + i, "0", 0, null));
            apply(new Command.Put("cold/" + i, "0", 0, null)); // each refused once
        }
        List<KeyContention.Counts> all = contention.hottest(Integer.MAX_VALUE);
        assertTrue(all.size() <= KeyContention.MAX_KEYS, "kept " + all.size());
        assertEquals("hot", all.get(0).key());
    }
}
