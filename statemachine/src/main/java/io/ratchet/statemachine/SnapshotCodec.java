package io.ratchet.statemachine;

import io.ratchet.protocol.Document;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.AuthTableCodec;
import io.ratchet.protocol.Result;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The values of a snapshot on disk: strings, items, documents, and the results of writes (remembered
 * for idempotency keys and client sessions). This layout is the snapshot's own, apart from the wire
 * codec's, so that a change to what travels between client and node never changes what a node reads
 * back from disk. Its bytes are those snapshot formats 2 and 3 were written with (then through the
 * wire codec), so those files read unchanged; a change here is a new {@link SnapshotFile} format.
 */
final class SnapshotCodec {
    // Result tags: the numbers snapshot formats 2 and 3 hold.
    private static final byte WRITE = 1;
    private static final byte REJECTED = 2;
    private static final byte TXN = 6;
    private static final byte SWEPT = 7;
    private static final byte SESSION_OPENED = 10;
    private static final byte SESSION_EXPIRED = 11;
    // Format 5 on.
    private static final byte QUOTA_EXCEEDED = 13;
    private static final byte QUOTA = 14;
    private static final byte AUTH_STATE = 15;
    private static final byte TXN_STATE = 18;
    private static final byte LOCKED = 19;
    private static final byte FENCED = 20;
    private static final byte NOT_AN_INTEGER = 21;
    private static final byte OVERFLOW = 22;
    /** A string in a snapshot is at most a value's size many times over; more means a damaged file. */
    private static final int MAX_STRING_BYTES = 64 << 20;
    private static final int MAX_COUNT = 1 << 20;

    private SnapshotCodec() {
    }

