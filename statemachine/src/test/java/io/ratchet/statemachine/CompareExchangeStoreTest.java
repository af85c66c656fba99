package io.ratchet.statemachine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.util.List;
import org.junit.jupiter.api.Test;

class CompareExchangeStoreTest {
    private final CompareExchangeStore store = new CompareExchangeStore();
    private long nextIndex = 1;

    private Result.Write put(String key, String value, long index) {
        return (Result.Write) apply(new Command.Put(key, value, index, null));
    }

    private Result.Write delete(String key, long index) {
        return (Result.Write) apply(new Command.Delete(key, index));
    }

    private Result apply(Command command) {
        return store.applyEntry(entry(1_000, command), nextIndex++).get(0);
    }

    static Entry entry(long stamp, Command... commands) {
        return Entry.untagged(stamp, List.of(Request.of(List.of(commands))));
    }

    static Item item(String key, String value, long index) {
        return new Item(key, value, index, index, 0, null);
    }

    @Test
    void createOnlyPutSucceedsOnAnAbsentKeyAndCarriesTheEntryIndex() {
        nextIndex = 7;
        Result.Write r = put("emails/ada@example.com", "\"user/1\"", 0);
        Item expected = item("emails/ada@example.com", "\"user/1\"", 7);
        assertEquals(new Result.Write(true, "emails/ada@example.com", expected), r);
        assertEquals(expected, store.get("emails/ada@example.com"));
    }

    @Test
    void createOnlyPutOnAPresentKeyFailsAndReturnsTheCurrentState() {
        put("k", "1", 0);
        Result.Write r = put("k", "2", 0);
        assertEquals(new Result.Write(false, "k", item("k", "1", 1)), r);
        assertEquals("1", store.get("k").value());
    }

    @Test
    void putAtTheCurrentIndexReplacesAndMovesTheIndex() {
        long first = put("k", "1", 0).index();
        Result.Write r = put("k", "2", first);
        assertTrue(r.successful());
        assertEquals(2, r.index());
        assertEquals(new Item("k", "2", 2, 1, 0, null), store.get("k"), "the creation index stays");
    }

    @Test
    void putAtAStaleIndexFailsWritesNothingAndReturnsTheCurrentValue() {
        put("k", "1", 0);
        put("k", "2", 1);
        Result.Write r = put("k", "3", 1);
        assertEquals(new Result.Write(false, "k", new Item("k", "2", 2, 1, 0, null)), r);
        assertEquals("2", store.get("k").value());
    }

    @Test
    void putAtAnIndexOnAnAbsentKeyFailsWithIndexZeroAndNoValue() {
        Result.Write r = put("k", "1", 5);
        assertEquals(new Result.Write(false, "k", null), r);
        assertNull(store.get("k"));
    }

    @Test
    void deleteAtTheCurrentIndexRemovesAndReportsIndexZero() {
        put("k", "1", 0);
        Result.Write r = delete("k", 1);
        assertEquals(new Result.Write(true, "k", null), r);
        assertNull(store.get("k"));
    }

    @Test
    void deleteAtAStaleIndexFailsAndReturnsTheCurrentState() {
        put("k", "1", 0);
        put("k", "2", 1);
        assertEquals(new Result.Write(false, "k", new Item("k", "2", 2, 1, 0, null)), delete("k", 1));
        assertEquals(new Result.Write(false, "absent", null), delete("absent", 9));
        assertEquals("2", store.get("k").value());
    }

    @Test
    void abaDeletedAndRecreatedKeyRefusesTheStaleIndex() {
        long first = put("cell", "\"A\"", 0).index();
        delete("cell", first);
        long second = put("cell", "\"A\"", 0).index();
        assertTrue(second > first, "a recreated item gets a newer index");
        Result.Write stale = put("cell", "\"B\"", first);
        assertFalse(stale.successful(), "the same value came back, but the stale index must not match");
        assertEquals(second, stale.index());
        assertEquals("\"A\"", store.get("cell").value());
    }

    @Test
    void keysCompareCaseInsensitivelyAndKeepTheirFirstSpelling() {
        put("Users/Ada", "1", 0);
        Result.Write dup = put("users/ada", "2", 0);
        assertFalse(dup.successful());
        assertEquals("Users/Ada", dup.key());
        Result.Write update = put("USERS/ADA", "3", 1);
        assertTrue(update.successful());
        assertEquals("Users/Ada", update.key());
        assertEquals(new Item("Users/Ada", "3", update.index(), 1, 0, null), store.get("users/ADA"));
        assertTrue(delete("users/ada", update.index()).successful());
        assertEquals("users/ADA", put("users/ADA", "4", 0).key(), "a recreated item takes its new spelling");
    }

