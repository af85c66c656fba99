package io.ratchet.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class CodecTest {
    private static final List<Command> COMMANDS = List.of(
            new Command.Put("k€y", "{\"a\":[1,2]}", 0, "{\"@expires\":\"2030-01-01T00:00:00Z\"}"),
            new Command.Put("k", "\"v\"", 17, null),
            new Command.Delete("k", 42));

    @Test
    void everyMessageRoundTrips() {
        assertEquals(COMMANDS, Codec.decodeWriteRequest(Codec.encodeWriteRequest(COMMANDS)));
        Entry entry = new Entry(1_700_000_000_000L, COMMANDS);
        assertEquals(entry, Codec.decodeEntry(Codec.encodeEntry(entry)));
        for (Query q : List.of(new Query.Get("a"), new Query.GetAll(List.of("a", "b")),
                new Query.ListItems("p/", 3, 10), new Query.Stats())) {
            assertEquals(q, Codec.decodeQuery(Codec.encodeQuery(q)));
        }
        List<Result> results = List.of(
                new Result.Write(true, "k", 5, "1", null),
                new Result.Write(false, "k", 0, null, null),
                new Result.Rejected("bad"),
                new Result.Found(null),
                new Result.Found(new Item("k", "1", 3, "{}")),
                new Result.Items(List.of(new Item("a", "1", 1, null), new Item("b", "2", 2, null))),
                new Result.Stats(10, 20, 30));
        assertEquals(results, Codec.decodeResults(Codec.encodeResults(results)));
    }

    @Test
    void garbageIsRefusedWithAClearErrorNeverMisread() {
        byte[] good = Codec.encodeWriteRequest(COMMANDS);
        assertThrows(InvalidCommandException.class, () -> Codec.decodeWriteRequest(new byte[0]));
        assertThrows(InvalidCommandException.class, () -> Codec.decodeWriteRequest(Arrays.copyOf(good, good.length - 3)));
        assertThrows(InvalidCommandException.class, () -> Codec.decodeWriteRequest(Arrays.copyOf(good, good.length + 1)));
        byte[] otherVersion = good.clone();
        otherVersion[0] = 99;
        InvalidCommandException e = assertThrows(InvalidCommandException.class, () -> Codec.decodeWriteRequest(otherVersion));
        assertEquals("format version 99 is not supported (this node speaks 1)", e.getMessage());
        assertThrows(InvalidCommandException.class, () -> Codec.decodeEntry(good), "a request is not an entry");
        byte[] hugeLength = good.clone();
        hugeLength[2] = 0x7f; // command count
        assertThrows(InvalidCommandException.class, () -> Codec.decodeWriteRequest(hugeLength));
    }
}
