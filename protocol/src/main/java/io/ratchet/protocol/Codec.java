package io.ratchet.protocol;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The binary wire and log format. Every message starts with a format version byte and a kind byte, so
 * a node can refuse what it does not understand instead of misreading it. Strings are a length
 * (-1 for null) and UTF-8 bytes.
 */
public final class Codec {
    /**
     * Bumped whenever an encoding changes, so that an older release can tell what it cannot read (the
     * compatibility rules are in docs/DESIGN.md, "Versions and upgrades"); every message and log entry
     * carries it first.
     */
    public static final byte FORMAT_VERSION = 1;

    private static final byte KIND_REQUESTS = 1;
    private static final byte KIND_ENTRY = 2;
    private static final byte KIND_QUERY = 3;
    private static final byte KIND_RESULTS = 4;
    /** What a client sends a front end, and a front end proposes to Raft: tagged batches of requests. */
    private static final byte KIND_BATCHES = 5;
    /** A log entry of batches. Entries of kind {@link #KIND_ENTRY} (plain requests) are still read. */
    private static final byte KIND_BATCH_ENTRY = 6;
    /** A front end's refusal of a message: see {@link Refusal}. */
    private static final byte KIND_REFUSAL = 7;
    /** Results a follower served, with the leader's client address after the head (see {@link #withLeader}). */
    private static final byte KIND_RESULTS_FROM_FOLLOWER = 8;

    // commands and transaction operations share one tag space
    private static final byte PUT = 1;
    private static final byte DELETE = 2;
    private static final byte TRANSACTION = 3;
    private static final byte SWEEP = 4;
    private static final byte CHECK = 5;
    private static final byte PUT_DOCUMENT = 6;
    private static final byte DELETE_DOCUMENT = 7;
    private static final byte OPEN_SESSION = 8;
    private static final byte SET_QUOTA = 9;
    private static final byte AUTH_CHANGE = 10;

    private static final byte GET = 1;
    private static final byte GET_ALL = 2;
    private static final byte LIST = 3;
    private static final byte STATS = 4;
    private static final byte WATCH = 5;
    private static final byte GET_DOCUMENT = 6;
    private static final byte GETS = 7;
    private static final byte CONTENTION_QUERY = 8;
    private static final byte AUTH_STATUS = 9;

    private static final byte WRITE = 1;
    private static final byte REJECTED = 2;
    private static final byte FOUND = 3;
    private static final byte ITEMS = 4;
    private static final byte STATS_RESULT = 5;
    private static final byte TXN = 6;
    private static final byte SWEPT = 7;
    private static final byte WATCHED = 8;
    private static final byte DOCUMENT_FOUND = 9;
    private static final byte SESSION_OPENED = 10;
    private static final byte SESSION_EXPIRED = 11;
    private static final byte CONTENTION = 12;
    private static final byte QUOTA_EXCEEDED = 13;
    private static final byte QUOTA = 14;
    private static final byte AUTH_STATE = 15;
    private static final byte DISK_FULL = 16;

    /** Entries may hold several requests (group commit), so counts inside them get a generous bound. */
    private static final int MAX_COUNT = 1 << 20;

    private Codec() {
    }

    // ---- top-level messages

    /** What a client sends for writes: one or more requests, applied in order. */
    public static byte[] encodeRequests(List<Request> requests) {
        return encode(KIND_REQUESTS, out -> writeRequests(out, requests));
    }

    /**
     * One request in the form a requests message carries it. {@link #joinRequests} puts several such
     * encodings into one message without encoding them again: how a client coalesces requests.
     */
    public static byte[] encodeRequest(Request request) {
        return encodeBare(out -> writeRequest(out, request));
    }

    /** What a requests message starts with, before the count of its requests. */
    private static final byte[] REQUESTS_HEAD = {FORMAT_VERSION, KIND_REQUESTS};
    /** The bytes a requests message adds around its requests' own encodings: its head and the count. */
    public static final int REQUESTS_FRAMING_BYTES = REQUESTS_HEAD.length + Integer.BYTES;

    /**
     * A requests message holding the given {@link #encodeRequest} encodings in order; {@link #decodeRequests}
     * reads it as the list of those requests.
     */
    public static byte[] joinRequests(List<byte[]> encodedRequests) {
        return join(REQUESTS_HEAD, encodedRequests);
    }

