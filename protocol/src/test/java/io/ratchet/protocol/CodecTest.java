package io.ratchet.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class CodecTest {
    private static final List<Command> COMMANDS = List.of(
            new Command.Put("k€y", "{\"a\":[1,2]}", 0, "{\"@expires\":\"2030-01-01T00:00:00Z\"}"),
            new Command.Put("locks/p", "\"v\"", 0, null, 30_000, true),
            new Command.Delete("k", 42),
            new Command.Transaction(List.of(
                    new Command.Check("a", 3),
                    new Command.Put("b", "1", 0, null),
                    new Command.Delete("c", 9),
                    new Command.PutDocument("users/1", "{\"name\":\"Ada\"}", 0),
                    new Command.DeleteDocument("users/2", 12))),
            new Command.Sweep(List.of(new Command.KeyIndex("x", 4))));
    private static final List<Request> REQUESTS = List.of(Request.of(COMMANDS),
            new Request("idem-1", 60_000, List.of(new Command.Delete("k", 1))),
            Request.of(List.of(new Command.SetQuota(64L << 20, true))));

    @Test
    void requestsEncodedOneByOneJoinIntoTheSameMessageAsEncodedTogether() {
        List<byte[]> oneByOne = REQUESTS.stream().map(Codec::encodeRequest).toList();
        assertArrayEquals(Codec.encodeRequests(REQUESTS), Codec.joinRequests(oneByOne));
        assertEquals(REQUESTS, Codec.decodeRequests(Codec.joinRequests(oneByOne)));
        int parts = oneByOne.stream().mapToInt(r -> r.length).sum();
        assertEquals(parts + Codec.REQUESTS_FRAMING_BYTES, Codec.joinRequests(oneByOne).length,
                "group commit sizes a message by this framing");
    }

    @Test
    void getsEncodedOneByOneJoinIntoABatchOfGets() {
        List<Query.Get> gets = List.of(new Query.Get("a"), new Query.Get("k€y"), new Query.Get("emails/ada@example.com"));
        List<byte[]> oneByOne = gets.stream().map(Codec::encodeGet).toList();
        Query joined = Codec.decodeQuery(Codec.joinGets(oneByOne));
        assertEquals(new Query.Gets(gets), joined);
        assertEquals(oneByOne.stream().mapToInt(g -> g.length).sum() + Codec.GETS_FRAMING_BYTES,
                Codec.joinGets(oneByOne).length, "the get batcher sizes a message by this framing");
        assertEquals(joined, Codec.decodeQuery(Codec.encodeQuery(joined)));
    }

    @Test
    void everyMessageRoundTrips() {
        assertEquals(REQUESTS, Codec.decodeRequests(Codec.encodeRequests(REQUESTS)));
        Entry entry = Entry.untagged(1_700_000_000_000L, REQUESTS);
        assertEquals(entry, Codec.decodeEntry(Codec.encodeEntry(entry)));
        for (Query q : List.of(new Query.Get("a"), new Query.GetAll(List.of("a", "b")),
                new Query.ListItems("p/", 3, 10), new Query.Stats(), new Query.Watch("k", 7, 1000),
                new Query.GetDocument("users/1"), new Query.Contention(10))) {
            assertEquals(q, Codec.decodeQuery(Codec.encodeQuery(q)));
        }
        Item item = new Item("k", "1", 3, 2, 99, "{}");
        List<Result> results = List.of(
                new Result.Write(true, "k", item),
                new Result.Write(false, "k", null),
                new Result.Txn(false, 0, List.of(new Result.Conflict("a", 3, 4))),
                new Result.Txn(true, 17, List.of()),
                new Result.Swept(2),
                new Result.Rejected("bad"),
                new Result.Found(null),
                new Result.Found(item),
                new Result.Items(List.of(item, new Item("b", "2", 2, 2, 0, null))),
                new Result.Stats(10, 20, 30, 4_096, 1 << 20),
                new Result.QuotaExceeded(1_000, 1 << 20, 300),
                new Result.Quota(1_000, 1 << 20),
                new Result.Watched(true, 5, null),
                new Result.DocumentFound(new Document("users/1", "{}", 8)),
                new Result.DocumentFound(null),
                new Result.SessionOpened(-7, 60_000),
                new Result.SessionExpired(42),
                new Result.Contention(1_700_000_000_000L, List.of(new Result.KeyContention("counters/hot", 9, 3, 6))),
                new Result.Contention(0, List.of()));
        assertEquals(results, Codec.decodeResults(Codec.encodeResults(results)));
        byte[] fromFollower = Codec.withLeader(Codec.encodeResults(results), "127.0.0.1:7103");
        assertEquals(results, Codec.decodeResults(fromFollower), "a follower's results read as any");
        assertEquals("127.0.0.1:7103", Codec.leaderOf(fromFollower));
        assertEquals(null, Codec.leaderOf(Codec.encodeResults(results)));
        Refusal refusal = new Refusal(Refusal.Reason.NOT_LEADER, "n2", "127.0.0.1:7102", "not the leader", true);
        assertEquals(refusal, Codec.decodeRefusal(Codec.encodeRefusal(refusal)));
    }

    @Test
    void aClientTagsItsJoinedRequestsIntoTheBatchAFrontEndDecodesAndAnEntryCarries() {
        List<byte[]> oneByOne = REQUESTS.stream().map(Codec::encodeRequest).toList();
        byte[] tagged = Codec.tagRequests(0x1234_5678_9abcL, 7, Codec.joinRequests(oneByOne));

        Batch batch = new Batch(0x1234_5678_9abcL, 7, REQUESTS);
        assertEquals(List.of(batch), Codec.decodeBatches(tagged));
        assertArrayEquals(Codec.encodeBatches(List.of(batch)), tagged);
        List<byte[]> batches = List.of(Codec.encodeBatch(batch), Codec.encodeBatch(Batch.untagged(REQUESTS)));
        assertEquals(batches.get(0).length + batches.get(1).length + Codec.BATCHES_FRAMING_BYTES,
                Codec.joinBatches(batches).length, "the front end's group commit sizes a proposal by this framing");
        Entry entry = new Entry(1_700_000_000_000L, Codec.decodeBatches(Codec.joinBatches(batches)));
        assertEquals(entry, Codec.decodeEntry(Codec.encodeEntry(entry)));
        assertEquals(List.of(new Command.OpenSession(5, 1_000)), Codec.decodeProposal(Codec.encodeRequests(List.of(
                Request.of(List.of(new Command.OpenSession(5, 1_000)))))).get(0).requests().get(0).commands());
    }

    @Test
    void anEntryWrittenBeforeClientSessionsIsStillReadAsOneUntaggedBatch() {
        // kind 2: stamp, then a requests body, as every log written before client sessions holds
        byte[] requests = Codec.encodeRequests(REQUESTS);
        byte[] legacy = java.nio.ByteBuffer.allocate(requests.length + Long.BYTES)
                .put(requests, 0, 1).put((byte) 2).putLong(1_600_000_000_000L)
                .put(requests, 2, requests.length - 2).array();
        assertEquals(Entry.untagged(1_600_000_000_000L, REQUESTS), Codec.decodeEntry(legacy));
    }

    @Test
    void garbageIsRefusedWithAClearErrorNeverMisread() {
        byte[] good = Codec.encodeRequests(REQUESTS);
        assertThrows(InvalidCommandException.class, () -> Codec.decodeRequests(new byte[0]));
        assertThrows(InvalidCommandException.class, () -> Codec.decodeRequests(Arrays.copyOf(good, good.length - 3)));
        assertThrows(InvalidCommandException.class, () -> Codec.decodeRequests(Arrays.copyOf(good, good.length + 1)));
        byte[] otherVersion = good.clone();
        otherVersion[0] = 99;
        NewerFormatException e = assertThrows(NewerFormatException.class, () -> Codec.decodeRequests(otherVersion));
        assertEquals("format version 99 is newer than this release reads (1): a later release wrote it", e.getMessage());
        assertEquals(99, e.format());
        otherVersion[0] = 0;
        InvalidCommandException older = assertThrows(InvalidCommandException.class, () -> Codec.decodeRequests(otherVersion));
        assertEquals("format version 0 is not supported (this node speaks 1)", older.getMessage());
        assertThrows(InvalidCommandException.class, () -> Codec.decodeEntry(good), "a request is not an entry");
        byte[] hugeLength = good.clone();
        hugeLength[2] = 0x7f; // request count
        assertThrows(InvalidCommandException.class, () -> Codec.decodeRequests(hugeLength));
        byte[] opAlone = Codec.encodeRequests(List.of(Request.of(List.of(new Command.Delete("k", 1)))));
        opAlone[2 + 4 + 4 + 8 + 4] = 5; // the delete's tag turned into a check, which only a transaction may hold
        assertThrows(InvalidCommandException.class, () -> Codec.decodeRequests(opAlone));
    }
}
