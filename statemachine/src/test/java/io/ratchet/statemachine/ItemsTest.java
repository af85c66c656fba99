package io.ratchet.statemachine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Keys;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import io.ratchet.statemachine.kv.MemoryKeyValueStore;
import io.ratchet.statemachine.kv.Overlay;

/** The item table over a key-value store: what goes in comes out, in key order, with its expiry order and footprint. */
class ItemsTest {
    private static Items newTable() {
        return new Items(new Overlay(new MemoryKeyValueStore()), 0, 0);
    }

    private static void put(Items table, Item item) {
        table.put(Keys.normalize(item.key()), item);
    }

    @Test
    void everyFieldComesBackAsWritten() {
        Items table = newTable();
        List<Item> items = List.of(
                new Item("plain", "1", 7, 7, 0, null),
                new Item("Emails/Ada@Example.com", "\"users/1\"", 9, 3, 0, null),
                new Item("locks/jobs", "{\"owner\":\"w1\"}", 12, 11, 1_700_000_000_000L,
                        "{\"@expires\":\"2023-11-14T22:13:20Z\",\"owner\":\"w1\"}"),
                new Item("ünïcödé/ключ/🔑", "\"værdi ✓ 🎉\"", 20, 20, 0, "{}"),
                new Item("big", "\"" + "x".repeat(100_000) + "\"", Long.MAX_VALUE, 1, Long.MAX_VALUE, null));
        items.forEach(i -> put(table, i));
        for (Item item : items) {
            assertEquals(item, table.get(Keys.normalize(item.key())));
            assertEquals(item.index(), table.indexOf(Keys.normalize(item.key())));
        }
        assertNull(table.get("absent"));
        assertEquals(-1, table.indexOf("absent"));
        assertEquals(items.size(), table.size());
    }

    @Test
    void aReplacedOrRemovedItemLeavesNothingBehind() {
        Items table = newTable();
        put(table, new Item("k", "1", 1, 1, 5_000, null));
        put(table, new Item("K", "22", 2, 1, 0, null));
        assertEquals(new Item("K", "22", 2, 1, 0, null), table.get("k"));
        assertEquals(1, table.size());
        assertEquals(List.of(), table.expiredAt(Long.MAX_VALUE, 10), "the old expiry went with the old record");
        assertEquals(Footprint.item(table.get("k")), table.footprint());
        assertTrue(table.remove("k"));
        assertFalse(table.remove("k"));
        assertEquals(0, table.footprint());
        assertEquals(0, table.size());
    }

    @Test
    void listsByPrefixInCodePointOrderAndExpiresSoonestFirst() {
        Items table = newTable();
        for (String key : List.of("b/2", "a/1", "b/10", "b", "b/\uFFFD", "b/\uD83D\uDD11", "c")) {
            put(table, new Item(key, "1", 1, 1, 0, null));
        }
        List<String> b = table.list("b/", 0, 100).stream().map(Item::key).toList();
        assertEquals(List.of("b/10", "b/2", "b/\uFFFD", "b/\uD83D\uDD11"), b, "U+FFFD before U+1F511, as in UTF-8");
        assertEquals(List.of("b/2"), table.list("b/", 1, 1).stream().map(Item::key).toList());
        assertEquals(List.of(), table.list("d", 0, 10));
        List<String> sorted = new ArrayList<>(List.of("b/\uD83D\uDD11", "b/\uFFFD"));
        sorted.sort(Items::compareIds);
        assertEquals(List.of("b/\uFFFD", "b/\uD83D\uDD11"), sorted, "compareIds agrees with the table");

        put(table, new Item("late", "1", 2, 2, 3_000, null));
        put(table, new Item("early", "1", 3, 3, 1_000, null));
        put(table, new Item("never", "1", 4, 4, 0, null));
        assertEquals(List.of(new Command.KeyIndex("early", 3), new Command.KeyIndex("late", 2)),
                table.expiredAt(5_000, 10));
        assertEquals(List.of(new Command.KeyIndex("early", 3)), table.expiredAt(2_000, 10));
    }

    @Test
    void theFootprintCountsTheUtf8BytesOfEachPart() {
        Items table = newTable();
        Item item = new Item("Ключ", "\"é\"", 5, 4, 9_000, "{\"a\":1}");
        put(table, item);
        int key = "ключ".getBytes(StandardCharsets.UTF_8).length;
        int spelling = "Ключ".getBytes(StandardCharsets.UTF_8).length;
        assertEquals(Footprint.ITEM + Footprint.EXPIRY + key + spelling + 4 + 7, table.footprint());
        assertEquals(table.footprint(), Footprint.item(item));
    }
}
