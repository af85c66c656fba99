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

    /** The kinds of message: the byte after the format version. */
    enum MessageKind implements WireKind {
        /** What a client sends for writes outside a session, and the sweeper proposes. */
        REQUESTS(1),
        /** A log entry of plain requests, as written before client sessions: still read, never written. */
        ENTRY(2),
        QUERY(3),
        RESULTS(4),
        /** What a client sends a front end, and a front end proposes to Raft: tagged batches of requests. */
        BATCHES(5),
        /** A log entry of batches: what the log holds now. */
        BATCH_ENTRY(6),
        /** A front end's refusal of a message: see {@link Refusal}. */
        REFUSAL(7),
        /** Results a follower served, with the leader's client address after the head (see {@link #withLeader}). */
        RESULTS_FROM_FOLLOWER(8);

        private final byte tag;

        MessageKind(int tag) {
            this.tag = (byte) tag;
        }

        @Override
        public byte tag() {
            return tag;
        }
    }

    private static final Command.Kind[] COMMANDS = Command.Kind.values();
    private static final Command.Op.Kind[] OPS = Command.Op.Kind.values();
    private static final Query.Kind[] QUERIES = Query.Kind.values();
    private static final Result.Kind[] RESULTS = Result.Kind.values();

    /** Entries may hold several requests (group commit), so counts inside them get a generous bound. */
    private static final int MAX_COUNT = 1 << 20;

    private Codec() {
    }

    // ---- top-level messages

    /** What a client sends for writes: one or more requests, applied in order. */
    public static byte[] encodeRequests(List<Request> requests) {
        return encode(MessageKind.REQUESTS, out -> writeRequests(out, requests));
    }

    /**
     * One request in the form a requests message carries it. {@link #joinRequests} puts several such
     * encodings into one message without encoding them again: how a client coalesces requests.
     */
    public static byte[] encodeRequest(Request request) {
        return encodeBare(out -> writeRequest(out, request));
    }

    /** What a requests message starts with, before the count of its requests. */
    private static final byte[] REQUESTS_HEAD = {FORMAT_VERSION, MessageKind.REQUESTS.tag()};
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
    private static final byte[] GETS_HEAD = {FORMAT_VERSION, MessageKind.QUERY.tag(), Query.Kind.GETS.tag()};
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
        return decode(bytes, MessageKind.REQUESTS, Codec::readRequests);
    }

    public static byte[] encodeEntry(Entry entry) {
        return encode(MessageKind.BATCH_ENTRY, out -> {
            out.writeLong(entry.stamp());
            out.writeInt(entry.batches().size());
            for (Batch b : entry.batches()) {
                writeBatch(out, b);
            }
        });
    }

    /** A log entry: of batches, or (as written before client sessions) of plain requests. */
    public static Entry decodeEntry(byte[] bytes) {
        if (kindOf(bytes) == MessageKind.ENTRY.tag()) {
            return decode(bytes, MessageKind.ENTRY, in -> Entry.untagged(in.readLong(), readRequests(in)));
        }
        return decode(bytes, MessageKind.BATCH_ENTRY, in -> new Entry(in.readLong(), readBatches(in)));
    }

    // ---- batches: what clients send front ends, and front ends propose

    /** One batch in the form a batches message carries it; {@link #joinBatches} joins several. */
    public static byte[] encodeBatch(Batch batch) {
        return encodeBare(out -> writeBatch(out, batch));
    }

    public static byte[] encodeBatches(List<Batch> batches) {
        return encode(MessageKind.BATCHES, out -> {
            out.writeInt(batches.size());
            for (Batch b : batches) {
                writeBatch(out, b);
            }
        });
    }

    /** What a batches message starts with, before the count of its batches. */
    private static final byte[] BATCHES_HEAD = {FORMAT_VERSION, MessageKind.BATCHES.tag()};
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
                || requestsMessage[1] != MessageKind.REQUESTS.tag()) {
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
        return decode(bytes, MessageKind.BATCHES, Codec::readBatches);
    }

    /**
     * What a node is asked to append: a batches message, or a plain requests message (one untagged
     * batch), which the sweeper and Ratis-protocol tools send.
     */
    public static List<Batch> decodeProposal(byte[] bytes) {
        if (kindOf(bytes) == MessageKind.REQUESTS.tag()) {
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
        return encode(MessageKind.REFUSAL, out -> {
            out.writeByte(refusal.reason().tag());
            writeString(out, refusal.leaderId());
            writeString(out, refusal.leaderAddress());
            writeString(out, refusal.message());
            out.writeBoolean(refusal.inDoubt());
        });
    }

    public static Refusal decodeRefusal(byte[] bytes) {
        return decode(bytes, MessageKind.REFUSAL, in -> new Refusal(Refusal.Reason.of(in.readUnsignedByte()), readString(in),
                readString(in), readString(in), in.readBoolean()));
    }

    /** Whether a front end's answer is a {@link Refusal} rather than results. */
    public static boolean isRefusal(byte[] bytes) {
        return kindOf(bytes) == MessageKind.REFUSAL.tag();
    }

    /** The kind byte of a message, or -1 when it is too short to have one. */
    private static int kindOf(byte[] bytes) {
        return bytes.length < 2 ? -1 : bytes[1];
    }

    public static byte[] encodeQuery(Query query) {
        return encode(MessageKind.QUERY, out -> writeQuery(out, query));
    }

    public static Query decodeQuery(byte[] bytes) {
        return decode(bytes, MessageKind.QUERY, Codec::readQuery);
    }

    public static byte[] encodeResults(List<Result> results) {
        return encode(MessageKind.RESULTS, out -> writeResults(out, results));
    }

    /** Results, whether a leader or a follower served them ({@link #withLeader}). */
    public static List<Result> decodeResults(byte[] bytes) {
        if (kindOf(bytes) == MessageKind.RESULTS_FROM_FOLLOWER.tag()) {
            return decode(bytes, MessageKind.RESULTS_FROM_FOLLOWER, in -> {
                readString(in);
                return readResults(in);
            });
        }
        return decode(bytes, MessageKind.RESULTS, Codec::readResults);
    }

    /**
     * A follower's answer to a linearizable read: the results message {@code results}, and the address
     * where the leader takes clients. A client that only reads is never refused by a follower (its ReadIndex
     * asks the leader), so without this it would keep reading through the first node it was given,
     * costing that node and the leader a round between them for every read.
     */
    public static byte[] withLeader(byte[] results, String leaderAddress) {
        if (kindOf(results) != MessageKind.RESULTS.tag()) {
            throw new IllegalArgumentException("not a results message");
        }
        return encode(MessageKind.RESULTS_FROM_FOLLOWER, out -> {
            writeString(out, leaderAddress);
            out.write(results, 2, results.length - 2);
        });
    }

    /** The leader's address a follower's results carry ({@link #withLeader}), or null. */
    public static String leaderOf(byte[] results) {
        if (kindOf(results) != MessageKind.RESULTS_FROM_FOLLOWER.tag()) {
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
        out.writeByte(command.kind().tag());
        Writer body = switch (command.kind()) {
            case PUT, DELETE -> o -> writeOpBody(o, (Command.Op) command);
            case TRANSACTION -> o -> writeOps(o, ((Command.Transaction) command).ops());
            case SWEEP -> o -> {
                List<Command.KeyIndex> candidates = ((Command.Sweep) command).candidates();
                o.writeInt(candidates.size());
                for (Command.KeyIndex c : candidates) {
                    writeString(o, c.key());
                    o.writeLong(c.index());
                }
            };
            case OPEN_SESSION -> o -> {
                Command.OpenSession open = (Command.OpenSession) command;
                o.writeLong(open.id());
                o.writeLong(open.timeoutMillis());
            };
            case SET_QUOTA -> o -> {
                Command.SetQuota quota = (Command.SetQuota) command;
                o.writeLong(quota.bytes());
                o.writeBoolean(quota.ifUnset());
            };
            case AUTH_CHANGE -> o -> AuthTableCodec.writeChange(o, (Command.AuthChange) command);
            case PREPARE -> o -> {
                Command.Prepare p = (Command.Prepare) command;
                writeString(o, p.txn());
                o.writeInt(p.primary());
                o.writeInt(p.groups().size());
                for (int g : p.groups()) {
                    o.writeInt(g);
                }
                o.writeLong(p.leaseMillis());
                o.writeBoolean(p.holdsRecord());
                writeOps(o, p.ops());
            };
            case FENCE -> o -> o.writeLong(((Command.Fence) command).millis());
            case ADD -> o -> {
                Command.Add add = (Command.Add) command;
                writeString(o, add.key());
                o.writeLong(add.delta());
            };
            case SETTLE -> o -> {
                Command.Settle settle = (Command.Settle) command;
                writeString(o, settle.txn());
                o.writeByte(settle.step().tag());
            };
        };
        body.write(out);
    }

    private static void writeOps(DataOutputStream o, List<Command.Op> ops) throws IOException {
        o.writeInt(ops.size());
        for (Command.Op op : ops) {
            o.writeByte(op.opKind().tag());
            writeOpBody(o, op);
        }
    }

    private static List<Command.Op> readOps(DataInputStream in) throws IOException {
        int n = readCount(in);
        List<Command.Op> ops = new ArrayList<>(Math.min(n, 64));
        for (int i = 0; i < n; i++) {
            ops.add(readOp(in));
        }
        return ops;
    }

    private static <K extends WireKind> K tagged(K[] kinds, byte tag, String what) {
        K kind = WireKind.byTag(kinds, tag);
        if (kind == null) {
            throw new InvalidCommandException("unknown " + what + " " + tag);
        }
        return kind;
    }

    /** One operation as a transaction carries it (its tag, then its body): how an intent keeps its write. */
    public static byte[] encodeOp(Command.Op op) {
        return encodeBare(o -> {
            o.writeByte(op.opKind().tag());
            writeOpBody(o, op);
        });
    }

    /** The operation {@link #encodeOp} wrote. */
    public static Command.Op decodeOp(byte[] bytes) {
        try {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
            Command.Op op = readOp(in);
            if (in.available() > 0) {
                throw new InvalidCommandException("trailing bytes after an operation");
            }
            return op;
        } catch (IOException e) {
            throw new InvalidCommandException("truncated operation: " + e.getMessage());
        }
    }

    private static Command readCommand(DataInputStream in) throws IOException {
        byte type = in.readByte();
        Command.Kind kind = WireKind.byTag(COMMANDS, type);
        if (kind == null) {
            if (WireKind.byTag(OPS, type) != null) {
                throw new InvalidCommandException("operation type " + type + " is only valid inside a transaction");
            }
            throw new InvalidCommandException("unknown command type " + type);
        }
        return switch (kind) {
            case PUT -> readPut(in);
            case DELETE -> readDelete(in);
            case TRANSACTION -> new Command.Transaction(readOps(in));
            case SWEEP -> {
                int n = readCount(in);
                List<Command.KeyIndex> candidates = new ArrayList<>(Math.min(n, 64));
                for (int i = 0; i < n; i++) {
                    candidates.add(new Command.KeyIndex(readString(in), in.readLong()));
                }
                yield new Command.Sweep(candidates);
            }
            case OPEN_SESSION -> new Command.OpenSession(in.readLong(), in.readLong());
            case SET_QUOTA -> new Command.SetQuota(in.readLong(), in.readBoolean());
            case AUTH_CHANGE -> AuthTableCodec.readChange(in);
            case PREPARE -> {
                String txn = readString(in);
                int primary = in.readInt();
                int n = readCount(in);
                List<Integer> groups = new ArrayList<>(Math.min(n, Groups.MAX));
                for (int i = 0; i < n; i++) {
                    groups.add(in.readInt());
                }
                yield new Command.Prepare(txn, primary, groups, in.readLong(), in.readBoolean(), readOps(in));
            }
            case FENCE -> new Command.Fence(in.readLong());
            case ADD -> new Command.Add(readString(in), in.readLong());
            case SETTLE -> new Command.Settle(readString(in), tagged(Command.Settle.Step.values(), in.readByte(), "settle step"));
        };
    }

    /** An operation's fields, after its tag (which a put or delete alone shares with it in a transaction). */
    private static void writeOpBody(DataOutputStream out, Command.Op op) throws IOException {
        Writer body = switch (op.opKind()) {
            case PUT -> o -> {
                Command.Put p = (Command.Put) op;
                writeString(o, p.key());
                writeString(o, p.value());
                o.writeLong(p.index());
                writeString(o, p.metadata());
                o.writeLong(p.ttlMillis());
                o.writeBoolean(p.expiredIsAbsent());
            };
            case DELETE, CHECK -> o -> {
                writeString(o, op.key());
                o.writeLong(op.index());
            };
            case PUT_DOCUMENT -> o -> {
                Command.PutDocument d = (Command.PutDocument) op;
                writeString(o, d.id());
                writeString(o, d.json());
                o.writeLong(d.guardIndex());
            };
            case DELETE_DOCUMENT -> o -> {
                Command.DeleteDocument d = (Command.DeleteDocument) op;
                writeString(o, d.id());
                o.writeLong(d.guardIndex());
            };
        };
        body.write(out);
    }

    private static Command.Op readOp(DataInputStream in) throws IOException {
        byte type = in.readByte();
        Command.Op.Kind kind = WireKind.byTag(OPS, type);
        if (kind == null) {
            Command.Kind alone = WireKind.byTag(COMMANDS, type);
            if (alone != null) {
                throw new InvalidCommandException("command type " + type + " (" + alone.name().toLowerCase(java.util.Locale.ROOT)
                        + ") stands alone: it is not an operation of a transaction");
            }
            throw new InvalidCommandException("unknown command type " + type);
        }
        return switch (kind) {
            case PUT -> readPut(in);
            case DELETE -> readDelete(in);
            case CHECK -> new Command.Check(readString(in), in.readLong());
            case PUT_DOCUMENT -> new Command.PutDocument(readString(in), readString(in), in.readLong());
            case DELETE_DOCUMENT -> new Command.DeleteDocument(readString(in), in.readLong());
        };
    }

    private static Command.Put readPut(DataInputStream in) throws IOException {
        return new Command.Put(readString(in), readString(in), in.readLong(), readString(in), in.readLong(), in.readBoolean());
    }

    private static Command.Delete readDelete(DataInputStream in) throws IOException {
        return new Command.Delete(readString(in), in.readLong());
    }

    // ---- queries

    private static void writeQuery(DataOutputStream out, Query query) throws IOException {
        out.writeByte(query.kind().tag());
        Writer body = switch (query.kind()) {
            case GET -> o -> writeString(o, ((Query.Get) query).key());
            case GET_ALL -> o -> writeStrings(o, ((Query.GetAll) query).keys());
            case LIST_ITEMS -> o -> {
                Query.ListItems l = (Query.ListItems) query;
                writeString(o, l.prefix());
                o.writeInt(l.start());
                o.writeInt(l.pageSize());
            };
            case STATS, AUTH_STATUS, SHAPE -> o -> {
            };
            case TXN_STATUS -> o -> writeStrings(o, ((Query.TxnStatus) query).txns());
            case WATCH -> o -> {
                Query.Watch w = (Query.Watch) query;
                writeString(o, w.key());
                o.writeLong(w.afterIndex());
                o.writeLong(w.timeoutMillis());
            };
            case GET_DOCUMENT -> o -> writeString(o, ((Query.GetDocument) query).id());
            case GETS -> o -> writeStrings(o, ((Query.Gets) query).gets().stream().map(Query.Get::key).toList());
            case CONTENTION -> o -> o.writeInt(((Query.Contention) query).limit());
        };
        body.write(out);
    }

    private static Query readQuery(DataInputStream in) throws IOException {
        byte type = in.readByte();
        Query.Kind kind = WireKind.byTag(QUERIES, type);
        if (kind == null) {
            throw new InvalidCommandException("unknown query type " + type);
        }
        return switch (kind) {
            case GET -> new Query.Get(readString(in));
            case GET_ALL -> new Query.GetAll(readStrings(in));
            case LIST_ITEMS -> new Query.ListItems(readString(in), in.readInt(), in.readInt());
            case STATS -> new Query.Stats();
            case WATCH -> new Query.Watch(readString(in), in.readLong(), in.readLong());
            case GET_DOCUMENT -> new Query.GetDocument(readString(in));
            case GETS -> new Query.Gets(readStrings(in).stream().map(Query.Get::new).toList());
            case CONTENTION -> new Query.Contention(in.readInt());
            case AUTH_STATUS -> new Query.AuthStatus();
            case SHAPE -> new Query.Shape();
            case TXN_STATUS -> new Query.TxnStatus(readStrings(in));
        };
    }

    private static void writeStrings(DataOutputStream out, List<String> strings) throws IOException {
        out.writeInt(strings.size());
        for (String s : strings) {
            writeString(out, s);
        }
    }

    private static List<String> readStrings(DataInputStream in) throws IOException {
        int n = readCount(in);
        List<String> strings = new ArrayList<>(Math.min(n, 64));
        for (int i = 0; i < n; i++) {
            strings.add(readString(in));
        }
        return strings;
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
        out.writeByte(result.kind().tag());
        Writer body = switch (result.kind()) {
            case WRITE -> o -> {
                Result.Write w = (Result.Write) result;
                o.writeBoolean(w.successful());
                writeString(o, w.key());
                writeNullableItem(o, w.item());
            };
            case REJECTED -> o -> writeString(o, ((Result.Rejected) result).reason());
            case FOUND -> o -> writeNullableItem(o, ((Result.Found) result).item());
            case ITEMS -> o -> {
                List<Item> items = ((Result.Items) result).items();
                o.writeInt(items.size());
                for (Item item : items) {
                    writeItem(o, item);
                }
            };
            case STATS -> o -> {
                Result.Stats s = (Result.Stats) result;
                o.writeLong(s.appliedIndex());
                o.writeLong(s.clusterTime());
                o.writeLong(s.itemCount());
                o.writeLong(s.usedBytes());
                o.writeLong(s.quotaBytes());
            };
            case TXN -> o -> {
                Result.Txn t = (Result.Txn) result;
                o.writeBoolean(t.successful());
                o.writeLong(t.index());
                o.writeInt(t.conflicts().size());
                for (Result.Conflict c : t.conflicts()) {
                    writeString(o, c.key());
                    o.writeLong(c.expected());
                    o.writeLong(c.actual());
                }
            };
            case SWEPT -> o -> o.writeInt(((Result.Swept) result).removed());
            case WATCHED -> o -> {
                Result.Watched w = (Result.Watched) result;
                o.writeBoolean(w.changed());
                o.writeLong(w.lastChange());
                writeNullableItem(o, w.item());
            };
            case DOCUMENT_FOUND -> o -> {
                Document document = ((Result.DocumentFound) result).document();
                o.writeBoolean(document != null);
                if (document != null) {
                    writeDocument(o, document);
                }
            };
            case SESSION_OPENED -> o -> {
                Result.SessionOpened s = (Result.SessionOpened) result;
                o.writeLong(s.session());
                o.writeLong(s.timeoutMillis());
            };
            case SESSION_EXPIRED -> o -> o.writeLong(((Result.SessionExpired) result).session());
            case CONTENTION -> o -> {
                Result.Contention c = (Result.Contention) result;
                o.writeLong(c.since());
                o.writeInt(c.keys().size());
                for (Result.KeyContention k : c.keys()) {
                    writeString(o, k.key());
                    o.writeLong(k.attempts());
                    o.writeLong(k.commits());
                    o.writeLong(k.refused());
                }
            };
            case QUOTA_EXCEEDED -> o -> {
                Result.QuotaExceeded q = (Result.QuotaExceeded) result;
                o.writeLong(q.used());
                o.writeLong(q.quota());
                o.writeLong(q.needed());
            };
            case QUOTA -> o -> {
                Result.Quota q = (Result.Quota) result;
                o.writeLong(q.used());
                o.writeLong(q.quota());
            };
            case AUTH_STATE -> o -> AuthTableCodec.write(o, ((Result.AuthState) result).table());
            case DISK_FULL -> o -> {
                Result.DiskFull d = (Result.DiskFull) result;
                writeString(o, d.node());
                o.writeLong(d.freeBytes());
                o.writeLong(d.floorBytes());
            };
            case SHAPE -> o -> writeStrings(o, ((Result.Shape) result).leaders());
            case TXN_STATE -> o -> {
                Result.TxnState t = (Result.TxnState) result;
                writeString(o, t.txn());
                o.writeByte(t.record().tag());
                o.writeInt(t.intents());
                o.writeLong(t.index());
            };
            case FENCED -> o -> o.writeLong(((Result.Fenced) result).until());
            case NOT_AN_INTEGER -> o -> {
                Result.NotAnInteger n = (Result.NotAnInteger) result;
                writeString(o, n.key());
                writeItem(o, n.item());
            };
            case OVERFLOW -> o -> {
                Result.Overflow v = (Result.Overflow) result;
                writeString(o, v.key());
                writeItem(o, v.item());
                o.writeLong(v.delta());
            };
            case UNSUPPORTED -> o -> {
                Result.Unsupported u = (Result.Unsupported) result;
                writeString(o, u.command());
                writeString(o, u.reason());
            };
            case LOCKED -> o -> {
                Result.Locked l = (Result.Locked) result;
                writeString(o, l.key());
                writeString(o, l.txn());
            };
        };
        body.write(out);
    }

    private static Result readResult(DataInputStream in) throws IOException {
        byte type = in.readByte();
        Result.Kind kind = WireKind.byTag(RESULTS, type);
        if (kind == null) {
            throw new InvalidCommandException("unknown result type " + type);
        }
        return switch (kind) {
            case WRITE -> new Result.Write(in.readBoolean(), readString(in), readNullableItem(in));
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
            case STATS -> new Result.Stats(in.readLong(), in.readLong(), in.readLong(), in.readLong(), in.readLong());
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
            case QUOTA_EXCEEDED -> new Result.QuotaExceeded(in.readLong(), in.readLong(), in.readLong());
            case QUOTA -> new Result.Quota(in.readLong(), in.readLong());
            case AUTH_STATE -> new Result.AuthState(AuthTableCodec.read(in));
            case DISK_FULL -> new Result.DiskFull(readString(in), in.readLong(), in.readLong());
            case SHAPE -> new Result.Shape(readStrings(in));
            case TXN_STATE -> new Result.TxnState(readString(in), tagged(Result.TxnState.Record.values(), in.readByte(),
                    "transaction record state"), in.readInt(), in.readLong());
            case LOCKED -> new Result.Locked(readString(in), readString(in));
            case FENCED -> new Result.Fenced(in.readLong());
            case NOT_AN_INTEGER -> new Result.NotAnInteger(readString(in), readItem(in));
            case OVERFLOW -> new Result.Overflow(readString(in), readItem(in), in.readLong());
            case UNSUPPORTED -> new Result.Unsupported(readString(in), readString(in));
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

    private static byte[] encode(MessageKind kind, Writer body) {
        return encodeBare(out -> {
            out.writeByte(FORMAT_VERSION);
            out.writeByte(kind.tag());
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

    private static <T> T decode(byte[] bytes, MessageKind kind, Reader<T> body) {
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

    private static void checkHeader(InputStream stream, MessageKind kind) throws IOException {
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
        if (actualKind != kind.tag()) {
            throw new InvalidCommandException("message kind " + actualKind + " where " + kind.tag() + " was expected");
        }
    }
}
