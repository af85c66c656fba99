package io.ratchet.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.EnumSet;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The bytes of one message of every kind, and of every command, query, result, refusal reason and
 * permission change, as the previous release writes them. A node of that release and a client of this
 * one (and the other way round) read each other's messages, and the Raft log holds these same bytes, so
 * none of them may change without a new format version: a change that alters one fails here, not in a
 * mixed cluster. Spaces in the hex separate fields and mean nothing.
 */
class WireBytesTest {
    private static final String HASH = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    /** {@link #HASH} as modified UTF-8: its length, then its 64 characters. */
    private static final String HASH_UTF = "0040 3966383664303831383834633764363539613266656161306335356164303135"
            + "6133626634663162326230623832326364313564366331356230663030613038";
    private static final Item ITEM = new Item("k", "1", 3, 2, 99, "{}");
    private static final String ITEM_BYTES = "00000001 6b 00000001 31 0000000000000003 0000000000000002 0000000000000063 00000002 7b7d";
    /** A requests message of one request without an idempotency key, holding one command: what precedes each command. */
    private static final String ONE_COMMAND = "01 01 00000001 ffffffff 0000000000000000 00000001";
    /** A results message of one result: what precedes each result. */
    private static final String ONE_RESULT = "01 04 00000001";
    private static final long STAMP = 1_700_000_000_000L;

    /** The kinds this test has pinned: each family's test ends by checking it pinned every kind of it. */
    private final Set<WireKind> pinned = new HashSet<>();

    @Test
    void everyCommandAndTransactionOperation() {
        command("01 00000005 6be282ac79 00000007 7b2261223a317d 0000000000000000 0000000a 7b226d223a747275657d"
                + " 0000000000007530 01", new Command.Put("k€y", "{\"a\":1}", 0, "{\"m\":true}", 30_000, true));
        command("02 00000001 6b 000000000000002a", new Command.Delete("k", 42));
        command("03 00000005"
                + " 05 00000001 61 0000000000000003"
                + " 01 00000001 62 00000001 31 0000000000000007 ffffffff 0000000000000000 00"
                + " 02 00000001 63 0000000000000009"
                + " 06 00000003 752f31 00000002 7b7d 0000000000000000"
                + " 07 00000003 752f32 000000000000000c",
                new Command.Transaction(List.of(new Command.Check("a", 3), new Command.Put("b", "1", 7, null),
                        new Command.Delete("c", 9), new Command.PutDocument("u/1", "{}", 0),
                        new Command.DeleteDocument("u/2", 12))));
        command("04 00000001 00000001 78 0000000000000004", new Command.Sweep(List.of(new Command.KeyIndex("x", 4))));
        command("08 0000000000000005 000000000000ea60", new Command.OpenSession(5, 60_000));
        command("09 0000000000100000 01", new Command.SetQuota(1L << 20, true));
        command("0b 00000002 7431 00000000 00000002 00000000 00000003 0000000000001388 01"
                + " 00000001 02 00000001 6b 0000000000000002",
                new Command.Prepare("t1", 0, List.of(0, 3), 5_000, true, List.of(new Command.Delete("k", 2))));
        command("0c 00000002 7431 01", new Command.Settle("t1", Command.Settle.Step.COMMIT));
        command("0d 000000000000ea60", new Command.Fence(60_000));
        command("0e 00000001 6b fffffffffffffffe", new Command.Add("k", -2));

        Set<WireKind> all = new HashSet<>(EnumSet.complementOf(EnumSet.of(Command.Kind.AUTH_CHANGE)));
        all.addAll(EnumSet.allOf(Command.Op.Kind.class));
        assertEquals(all, pinned, "every command and operation (permission changes below)");
    }

    @Test
    void everyPermissionChange() {
        command("0a 01 01", new Command.AuthChange.Enable(true));
        command("0a 02 0003 616461 " + HASH_UTF + " 00000002 0004 726f6f74 0003 6f7073",
                new Command.AuthChange.AddUser("ada", HASH, List.of("root", "ops")));
        command("0a 03 0003 616461", new Command.AuthChange.RemoveUser("ada"));
        command("0a 04 0003 6f7073 01 0006 6c6f636b732f", new Command.AuthChange.Grant("ops", AuthTable.Permission.WRITE, "locks/"));
        command("0a 05 0003 6f7073 02 0000", new Command.AuthChange.Revoke("ops", AuthTable.Permission.ADMIN, ""));
        pinned.remove(Command.Kind.AUTH_CHANGE);
        assertEquals(EnumSet.allOf(Command.AuthChange.Kind.class), pinned);
    }