    /** One get in the form a {@link Query.Gets} message carries it; {@link #joinGets} joins several. */
    public static byte[] encodeGet(Query.Get get) {
        byte[] key = get.key().getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(4 + key.length).putInt(key.length).put(key).array();
    }

    /** What a {@link Query.Gets} message starts with, before the count of its gets. */
    private static final byte[] GETS_HEAD = {FORMAT_VERSION, KIND_QUERY, GETS};
    /** The bytes a {@link Query.Gets} message adds around its gets' own encodings: its head and the count. */
    public static final int GETS_FRAMING_BYTES = GETS_HEAD.length + Integer.BYTES;

    /** A {@link Query.Gets} query message holding the given {@link #encodeGet} encodings in order. */
    public static byte[] joinGets(List<byte[]> encodedGets) {
        return join(GETS_HEAD, encodedGets);
    }

    /** {@code head}, the number of parts, then the parts as they are. */
    private static byte[] join(byte[] head, List<byte[]> parts) {
        int size = head.length + Integer.BYTES;
        for (byte[] part : parts) {
            size += part.length;
        }
        ByteBuffer message = ByteBuffer.allocate(size).put(head).putInt(parts.size());
        parts.forEach(message::put);
        return message.array();
    }

    public static List<Request> decodeRequests(byte[] bytes) {
        return decode(bytes, KIND_REQUESTS, Codec::readRequests);
    }

    public static byte[] encodeEntry(Entry entry) {
        return encode(KIND_BATCH_ENTRY, out -> {
            out.writeLong(entry.stamp());
            out.writeInt(entry.batches().size());
            for (Batch b : entry.batches()) {
                writeBatch(out, b);
            }
        });
    }

    /** A log entry: of batches, or (as written before client sessions) of plain requests. */
    public static Entry decodeEntry(byte[] bytes) {
        if (kindOf(bytes) == KIND_ENTRY) {
            return decode(bytes, KIND_ENTRY, in -> Entry.untagged(in.readLong(), readRequests(in)));
        }
        return decode(bytes, KIND_BATCH_ENTRY, in -> new Entry(in.readLong(), readBatches(in)));
    }

    // ---- batches: what clients send front ends, and front ends propose

    /** One batch in the form a batches message carries it; {@link #joinBatches} joins several. */
    public static byte[] encodeBatch(Batch batch) {
        return encodeBare(out -> writeBatch(out, batch));
    }

    public static byte[] encodeBatches(List<Batch> batches) {
        return encode(KIND_BATCHES, out -> {
            out.writeInt(batches.size());
            for (Batch b : batches) {
                writeBatch(out, b);
            }
        });
    }

    /** What a batches message starts with, before the count of its batches. */
    private static final byte[] BATCHES_HEAD = {FORMAT_VERSION, KIND_BATCHES};
    /** The bytes a batches message adds around its batches' own encodings: its head and the count. */
    public static final int BATCHES_FRAMING_BYTES = BATCHES_HEAD.length + Integer.BYTES;

    /** A batches message holding the given {@link #encodeBatch} encodings in order. */
    public static byte[] joinBatches(List<byte[]> encodedBatches) {
        return join(BATCHES_HEAD, encodedBatches);
    }

    /**
     * A batches message holding one batch: the tag, then the requests of a requests message (from
     * {@link #joinRequests}) as they are. How a client tags what its own group commit joined.
     */
    public static byte[] tagRequests(long session, long sequence, byte[] requestsMessage) {
        if (requestsMessage.length < REQUESTS_FRAMING_BYTES || requestsMessage[0] != FORMAT_VERSION
                || requestsMessage[1] != KIND_REQUESTS) {
            throw new IllegalArgumentException("not a requests message");
        }
        int body = requestsMessage.length - REQUESTS_HEAD.length;
        return ByteBuffer.allocate(BATCHES_FRAMING_BYTES + 2 * Long.BYTES + body)
                .put(BATCHES_HEAD).putInt(1)
                .putLong(session).putLong(sequence)
                .put(requestsMessage, REQUESTS_HEAD.length, body)
                .array();
    }

    public static List<Batch> decodeBatches(byte[] bytes) {
        return decode(bytes, KIND_BATCHES, Codec::readBatches);
    }

