package io.ratchet.protocol;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The binary wire and log format. Every message starts with a format version byte and a kind byte, so
 * a node can refuse what it does not understand instead of misreading it. Strings are a length
 * (-1 for null) and UTF-8 bytes.
 */
public final class Codec {
    /** Bumped whenever an encoding changes; log entries and snapshots written with it say so. */
    public static final byte FORMAT_VERSION = 1;

    private static final byte KIND_WRITE_REQUEST = 1;
    private static final byte KIND_ENTRY = 2;
    private static final byte KIND_QUERY = 3;
    private static final byte KIND_RESULTS = 4;

    private static final byte PUT = 1;
    private static final byte DELETE = 2;

    private static final byte GET = 1;
    private static final byte GET_ALL = 2;
    private static final byte LIST = 3;
    private static final byte STATS = 4;

    private static final byte WRITE = 1;
    private static final byte REJECTED = 2;
    private static final byte FOUND = 3;
    private static final byte ITEMS = 4;
    private static final byte STATS_RESULT = 5;

    private Codec() {
    }

    public static byte[] encodeWriteRequest(List<Command> commands) {
        return encode(KIND_WRITE_REQUEST, out -> writeCommands(out, commands));
    }

    public static List<Command> decodeWriteRequest(byte[] bytes) {
        return decode(bytes, KIND_WRITE_REQUEST, Codec::readCommands);
    }

    public static byte[] encodeEntry(Entry entry) {
        return encode(KIND_ENTRY, out -> {
            out.writeLong(entry.stamp());
            writeCommands(out, entry.commands());
        });
    }

    public static Entry decodeEntry(byte[] bytes) {
        return decode(bytes, KIND_ENTRY, in -> new Entry(in.readLong(), readCommands(in)));
    }

    public static byte[] encodeQuery(Query query) {
        return encode(KIND_QUERY, out -> {
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
            } else {
                throw new IllegalArgumentException("no encoding for " + query);
            }
        });
    }

    public static Query decodeQuery(byte[] bytes) {
        return decode(bytes, KIND_QUERY, in -> {
            byte type = in.readByte();
            return switch (type) {
                case GET -> new Query.Get(readString(in));
                case GET_ALL -> {
                    int n = readCount(in, Limits.MAX_GET_ALL_KEYS);
                    List<String> keys = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        keys.add(readString(in));
                    }
                    yield new Query.GetAll(keys);
                }
                case LIST -> new Query.ListItems(readString(in), in.readInt(), in.readInt());
                case STATS -> new Query.Stats();
                default -> throw new InvalidCommandException("unknown query type " + type);
            };
        });
    }

    public static byte[] encodeResults(List<Result> results) {
        return encode(KIND_RESULTS, out -> {
            out.writeInt(results.size());
            for (Result result : results) {
                writeResult(out, result);
            }
        });
    }

    public static List<Result> decodeResults(byte[] bytes) {
        return decode(bytes, KIND_RESULTS, in -> {
            int n = readCount(in, Integer.MAX_VALUE);
            List<Result> results = new ArrayList<>(Math.min(n, 1024));
            for (int i = 0; i < n; i++) {
                results.add(readResult(in));
            }
            return results;
        });
    }

    private static void writeCommands(DataOutputStream out, List<Command> commands) throws IOException {
        out.writeInt(commands.size());
        for (Command command : commands) {
            if (command instanceof Command.Put p) {
                out.writeByte(PUT);
                writeString(out, p.key());
                writeString(out, p.value());
                out.writeLong(p.index());
                writeString(out, p.metadata());
            } else if (command instanceof Command.Delete d) {
                out.writeByte(DELETE);
                writeString(out, d.key());
                out.writeLong(d.index());
            } else {
                throw new IllegalArgumentException("no encoding for " + command);
            }
        }
    }

    private static List<Command> readCommands(DataInputStream in) throws IOException {
        // Entries may hold several requests' commands (group commit), so the bound is generous.
        int n = readCount(in, Limits.MAX_COMMANDS_PER_REQUEST * 64);
        List<Command> commands = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            byte type = in.readByte();
            commands.add(switch (type) {
                case PUT -> new Command.Put(readString(in), readString(in), in.readLong(), readString(in));
                case DELETE -> new Command.Delete(readString(in), in.readLong());
                default -> throw new InvalidCommandException("unknown command type " + type);
            });
        }
        return commands;
    }

    private static void writeResult(DataOutputStream out, Result result) throws IOException {
        if (result instanceof Result.Write w) {
            out.writeByte(WRITE);
            out.writeBoolean(w.successful());
            writeString(out, w.key());
            out.writeLong(w.index());
            writeString(out, w.value());
            writeString(out, w.metadata());
        } else if (result instanceof Result.Rejected r) {
            out.writeByte(REJECTED);
            writeString(out, r.reason());
        } else if (result instanceof Result.Found f) {
            out.writeByte(FOUND);
            out.writeBoolean(f.item() != null);
            if (f.item() != null) {
                writeItem(out, f.item());
            }
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
        } else {
            throw new IllegalArgumentException("no encoding for " + result);
        }
    }

    private static Result readResult(DataInputStream in) throws IOException {
        byte type = in.readByte();
        return switch (type) {
            case WRITE -> new Result.Write(in.readBoolean(), readString(in), in.readLong(), readString(in), readString(in));
            case REJECTED -> new Result.Rejected(readString(in));
            case FOUND -> new Result.Found(in.readBoolean() ? readItem(in) : null);
            case ITEMS -> {
                int n = readCount(in, Integer.MAX_VALUE);
                List<Item> items = new ArrayList<>(Math.min(n, 1024));
                for (int i = 0; i < n; i++) {
                    items.add(readItem(in));
                }
                yield new Result.Items(items);
            }
            case STATS_RESULT -> new Result.Stats(in.readLong(), in.readLong(), in.readLong());
            default -> throw new InvalidCommandException("unknown result type " + type);
        };
    }

    /** Items are also the unit of a snapshot, hence public. */
    public static void writeItem(DataOutputStream out, Item item) throws IOException {
        writeString(out, item.key());
        writeString(out, item.value());
        out.writeLong(item.index());
        writeString(out, item.metadata());
    }

    public static Item readItem(DataInputStream in) throws IOException {
        return new Item(readString(in), readString(in), in.readLong(), readString(in));
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
        if (n < 0 || n > in.available()) {
            throw new InvalidCommandException("string length " + n + " does not fit the message");
        }
        return new String(in.readNBytes(n), StandardCharsets.UTF_8);
    }

    private static int readCount(DataInputStream in, int max) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > max) {
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
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(FORMAT_VERSION);
            out.writeByte(kind);
            body.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private static <T> T decode(byte[] bytes, byte kind, Reader<T> body) {
        try (DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(bytes))) {
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
        if (version != FORMAT_VERSION) {
            throw new InvalidCommandException("format version " + version + " is not supported (this node speaks "
                    + FORMAT_VERSION + ")");
        }
        if (actualKind != kind) {
            throw new InvalidCommandException("message kind " + actualKind + " where " + kind + " was expected");
        }
    }
}