    @Test
    void everyQuery() {
        query("01 03 01 00000001 61", new Query.Get("a"));
        query("01 03 02 00000002 00000001 61 00000001 62", new Query.GetAll(List.of("a", "b")));
        query("01 03 03 00000002 702f 00000003 0000000a", new Query.ListItems("p/", 3, 10));
        query("01 03 04", new Query.Stats());
        query("01 03 05 00000001 6b 0000000000000007 00000000000003e8", new Query.Watch("k", 7, 1000));
        query("01 03 06 00000003 752f31", new Query.GetDocument("u/1"));
        query("01 03 07 00000002 00000001 61 00000001 62", new Query.Gets(List.of(new Query.Get("a"), new Query.Get("b"))));
        query("01 03 08 0000000a", new Query.Contention(10));
        query("01 03 09", new Query.AuthStatus());
        query("01 03 0a", new Query.Shape());
        query("01 03 0b 00000001 00000002 7431", new Query.TxnStatus(List.of("t1")));
        assertEquals(EnumSet.allOf(Query.Kind.class), pinned);
    }

    @Test
    void everyResult() {
        result("01 01 00000001 6b 01 " + ITEM_BYTES, new Result.Write(true, "k", ITEM));
        result("01 00 00000001 6b 00", new Result.Write(false, "k", null));
        result("02 00000003 626164", new Result.Rejected("bad"));
        result("03 01 " + ITEM_BYTES, new Result.Found(ITEM));
        result("04 00000001 " + ITEM_BYTES, new Result.Items(List.of(ITEM)));
        result("05 000000000000000a 0000000000000014 000000000000001e 0000000000001000 0000000000100000",
                new Result.Stats(10, 20, 30, 4_096, 1 << 20));
        result("06 00 0000000000000000 00000001 00000001 61 0000000000000003 0000000000000004",
                new Result.Txn(false, 0, List.of(new Result.Conflict("a", 3, 4))));
        result("07 00000002", new Result.Swept(2));
        result("08 01 0000000000000005 00", new Result.Watched(true, 5, null));
        result("09 01 00000003 752f31 00000002 7b7d 0000000000000008", new Result.DocumentFound(new Document("u/1", "{}", 8)));
        result("0a fffffffffffffff9 000000000000ea60", new Result.SessionOpened(-7, 60_000));
        result("0b 000000000000002a", new Result.SessionExpired(42));
        result("0c 0000018bcfe56800 00000001 00000003 686f74 0000000000000009 0000000000000003 0000000000000006",
                new Result.Contention(STAMP, List.of(new Result.KeyContention("hot", 9, 3, 6))));
        result("0d 00000000000003e8 0000000000100000 000000000000012c", new Result.QuotaExceeded(1_000, 1 << 20, 300));
        result("0e 00000000000003e8 0000000000100000", new Result.Quota(1_000, 1 << 20));
        result("0f 01 00000001 0003 616461 " + HASH_UTF + " 00000001 0004 726f6f74 00000001 0003 6f7073 00000001 00 0002 612f",
                new Result.AuthState(new AuthTable(true, Map.of("ada", new AuthTable.User("ada", HASH, List.of("root"))),
                        Map.of("ops", List.of(new AuthTable.Grant(AuthTable.Permission.READ, "a/"))))));
        result("10 00000002 6e31 0000000000000005 000000000000000a", new Result.DiskFull("n1", 5, 10));
        result("11 00000002 00000007 6e313a37303031 00000000", new Result.Shape(List.of("n1:7001", "")));
        result("12 00000002 7431 02 00000003 0000000000000009",
                new Result.TxnState("t1", Result.TxnState.Record.COMMITTED, 3, 9));
        result("13 00000001 6b 00000002 7431", new Result.Locked("k", "t1"));
        result("14 0000018bcfe56800", new Result.Fenced(STAMP));
        result("15 00000001 6b " + ITEM_BYTES, new Result.NotAnInteger("k", ITEM));
        result("16 00000001 6b " + ITEM_BYTES + " 7fffffffffffffff", new Result.Overflow("k", ITEM, Long.MAX_VALUE));
        result("17 00000003 616464 00000001 6d", new Result.Unsupported("add", "m"));
        assertEquals(EnumSet.allOf(Result.Kind.class), pinned);
    }

    @Test
    void everyRefusalReason() {
        refusal("01 07 00 ffffffff ffffffff 00000001 6d 00", new Refusal(Refusal.Reason.NOT_LEADER, null, null, "m", false));
        refusal("01 07 01 ffffffff ffffffff 00000001 6d 00", Refusal.noLeader("m"));
        refusal("01 07 02 ffffffff ffffffff 00000001 6d 00", Refusal.invalid("m"));
        refusal("01 07 03 ffffffff ffffffff 00000001 6d 00", Refusal.unavailable("m"));
        refusal("01 07 04 ffffffff ffffffff 00000001 6d 00", Refusal.unauthenticated("m"));
        refusal("01 07 05 ffffffff ffffffff 00000001 6d 00", Refusal.forbidden("m"));
        refusal("01 07 00 00000002 6e32 00000003 683a31 00000020 6e6f7420746865206c65616465723b20746865206c6561646572206973206e32 01",
                Refusal.notLeader("n2", "h:1").afterSubmission());
        assertEquals(EnumSet.allOf(Refusal.Reason.class), pinned);
    }