    @Test
    void metadataIsStoredWithTheValue() {
        apply(new Command.Put("k", "{\"a\":1}", 0, "{\"@expires\":\"2030-01-01T00:00:00Z\"}"));
        assertEquals("{\"@expires\":\"2030-01-01T00:00:00Z\"}", store.get("k").metadata());
    }

    @Test
    void invalidCommandsAreRejectedAndWriteNothing() {
        String bigKey = "k".repeat(Limits.MAX_KEY_BYTES + 1);
        String bigValue = "\"" + "x".repeat(Limits.MAX_VALUE_BYTES) + "\"";
        List<Command> bad = List.of(
                new Command.Put("", "1", 0, null),
                new Command.Put(bigKey, "1", 0, null),
                new Command.Put("k", "null", 0, null),
                new Command.Put("k", "{not json", 0, null),
                new Command.Put("k", "1 2", 0, null),
                new Command.Put("k", bigValue, 0, null),
                new Command.Put("k", "1", -1, null),
                new Command.Put("k", "1", 0, "[1]"),
                new Command.Put("rvn-atomic/users/1", "{}", 0, null),
                new Command.Put("RVN-ATOMIC/users/1", "{}", 0, null),
                new Command.Delete("k", 0),
                new Command.Delete("k", -3));
        for (Command command : bad) {
            String name = command.toString();
            assertInstanceOf(Result.Rejected.class, apply(command), name.substring(0, Math.min(60, name.length())));
        }
        assertEquals(0, store.size());
    }

    @Test
    void keyLimitCountsUtf8BytesNotCharacters() {
        String maxAscii = "k".repeat(Limits.MAX_KEY_BYTES);
        assertTrue(put(maxAscii, "1", 0).successful());
        String threeByteChars = "€".repeat(Limits.MAX_KEY_BYTES / 3 + 1); // 513 bytes, 171 chars
        assertInstanceOf(Result.Rejected.class, apply(new Command.Put(threeByteChars, "1", 0, null)));
    }

    @Test
    void valueAtTheLimitIsAccepted() {
        String value = "\"" + "x".repeat(Limits.MAX_VALUE_BYTES - 2) + "\"";
        assertTrue(put("big", value, 0).successful());
    }

    @Test
    void commandsInOneEntryApplyInOrderAtTheEntryIndex() {
        List<Result> results = store.applyEntry(entry(5,
                new Command.Put("a", "1", 0, null),
                new Command.Put("a", "2", 0, null),
                new Command.Put("b", "1", 0, null)), 10);
        assertEquals(new Result.Write(true, "a", item("a", "1", 10)), results.get(0));
        assertEquals(new Result.Write(false, "a", item("a", "1", 10)), results.get(1));
        assertEquals(new Result.Write(true, "b", item("b", "1", 10)), results.get(2));
    }

    @Test
    void clusterTimeNeverMovesBackwards() {
        store.applyEntry(Entry.untagged(2_000, List.of()), 1);
        store.applyEntry(Entry.untagged(1_500, List.of()), 2);
        assertEquals(2_000, store.clusterTime(), "a new leader with a slower clock does not turn time back");
        store.applyEntry(Entry.untagged(2_500, List.of()), 3);
        assertEquals(2_500, store.clusterTime());
    }

    @Test
    void replayingAnIndexIsABugNotInput() {
        store.applyEntry(Entry.untagged(1, List.of()), 5);
        assertThrows(IllegalStateException.class, () -> store.applyEntry(Entry.untagged(1, List.of()), 5));
    }

    @Test
    void getAllAndListReturnItemsInKeyOrder() {
        for (String key : List.of("users/3", "Users/1", "users/2", "orders/1", "usersX")) {
            put(key, "1", 0);
        }
        assertEquals(List.of("Users/1", "users/3"),
                store.getAll(List.of("users/3", "missing", "USERS/1", "users/1")).stream().map(Item::key).toList());
        assertEquals(List.of("Users/1", "users/2", "users/3"), keys(store.list("users/", 0, 10)));
        assertEquals(List.of("users/2"), keys(store.list("USERS/", 1, 1)));
        assertEquals(List.of(), keys(store.list("users/", 3, 10)));
        assertEquals(5, store.list("", 0, 100).size());
    }


    private static List<String> keys(List<Item> items) {
        return items.stream().map(Item::key).toList();
    }
}