    /**
     * What a node is asked to append: a batches message, or a plain requests message (one untagged
     * batch), which the sweeper and Ratis-protocol tools send.
     */
    public static List<Batch> decodeProposal(byte[] bytes) {
        if (kindOf(bytes) == KIND_REQUESTS) {
            List<Request> requests = decodeRequests(bytes);
            return requests.isEmpty() ? List.of() : List.of(Batch.untagged(requests));
        }
        return decodeBatches(bytes);
    }

    private static void writeBatch(DataOutputStream out, Batch b) throws IOException {
        out.writeLong(b.session());
        out.writeLong(b.sequence());
        writeRequests(out, b.requests());
    }

    private static List<Batch> readBatches(DataInputStream in) throws IOException {
        int n = readCount(in);
        List<Batch> batches = new ArrayList<>(Math.min(n, 64));
        for (int i = 0; i < n; i++) {
            batches.add(new Batch(in.readLong(), in.readLong(), readRequests(in)));
        }
        return batches;
    }

    // ---- refusals

    public static byte[] encodeRefusal(Refusal refusal) {
        return encode(KIND_REFUSAL, out -> {
            out.writeByte(refusal.reason().ordinal());
            writeString(out, refusal.leaderId());
            writeString(out, refusal.leaderAddress());
            writeString(out, refusal.message());
            out.writeBoolean(refusal.inDoubt());
        });
    }

    public static Refusal decodeRefusal(byte[] bytes) {
        return decode(bytes, KIND_REFUSAL, in -> new Refusal(Refusal.Reason.of(in.readUnsignedByte()), readString(in),
                readString(in), readString(in), in.readBoolean()));
    }

    /** Whether a front end's answer is a {@link Refusal} rather than results. */
    public static boolean isRefusal(byte[] bytes) {
        return kindOf(bytes) == KIND_REFUSAL;
    }

    /** The kind byte of a message, or -1 when it is too short to have one. */
    private static int kindOf(byte[] bytes) {
        return bytes.length < 2 ? -1 : bytes[1];
    }

    public static byte[] encodeQuery(Query query) {
        return encode(KIND_QUERY, out -> writeQuery(out, query));
    }

    public static Query decodeQuery(byte[] bytes) {
        return decode(bytes, KIND_QUERY, Codec::readQuery);
    }

    public static byte[] encodeResults(List<Result> results) {
        return encode(KIND_RESULTS, out -> writeResults(out, results));
    }

    /** Results, whether a leader or a follower served them ({@link #withLeader}). */
    public static List<Result> decodeResults(byte[] bytes) {
        if (kindOf(bytes) == KIND_RESULTS_FROM_FOLLOWER) {
            return decode(bytes, KIND_RESULTS_FROM_FOLLOWER, in -> {
                readString(in);
                return readResults(in);
            });
        }
        return decode(bytes, KIND_RESULTS, Codec::readResults);
    }

    /**
     * A follower's answer to a linearizable read: the results message {@code results}, and the address
     * where the leader takes clients. A client that only reads is never refused by a follower (its ReadIndex
     * asks the leader), so without this it would keep reading through the first node it was given,
     * costing that node and the leader a round between them for every read.
     */
    public static byte[] withLeader(byte[] results, String leaderAddress) {
        if (kindOf(results) != KIND_RESULTS) {
            throw new IllegalArgumentException("not a results message");
        }
        return encode(KIND_RESULTS_FROM_FOLLOWER, out -> {
            writeString(out, leaderAddress);
            out.write(results, 2, results.length - 2);
        });
    }

