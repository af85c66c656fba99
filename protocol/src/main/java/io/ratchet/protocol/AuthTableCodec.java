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
    private static final Command.AuthChange.Kind[] CHANGES = Command.AuthChange.Kind.values();
    private static final AuthTable.Permission[] PERMISSIONS = AuthTable.Permission.values();
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
                out.writeByte(g.permission().tag());
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
        out.writeByte(change.changeKind().tag());
        Body body = switch (change.changeKind()) {
            case ENABLE -> o -> o.writeBoolean(((Command.AuthChange.Enable) change).enabled());
            case ADD_USER -> o -> {
                Command.AuthChange.AddUser a = (Command.AuthChange.AddUser) change;
                o.writeUTF(a.name());
                o.writeUTF(a.tokenHash());
                writeStrings(o, a.roles());
            };
            case REMOVE_USER -> o -> o.writeUTF(((Command.AuthChange.RemoveUser) change).name());
            case GRANT -> o -> {
                Command.AuthChange.Grant g = (Command.AuthChange.Grant) change;
                writeGrant(o, g.role(), g.permission(), g.prefix());
            };
            case REVOKE -> o -> {
                Command.AuthChange.Revoke r = (Command.AuthChange.Revoke) change;
                writeGrant(o, r.role(), r.permission(), r.prefix());
            };
        };
        body.write(out);
    }

    static Command.AuthChange readChange(DataInput in) throws IOException {
        byte tag = in.readByte();
        Command.AuthChange.Kind kind = WireKind.byTag(CHANGES, tag);
        if (kind == null) {
            throw new InvalidCommandException("unknown permission change " + tag);
        }
        return switch (kind) {
            case ENABLE -> new Command.AuthChange.Enable(in.readBoolean());
            case ADD_USER -> new Command.AuthChange.AddUser(in.readUTF(), in.readUTF(), readStrings(in));
            case REMOVE_USER -> new Command.AuthChange.RemoveUser(in.readUTF());
            case GRANT -> new Command.AuthChange.Grant(in.readUTF(), permission(in.readByte()), in.readUTF());
            case REVOKE -> new Command.AuthChange.Revoke(in.readUTF(), permission(in.readByte()), in.readUTF());
        };
    }

    private static void writeGrant(DataOutput out, String role, AuthTable.Permission p, String prefix) throws IOException {
        out.writeUTF(role);
        out.writeByte(p.tag());
        out.writeUTF(prefix);
    }

    private static AuthTable.Permission permission(byte code) {
        AuthTable.Permission permission = WireKind.byTag(PERMISSIONS, code);
        if (permission == null) {
            throw new InvalidCommandException("unknown permission " + code);
        }
        return permission;
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

    /** A change's fields, after its tag. */
    @FunctionalInterface
    private interface Body {
        void write(DataOutput out) throws IOException;
    }

    private static int count(DataInput in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > MAX_COUNT) {
            throw new InvalidCommandException("count " + n + " out of range");
        }
        return n;
    }
}
