package io.ratchet.protocol;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The binary form of an {@link AuthTable} and its changes, shared by the wire codec ({@link Codec}) and
 * the snapshot's, so the table has one layout. Names, hashes and prefixes are short (at most 512 bytes),
 * so they travel as modified UTF-8 ({@link DataOutput#writeUTF}).
 */
public final class AuthTableCodec {
    private static final byte ENABLE = 1;
    private static final byte ADD_USER = 2;
    private static final byte REMOVE_USER = 3;
    private static final byte GRANT = 4;
    private static final byte REVOKE = 5;
    /** Users, roles and grants in one table or change: far above any real one, below a hostile count. */
    private static final int MAX_COUNT = 1 << 16;

    private AuthTableCodec() {
    }

    public static void write(DataOutput out, AuthTable table) throws IOException {
        out.writeBoolean(table.enabled());
        out.writeInt(table.users().size());
        for (AuthTable.User u : table.users().values()) {
            out.writeUTF(u.name());
            out.writeUTF(u.tokenHash());
            writeStrings(out, u.roles());
        }
        out.writeInt(table.roles().size());
        for (Map.Entry<String, List<AuthTable.Grant>> r : table.roles().entrySet()) {
            out.writeUTF(r.getKey());
            out.writeInt(r.getValue().size());
            for (AuthTable.Grant g : r.getValue()) {
                out.writeByte(g.permission().ordinal());
                out.writeUTF(g.prefix());
            }
        }
    }

    public static AuthTable read(DataInput in) throws IOException {
        boolean enabled = in.readBoolean();
        int n = count(in);
        Map<String, AuthTable.User> users = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            String name = in.readUTF();
            users.put(name, new AuthTable.User(name, in.readUTF(), readStrings(in)));
        }
        int m = count(in);
        Map<String, List<AuthTable.Grant>> roles = new TreeMap<>();
        for (int i = 0; i < m; i++) {
            String role = in.readUTF();
            int g = count(in);
            List<AuthTable.Grant> grants = new ArrayList<>(Math.min(g, 64));
            for (int j = 0; j < g; j++) {
                grants.add(new AuthTable.Grant(permission(in.readByte()), in.readUTF()));
            }
            roles.put(role, grants);
        }
        return new AuthTable(enabled, users, roles);
    }

    static void writeChange(DataOutput out, Command.AuthChange change) throws IOException {
        if (change instanceof Command.AuthChange.Enable e) {
            out.writeByte(ENABLE);
            out.writeBoolean(e.enabled());
        } else if (change instanceof Command.AuthChange.AddUser a) {
            out.writeByte(ADD_USER);
            out.writeUTF(a.name());
            out.writeUTF(a.tokenHash());
            writeStrings(out, a.roles());
        } else if (change instanceof Command.AuthChange.RemoveUser r) {
            out.writeByte(REMOVE_USER);
            out.writeUTF(r.name());
        } else if (change instanceof Command.AuthChange.Grant g) {
            out.writeByte(GRANT);
            writeGrant(out, g.role(), g.permission(), g.prefix());
        } else if (change instanceof Command.AuthChange.Revoke g) {
            out.writeByte(REVOKE);
            writeGrant(out, g.role(), g.permission(), g.prefix());
        } else {
            throw new IllegalArgumentException("no encoding for " + change);
        }
    }

    static Command.AuthChange readChange(DataInput in) throws IOException {
        byte kind = in.readByte();
        return switch (kind) {
            case ENABLE -> new Command.AuthChange.Enable(in.readBoolean());
            case ADD_USER -> new Command.AuthChange.AddUser(in.readUTF(), in.readUTF(), readStrings(in));
            case REMOVE_USER -> new Command.AuthChange.RemoveUser(in.readUTF());
            case GRANT -> new Command.AuthChange.Grant(in.readUTF(), permission(in.readByte()), in.readUTF());
            case REVOKE -> new Command.AuthChange.Revoke(in.readUTF(), permission(in.readByte()), in.readUTF());
            default -> throw new InvalidCommandException("unknown permission change " + kind);
        };
    }

    private static void writeGrant(DataOutput out, String role, AuthTable.Permission p, String prefix) throws IOException {
        out.writeUTF(role);
        out.writeByte(p.ordinal());
        out.writeUTF(prefix);
    }

    private static AuthTable.Permission permission(byte code) {
        AuthTable.Permission[] all = AuthTable.Permission.values();
        if (code < 0 || code >= all.length) {
            throw new InvalidCommandException("unknown permission " + code);
        }
        return all[code];
    }

    private static void writeStrings(DataOutput out, List<String> strings) throws IOException {
        out.writeInt(strings.size());
        for (String s : strings) {
            out.writeUTF(s);
        }
    }

    private static List<String> readStrings(DataInput in) throws IOException {
        int n = count(in);
        List<String> strings = new ArrayList<>(Math.min(n, 64));
        for (int i = 0; i < n; i++) {
            strings.add(in.readUTF());
        }
        return strings;
    }

    private static int count(DataInput in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > MAX_COUNT) {
            throw new InvalidCommandException("count " + n + " out of range");
        }
        return n;
    }
}