    /** The leader's address a follower's results carry ({@link #withLeader}), or null. */
    public static String leaderOf(byte[] results) {
        if (kindOf(results) != KIND_RESULTS_FROM_FOLLOWER) {
            return null;
        }
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(results, 2, results.length - 2))) {
            return readString(in);
        } catch (IOException e) {
            throw new InvalidCommandException("results message cannot be decoded: " + e.getMessage(), e);
        }
    }

    // ---- requests and commands

    private static void writeRequests(DataOutputStream out, List<Request> requests) throws IOException {
        out.writeInt(requests.size());
        for (Request r : requests) {
            writeRequest(out, r);
        }
    }

    private static void writeRequest(DataOutputStream out, Request r) throws IOException {
        writeString(out, r.idempotencyKey());
        out.writeLong(r.retentionMillis());
        out.writeInt(r.commands().size());
        for (Command c : r.commands()) {
            writeCommand(out, c);
        }
    }

    private static List<Request> readRequests(DataInputStream in) throws IOException {
        int n = readCount(in);
        List<Request> requests = new ArrayList<>(Math.min(n, 64));
        for (int i = 0; i < n; i++) {
            String key = readString(in);
            long retention = in.readLong();
            int m = readCount(in);
            List<Command> commands = new ArrayList<>(Math.min(m, 64));
            for (int j = 0; j < m; j++) {
                commands.add(readCommand(in));
            }
            requests.add(new Request(key, retention, commands));
        }
        return requests;
    }

    private static void writeCommand(DataOutputStream out, Command command) throws IOException {
        if (command instanceof Command.Transaction t) {
            out.writeByte(TRANSACTION);
            out.writeInt(t.ops().size());
            for (Command.Op op : t.ops()) {
                writeOp(out, op);
            }
        } else if (command instanceof Command.OpenSession o) {
            out.writeByte(OPEN_SESSION);
            out.writeLong(o.id());
            out.writeLong(o.timeoutMillis());
        } else if (command instanceof Command.SetQuota q) {
            out.writeByte(SET_QUOTA);
            out.writeLong(q.bytes());
            out.writeBoolean(q.ifUnset());
        } else if (command instanceof Command.AuthChange a) {
            out.writeByte(AUTH_CHANGE);
            AuthTableCodec.writeChange(out, a);
        } else if (command instanceof Command.Sweep s) {
            out.writeByte(SWEEP);
            out.writeInt(s.candidates().size());
            for (Command.KeyIndex c : s.candidates()) {
                writeString(out, c.key());
                out.writeLong(c.index());
            }
        } else {
            writeOp(out, (Command.Op) command);
        }
    }

    private static Command readCommand(DataInputStream in) throws IOException {
        byte type = in.readByte();
        if (type == TRANSACTION) {
            int n = readCount(in);
            List<Command.Op> ops = new ArrayList<>(Math.min(n, 64));
            for (int i = 0; i < n; i++) {
                ops.add(readOp(in, in.readByte()));
            }
            return new Command.Transaction(ops);
        }
        if (type == SWEEP) {
            int n = readCount(in);
            List<Command.KeyIndex> candidates = new ArrayList<>(Math.min(n, 64));
            for (int i = 0; i < n; i++) {
                candidates.add(new Command.KeyIndex(readString(in), in.readLong()));
            }
            return new Command.Sweep(candidates);
        }
        if (type == OPEN_SESSION) {
            return new Command.OpenSession(in.readLong(), in.readLong());
        }
        if (type == SET_QUOTA) {
            return new Command.SetQuota(in.readLong(), in.readBoolean());
        }
        if (type == AUTH_CHANGE) {
            return AuthTableCodec.readChange(in);
        }
        Command.Op op = readOp(in, type);
        if (op instanceof Command c) {
            return c;
        }
        throw new InvalidCommandException("operation type " + type + " is only valid inside a transaction");
    }

    private static void writeOp(DataOutputStream out, Command.Op op) throws IOException {
        if (op instanceof Command.Put p) {
            out.writeByte(PUT);
            writeString(out, p.key());
            writeString(out, p.value());
            out.writeLong(p.index());
            writeString(out, p.metadata());
            out.writeLong(p.ttlMillis());
            out.writeBoolean(p.expiredIsAbsent());
        } else if (op instanceof Command.Delete d) {
            out.writeByte(DELETE);
            writeString(out, d.key());
            out.writeLong(d.index());
        } else if (op instanceof Command.Check c) {
            out.writeByte(CHECK);
            writeString(out, c.key());
            out.writeLong(c.index());
        } else if (op instanceof Command.PutDocument d) {
            out.writeByte(PUT_DOCUMENT);
            writeString(out, d.id());
            writeString(out, d.json());
            out.writeLong(d.guardIndex());
        } else if (op instanceof Command.DeleteDocument d) {
            out.writeByte(DELETE_DOCUMENT);
            writeString(out, d.id());
            out.writeLong(d.guardIndex());
        } else {
            throw new IllegalArgumentException("no encoding for " + op);
        }
    }

    private static Command.Op readOp(DataInputStream in, byte type) throws IOException {
        return switch (type) {
            case PUT -> new Command.Put(readString(in), readString(in), in.readLong(), readString(in), in.readLong(),
                    in.readBoolean());
            case DELETE -> new Command.Delete(readString(in), in.readLong());
            case CHECK -> new Command.Check(readString(in), in.readLong());
            case PUT_DOCUMENT -> new Command.PutDocument(readString(in), readString(in), in.readLong());
            case DELETE_DOCUMENT -> new Command.DeleteDocument(readString(in), in.readLong());
            default -> throw new InvalidCommandException("unknown command type " + type);
        };
    }

    // ---- queries

    private static void writeQuery(DataOutputStream out, Query query) throws IOException {
        if (query instanceof Query.Get g) {
            out.writeByte(GET);
            writeString(out, g.key());
        } else if (query instanceof Query.GetAll g) {
            out.writeByte(GET_ALL);
            out.writeInt(g.keys().size());
            for (String key : g.keys()) {
                writeString(out, key);
            }
        } else if (query instanceof Query.ListItems l) {
            out.writeByte(LIST);
            writeString(out, l.prefix());
            out.writeInt(l.start());
            out.writeInt(l.pageSize());
        } else if (query instanceof Query.Stats) {
            out.writeByte(STATS);
        } else if (query instanceof Query.Watch w) {
            out.writeByte(WATCH);
            writeString(out, w.key());
            out.writeLong(w.afterIndex());
            out.writeLong(w.timeoutMillis());
        } else if (query instanceof Query.Gets g) {
            out.writeByte(GETS);
            out.writeInt(g.gets().size());
            for (Query.Get get : g.gets()) {
                writeString(out, get.key());
            }
        } else if (query instanceof Query.GetDocument g) {
            out.writeByte(GET_DOCUMENT);
            writeString(out, g.id());
        } else if (query instanceof Query.Contention c) {
            out.writeByte(CONTENTION_QUERY);
            out.writeInt(c.limit());
        } else if (query instanceof Query.AuthStatus) {
            out.writeByte(AUTH_STATUS);
        } else {
            throw new IllegalArgumentException("no encoding for " + query);
        }
    }

    private static Query readQuery(DataInputStream in) throws IOException {
        byte type = in.readByte();
        return switch (type) {
            case GET -> new Query.Get(readString(in));
            case GET_ALL -> {
                int n = readCount(in);
                List<String> keys = new ArrayList<>(Math.min(n, 64));
                for (int i = 0; i < n; i++) {
                    keys.add(readString(in));
                }
                yield new Query.GetAll(keys);
            }
            case LIST -> new Query.ListItems(readString(in), in.readInt(), in.readInt());
            case STATS -> new Query.Stats();
            case WATCH -> new Query.Watch(readString(in), in.readLong(), in.readLong());
            case GET_DOCUMENT -> new Query.GetDocument(readString(in));
            case CONTENTION_QUERY -> new Query.Contention(in.readInt());
            case AUTH_STATUS -> new Query.AuthStatus();
            case GETS -> {
                int n = readCount(in);
                List<Query.Get> gets = new ArrayList<>(Math.min(n, 64));
                for (int i = 0; i < n; i++) {
                    gets.add(new Query.Get(readString(in)));
                }
                yield new Query.Gets(gets);
            }
            default -> throw new InvalidCommandException("unknown query type " + type);
        };
    }

    // ---- results

    private static void writeResults(DataOutputStream out, List<Result> results) throws IOException {
        out.writeInt(results.size());
        for (Result result : results) {
            writeResult(out, result);
        }
    }

    private static List<Result> readResults(DataInputStream in) throws IOException {
        int n = readCount(in);
        List<Result> results = new ArrayList<>(Math.min(n, 64));
        for (int i = 0; i < n; i++) {
            results.add(readResult(in));
        }
        return results;
    }

    private static void writeResult(DataOutputStream out, Result result) throws IOException {
        if (result instanceof Result.Write w) {
            out.writeByte(WRITE);
            out.writeBoolean(w.successful());
            writeString(out, w.key());
            writeNullableItem(out, w.item());
        } else if (result instanceof Result.Txn t) {
            out.writeByte(TXN);
            out.writeBoolean(t.successful());
            out.writeLong(t.index());
            out.writeInt(t.conflicts().size());
            for (Result.Conflict c : t.conflicts()) {
                writeString(out, c.key());
                out.writeLong(c.expected());
                out.writeLong(c.actual());
            }
        } else if (result instanceof Result.Swept s) {
            out.writeByte(SWEPT);
            out.writeInt(s.removed());
        } else if (result instanceof Result.Rejected r) {
            out.writeByte(REJECTED);
            writeString(out, r.reason());
        } else if (result instanceof Result.Found f) {
            out.writeByte(FOUND);
            writeNullableItem(out, f.item());
        } else if (result instanceof Result.Items items) {
            out.writeByte(ITEMS);
            out.writeInt(items.items().size());
            for (Item item : items.items()) {
                writeItem(out, item);
            }
        } else if (result instanceof Result.Stats s) {
            out.writeByte(STATS_RESULT);
            out.writeLong(s.appliedIndex());
            out.writeLong(s.clusterTime());
            out.writeLong(s.itemCount());
            out.writeLong(s.usedBytes());
            out.writeLong(s.quotaBytes());
        } else if (result instanceof Result.Watched w) {
            out.writeByte(WATCHED);
            out.writeBoolean(w.changed());
            out.writeLong(w.lastChange());
            writeNullableItem(out, w.item());
        } else if (result instanceof Result.SessionOpened o) {
            out.writeByte(SESSION_OPENED);
            out.writeLong(o.session());
            out.writeLong(o.timeoutMillis());
        } else if (result instanceof Result.SessionExpired e) {
            out.writeByte(SESSION_EXPIRED);
            out.writeLong(e.session());
        } else if (result instanceof Result.Contention c) {
            out.writeByte(CONTENTION);
            out.writeLong(c.since());
            out.writeInt(c.keys().size());
            for (Result.KeyContention k : c.keys()) {
                writeString(out, k.key());
                out.writeLong(k.attempts());
                out.writeLong(k.commits());
                out.writeLong(k.refused());
            }
        } else if (result instanceof Result.QuotaExceeded q) {
            out.writeByte(QUOTA_EXCEEDED);
            out.writeLong(q.used());
            out.writeLong(q.quota());
            out.writeLong(q.needed());
        } else if (result instanceof Result.DiskFull d) {
            out.writeByte(DISK_FULL);
            writeString(out, d.node());
            out.writeLong(d.freeBytes());
            out.writeLong(d.floorBytes());
        } else if (result instanceof Result.Quota q) {
            out.writeByte(QUOTA);
            out.writeLong(q.used());
            out.writeLong(q.quota());
        } else if (result instanceof Result.AuthState a) {
            out.writeByte(AUTH_STATE);
            AuthTableCodec.write(out, a.table());
        } else if (result instanceof Result.DocumentFound d) {
            out.writeByte(DOCUMENT_FOUND);
            out.writeBoolean(d.document() != null);
            if (d.document() != null) {
                writeDocument(out, d.document());
            }
        } else {
            throw new IllegalArgumentException("no encoding for " + result);
        }
    }

    private static Result readResult(DataInputStream in) throws IOException {
        byte type = in.readByte();
        return switch (type) {
            case WRITE -> new Result.Write(in.readBoolean(), readString(in), readNullableItem(in));
            case TXN -> {
                boolean ok = in.readBoolean();
                long index = in.readLong();
                int n = readCount(in);
                List<Result.Conflict> conflicts = new ArrayList<>(Math.min(n, 64));
                for (int i = 0; i < n; i++) {
                    conflicts.add(new Result.Conflict(readString(in), in.readLong(), in.readLong()));
                }
                yield new Result.Txn(ok, index, conflicts);
            }
            case SWEPT -> new Result.Swept(in.readInt());
            case REJECTED -> new Result.Rejected(readString(in));
            case FOUND -> new Result.Found(readNullableItem(in));
            case ITEMS -> {
                int n = readCount(in);
                List<Item> items = new ArrayList<>(Math.min(n, 64));
                for (int i = 0; i < n; i++) {
                    items.add(readItem(in));
                }
                yield new Result.Items(items);
            }
            case STATS_RESULT -> new Result.Stats(in.readLong(), in.readLong(), in.readLong(), in.readLong(),
                    in.readLong());
            case QUOTA_EXCEEDED -> new Result.QuotaExceeded(in.readLong(), in.readLong(), in.readLong());
            case QUOTA -> new Result.Quota(in.readLong(), in.readLong());
            case DISK_FULL -> new Result.DiskFull(readString(in), in.readLong(), in.readLong());
            case AUTH_STATE -> new Result.AuthState(AuthTableCodec.read(in));
            case WATCHED -> new Result.Watched(in.readBoolean(), in.readLong(), readNullableItem(in));
            case DOCUMENT_FOUND -> new Result.DocumentFound(in.readBoolean() ? readDocument(in) : null);
            case SESSION_OPENED -> new Result.SessionOpened(in.readLong(), in.readLong());
            case SESSION_EXPIRED -> new Result.SessionExpired(in.readLong());
            case CONTENTION -> {
                long since = in.readLong();
                int n = readCount(in);
                List<Result.KeyContention> keys = new ArrayList<>(Math.min(n, 64));
                for (int i = 0; i < n; i++) {
                    keys.add(new Result.KeyContention(readString(in), in.readLong(), in.readLong(), in.readLong()));
                }
                yield new Result.Contention(since, keys);
            }
            default -> throw new InvalidCommandException("unknown result type " + type);
        };
    }

    // ---- values

    private static void writeItem(DataOutputStream out, Item item) throws IOException {
        writeString(out, item.key());
        writeString(out, item.value());
        out.writeLong(item.index());
        out.writeLong(item.createdIndex());
        out.writeLong(item.expiresAt());
        writeString(out, item.metadata());
    }

    private static Item readItem(DataInputStream in) throws IOException {
        return new Item(readString(in), readString(in), in.readLong(), in.readLong(), in.readLong(), readString(in));
    }

    private static void writeDocument(DataOutputStream out, Document document) throws IOException {
        writeString(out, document.id());
        writeString(out, document.json());
        out.writeLong(document.index());
    }

    private static Document readDocument(DataInputStream in) throws IOException {
        return new Document(readString(in), readString(in), in.readLong());
    }

    private static void writeString(DataOutputStream out, String s) throws IOException {
        if (s == null) {
            out.writeInt(-1);
            return;
        }
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    private static String readString(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n == -1) {
            return null;
        }
        if (n < 0 || n > Limits.MAX_REQUEST_BYTES * 2) {
            throw new InvalidCommandException("string length " + n + " is out of range");
        }
        byte[] bytes = in.readNBytes(n);
        if (bytes.length != n) {
            throw new EOFException();
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static void writeNullableItem(DataOutputStream out, Item item) throws IOException {
        out.writeBoolean(item != null);
        if (item != null) {
            writeItem(out, item);
        }
    }

    private static Item readNullableItem(DataInputStream in) throws IOException {
        return in.readBoolean() ? readItem(in) : null;
    }

    private static int readCount(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > MAX_COUNT) {
            throw new InvalidCommandException("count " + n + " is out of range");
        }
        return n;
    }

    @FunctionalInterface
    private interface Writer {
        void write(DataOutputStream out) throws IOException;
    }

    @FunctionalInterface
    private interface Reader<T> {
        T read(DataInputStream in) throws IOException;
    }

    private static byte[] encode(byte kind, Writer body) {
        return encodeBare(out -> {
            out.writeByte(FORMAT_VERSION);
            out.writeByte(kind);
            body.write(out);
        });
    }

    /** What {@code body} writes, with no head: a message's part, or (with a head written) a message. */
    private static byte[] encodeBare(Writer body) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            body.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private static <T> T decode(byte[] bytes, byte kind, Reader<T> body) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            checkHeader(in, kind);
            T value = body.read(in);
            if (in.available() != 0) {
                throw new InvalidCommandException("message has " + in.available() + " trailing bytes");
            }
            return value;
        } catch (EOFException e) {
            throw new InvalidCommandException("message is truncated");
        } catch (IOException e) {
            throw new InvalidCommandException("message cannot be decoded: " + e.getMessage(), e);
        }
    }

    private static void checkHeader(InputStream stream, byte kind) throws IOException {
        int version = stream.read();
        int actualKind = stream.read();
        if (version < 0 || actualKind < 0) {
            throw new EOFException();
        }
        if (version > FORMAT_VERSION) {
            throw new NewerFormatException(version);
        }
        if (version != FORMAT_VERSION) {
            throw new InvalidCommandException("format version " + version + " is not supported (this node speaks "
                    + FORMAT_VERSION + ")");
        }
        if (actualKind != kind) {
            throw new InvalidCommandException("message kind " + actualKind + " where " + kind + " was expected");
        }
    }
}