    static void writeString(DataOutputStream out, String s) throws IOException {
        if (s == null) {
            out.writeInt(-1);
            return;
        }
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    static String readString(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n == -1) {
            return null;
        }
        if (n < 0 || n > MAX_STRING_BYTES) {
            throw new SnapshotFormatException("string length " + n + " is out of range");
        }
        byte[] bytes = in.readNBytes(n);
        if (bytes.length != n) {
            throw new EOFException();
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static void writeItem(DataOutputStream out, Item item) throws IOException {
        writeString(out, item.key());
        writeString(out, item.value());
        out.writeLong(item.index());
        out.writeLong(item.createdIndex());
        out.writeLong(item.expiresAt());
        writeString(out, item.metadata());
    }

    static Item readItem(DataInputStream in) throws IOException {
        return new Item(readString(in), readString(in), in.readLong(), in.readLong(), in.readLong(), readString(in));
    }

    static void writeDocument(DataOutputStream out, Document document) throws IOException {
        writeString(out, document.id());
        writeString(out, document.json());
        out.writeLong(document.index());
    }

    static Document readDocument(DataInputStream in) throws IOException {
        return new Document(readString(in), readString(in), in.readLong());
    }

    /** The results of one applied request. Only writes' results are kept, so only they have a layout here. */
    static void writeResults(DataOutputStream out, List<Result> results) throws IOException {
        out.writeInt(results.size());
        for (Result result : results) {
            writeResult(out, result);
        }
    }

    static List<Result> readResults(DataInputStream in) throws IOException {
        int n = readCount(in);
        List<Result> results = new ArrayList<>(Math.min(n, 64));
        for (int i = 0; i < n; i++) {
            results.add(readResult(in));
        }
        return results;
    }

    private static void writeResult(DataOutputStream out, Result result) throws IOException {
        // The tags are this layout's own (the numbers snapshot formats 2 and 3 hold), not the wire's.
        Writer tagged = switch (result.kind()) {
            case WRITE -> o -> {
                Result.Write w = (Result.Write) result;
                o.writeByte(WRITE);
                o.writeBoolean(w.successful());
                writeString(o, w.key());
                o.writeBoolean(w.item() != null);
                if (w.item() != null) {
                    writeItem(o, w.item());
                }
            };
            case TXN -> o -> {
                Result.Txn t = (Result.Txn) result;
                o.writeByte(TXN);
                o.writeBoolean(t.successful());
                o.writeLong(t.index());
                o.writeInt(t.conflicts().size());
                for (Result.Conflict c : t.conflicts()) {
                    writeString(o, c.key());
                    o.writeLong(c.expected());
                    o.writeLong(c.actual());
                }
            };
            case SWEPT -> o -> {
                o.writeByte(SWEPT);
                o.writeInt(((Result.Swept) result).removed());
            };
            case REJECTED -> o -> {
                o.writeByte(REJECTED);
                writeString(o, ((Result.Rejected) result).reason());
            };
            case SESSION_OPENED -> o -> {
                Result.SessionOpened s = (Result.SessionOpened) result;
                o.writeByte(SESSION_OPENED);
                o.writeLong(s.session());
                o.writeLong(s.timeoutMillis());
            };
            case SESSION_EXPIRED -> o -> {
                o.writeByte(SESSION_EXPIRED);
                o.writeLong(((Result.SessionExpired) result).session());
            };
            case QUOTA_EXCEEDED -> o -> {
                Result.QuotaExceeded q = (Result.QuotaExceeded) result;
                o.writeByte(QUOTA_EXCEEDED);
                o.writeLong(q.used());
                o.writeLong(q.quota());
                o.writeLong(q.needed());
            };
            case QUOTA -> o -> {
                Result.Quota q = (Result.Quota) result;
                o.writeByte(QUOTA);
                o.writeLong(q.used());
                o.writeLong(q.quota());
            };
            case AUTH_STATE -> o -> {
                o.writeByte(AUTH_STATE);
                AuthTableCodec.write(o, ((Result.AuthState) result).table());
            };
            case TXN_STATE -> o -> {
                Result.TxnState t = (Result.TxnState) result;
                o.writeByte(TXN_STATE);
                writeString(o, t.txn());
                o.writeByte(t.record().tag());
                o.writeInt(t.intents());
                o.writeLong(t.index());
            };
            case FENCED -> o -> {
                o.writeByte(FENCED);
                o.writeLong(((Result.Fenced) result).until());
            };
            case LOCKED -> o -> {
                Result.Locked l = (Result.Locked) result;
                o.writeByte(LOCKED);
                writeString(o, l.key());
                writeString(o, l.txn());
            };
            case NOT_AN_INTEGER -> o -> {
                Result.NotAnInteger n = (Result.NotAnInteger) result;
                o.writeByte(NOT_AN_INTEGER);
                writeString(o, n.key());
                writeItem(o, n.item());
            };
            case OVERFLOW -> o -> {
                Result.Overflow v = (Result.Overflow) result;
                o.writeByte(OVERFLOW);
                writeString(o, v.key());
                writeItem(o, v.item());
                o.writeLong(v.delta());
            };
            // reads' answers, and a front end's: apply never remembers them
            case FOUND, ITEMS, STATS, WATCHED, DOCUMENT_FOUND, CONTENTION, DISK_FULL, SHAPE, UNSUPPORTED ->
                    throw new IllegalArgumentException("a snapshot keeps the results of writes only, not " + result);
        };
        tagged.write(out);
    }

    private static Result readResult(DataInputStream in) throws IOException {
        byte type = in.readByte();
        return switch (type) {
            case WRITE -> new Result.Write(in.readBoolean(), readString(in), in.readBoolean() ? readItem(in) : null);
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
            case SESSION_OPENED -> new Result.SessionOpened(in.readLong(), in.readLong());
            case SESSION_EXPIRED -> new Result.SessionExpired(in.readLong());
            case QUOTA_EXCEEDED -> new Result.QuotaExceeded(in.readLong(), in.readLong(), in.readLong());
            case QUOTA -> new Result.Quota(in.readLong(), in.readLong());
            case AUTH_STATE -> new Result.AuthState(AuthTableCodec.read(in));
            case TXN_STATE -> {
                String txn = readString(in);
                Result.TxnState.Record record = io.ratchet.protocol.WireKind.byTag(Result.TxnState.Record.values(), in.readByte());
                if (record == null) {
                    throw new SnapshotFormatException("unknown transaction record state");
                }
                yield new Result.TxnState(txn, record, in.readInt(), in.readLong());
            }
            case LOCKED -> new Result.Locked(readString(in), readString(in));
            case FENCED -> new Result.Fenced(in.readLong());
            case NOT_AN_INTEGER -> new Result.NotAnInteger(readString(in), readItem(in));
            case OVERFLOW -> new Result.Overflow(readString(in), readItem(in), in.readLong());
            default -> throw new SnapshotFormatException("unknown result type " + type);
        };
    }

    private static int readCount(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > MAX_COUNT) {
            throw new SnapshotFormatException("count " + n + " is out of range");
        }
        return n;
    }

    /** Something written into a byte array by {@code write}. */
    interface Writer {
        void write(DataOutputStream out) throws IOException;
    }

    /** Something read back from a byte array by {@code read}. */
    interface Reader<T> {
        T read(DataInputStream in) throws IOException;
    }

    /** The bytes {@code writer} writes: how the disk store encodes a value in this layout. */
    static byte[] bytes(Writer writer) {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream(64);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            writer.write(out);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("writing to memory cannot fail", e);
        }
        return bytes.toByteArray();
    }

    /**
     * Reads {@code bytes} whole with {@code reader}.
     *
     * @throws IllegalStateException when they do not parse or have bytes left over: the store is damaged
     */
    static <T> T parse(byte[] bytes, Reader<T> reader) {
        try (DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(bytes))) {
            T value = reader.read(in);
            if (in.read() != -1) {
                throw new IllegalStateException("a stored value has bytes after its end");
            }
            return value;
        } catch (IOException e) {
            throw new IllegalStateException("a stored value does not parse: " + e.getMessage(), e);
        }
    }

    /** Bytes that do not parse as this layout: a damaged file, or one written in another layout. */
    static final class SnapshotFormatException extends IOException {
        SnapshotFormatException(String message) {
            super(message);
        }
    }
}