    @Test
    void everyMessageKind() {
        Request delete = Request.of(List.of(new Command.Delete("k", 1)));
        String deleteRequest = "ffffffff 0000000000000000 00000001 02 00000001 6b 0000000000000001";
        assertPinned("01 01 00000001 00000004 6964656d 000000000000ea60 00000001 02 00000001 6b 0000000000000001",
                Codec.encodeRequests(List.of(new Request("idem", 60_000, List.of(new Command.Delete("k", 1))))));
        assertEquals(List.of(new Request("idem", 60_000, List.of(new Command.Delete("k", 1)))), Codec.decodeRequests(
                bytes("01 01 00000001 00000004 6964656d 000000000000ea60 00000001 02 00000001 6b 0000000000000001")));

        // kind 2: no release writes it any more, but logs written before client sessions hold it
        assertEquals(Entry.untagged(STAMP, List.of(delete)),
                Codec.decodeEntry(bytes("01 02 0000018bcfe56800 00000001 " + deleteRequest)));

        Batch batch = new Batch(0x1234L, 7, List.of(delete));
        String batchBytes = "0000000000001234 0000000000000007 00000001 " + deleteRequest;
        assertPinned("01 05 00000001 " + batchBytes, Codec.encodeBatches(List.of(batch)));
        assertEquals(List.of(batch), Codec.decodeBatches(bytes("01 05 00000001 " + batchBytes)));

        Entry entry = new Entry(STAMP, List.of(batch));
        assertPinned("01 06 0000018bcfe56800 00000001 " + batchBytes, Codec.encodeEntry(entry));
        assertEquals(entry, Codec.decodeEntry(bytes("01 06 0000018bcfe56800 00000001 " + batchBytes)));

        byte[] fromFollower = Codec.withLeader(Codec.encodeResults(List.of(new Result.Swept(2))), "h:1");
        assertPinned("01 08 00000003 683a31 00000001 07 00000002", fromFollower);
        assertEquals(List.of(new Result.Swept(2)), Codec.decodeResults(bytes("01 08 00000003 683a31 00000001 07 00000002")));
        // kinds 3, 4 and 7 (query, results, refusal) are pinned by the tests above
    }

    @Test
    void aCallOnTheCallsStream() {
        assertPinned("0000000000000009 02 01 03 04", Rpc.frame(9, Rpc.READ_CALL, Codec.encodeQuery(new Query.Stats())));
        assertPinned("0000000000000009 01 04 00000000", Rpc.answerFrame(9, new byte[] {1, 4, 0, 0, 0, 0}));
        assertEquals(List.of((byte) 1, (byte) 2, (byte) 3), List.of(Rpc.WRITE_CALL, Rpc.READ_CALL, Rpc.STALE_READ_CALL));
    }

    private void command(String hex, Command command) {
        pinned.add(command.kind());
        if (command instanceof Command.AuthChange change) {
            pinned.add(change.changeKind());
        }
        if (command instanceof Command.Transaction t) {
            t.ops().forEach(op -> pinned.add(op.opKind()));
        }
        List<Request> requests = List.of(Request.of(List.of(command)));
        assertPinned(ONE_COMMAND + " " + hex, Codec.encodeRequests(requests));
        assertEquals(requests, Codec.decodeRequests(bytes(ONE_COMMAND + " " + hex)));
    }

    private void query(String hex, Query query) {
        pinned.add(query.kind());
        assertPinned(hex, Codec.encodeQuery(query));
        assertEquals(query, Codec.decodeQuery(bytes(hex)));
    }

    private void result(String hex, Result result) {
        pinned.add(result.kind());
        assertPinned(ONE_RESULT + " " + hex, Codec.encodeResults(List.of(result)));
        assertEquals(List.of(result), Codec.decodeResults(bytes(ONE_RESULT + " " + hex)));
    }

    private void refusal(String hex, Refusal refusal) {
        pinned.add(refusal.reason());
        assertPinned(hex, Codec.encodeRefusal(refusal));
        assertEquals(refusal, Codec.decodeRefusal(bytes(hex)));
    }

    private static void assertPinned(String hex, byte[] encoded) {
        assertEquals(hex.replace(" ", ""), HexFormat.of().formatHex(encoded));
    }

    private static byte[] bytes(String hex) {
        return HexFormat.of().parseHex(hex.replace(" ", ""));
    }
}
