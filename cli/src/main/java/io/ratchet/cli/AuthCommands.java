package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.AuthTable;
import io.ratchet.protocol.Command.AuthChange;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ratchet auth}, {@code user} and {@code role}: who may do what. Every change is a log entry, so
 * every node enforces the same table from that entry on; only an administrator may make one once
 * authentication is on.
 */
final class AuthCommands {
    private AuthCommands() {
    }

    /** Prints the table: text, or JSON with {@code --json}. */
    static void show(ClientCommand command, AuthTable table, String token) {
        if (command.json()) {
            ObjectNode o = Output.object();
            o.put("enabled", table.enabled());
            if (token != null) {
                o.put("token", token);
            }
            ObjectNode users = o.putObject("users");
            table.users().forEach((name, user) -> {
                ArrayNode roles = users.putArray(name);
                user.roles().forEach(roles::add);
            });
            ObjectNode roles = o.putObject("roles");
            table.roles().forEach((role, grants) -> {
                ArrayNode array = roles.putArray(role);
                grants.forEach(g -> array.addObject().put("permission", g.permission().label()).put("prefix", g.prefix()));
            });
            command.print(o);
            return;
        }
        if (token != null) {
            command.out().println("token: " + token);
            command.out().println("(shown once: the cluster keeps only its SHA-256; give it as RATCHET_TOKEN or --token)");
        }
        command.out().println("authentication: " + (table.enabled() ? "on" : "off"));
        table.users().forEach((name, user) -> command.out().println("user " + name + "  roles " + user.roles()));
        table.roles().forEach((role, grants) -> grants.forEach(g ->
                command.out().println("role " + role + "  " + g.permission().label() + " '" + g.prefix() + "'")));
        command.out().flush();
    }

    @Command(name = "auth", description = "Authentication: 'auth status', 'auth enable' (needs a user with the "
            + "root role first), 'auth disable'.",
            subcommands = {Status.class, Enable.class, Disable.class})
    static final class Auth extends ClientCommand {
        @Override
        int run(RatchetClient c) {
            show(this, c.authStatus(), null);
            return ExitCode.DONE;
        }
    }

    @Command(name = "status", description = "Whether authentication is on, the users and their roles, the roles' grants.")
    static final class Status extends ClientCommand {
        @Override
        int run(RatchetClient c) {
            show(this, c.authStatus(), null);
            return ExitCode.DONE;
        }
    }

    @Command(name = "enable", description = "Turn authentication and permissions on; refused unless a user has "
            + "admin on every key (the root role).")
    static final class Enable extends ClientCommand {
        @Override
        int run(RatchetClient c) {
            show(this, c.changeAuth(new AuthChange.Enable(true)), null);
            return ExitCode.DONE;
        }
    }

    @Command(name = "disable", description = "Turn authentication off: every caller may do everything.")
    static final class Disable extends ClientCommand {
        @Override
        int run(RatchetClient c) {
            show(this, c.changeAuth(new AuthChange.Enable(false)), null);
            return ExitCode.DONE;
        }
    }

    @Command(name = "user", description = "Users: 'user add NAME --role R' (prints its token, once), 'user remove NAME'.",
            subcommands = {AddUser.class, RemoveUser.class})
    static final class User extends ClientCommand {
        @Override
        int run(RatchetClient c) {
            spec.commandLine().usage(out());
            return ExitCode.INVALID;
        }
    }

    @Command(name = "add", description = "Add a user with a new random token, printed once; the cluster keeps its SHA-256.")
    static final class AddUser extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME", description = "the user's name")
        String name;

        @Option(names = "--role", paramLabel = "ROLE", description = "a role the user holds (repeat for more); "
                + "'root' is admin on every key")
        List<String> roles = new ArrayList<>();

        @Override
        int run(RatchetClient c) {
            String token = c.addUser(name, roles);
            show(this, c.authStatus(), token);
            return ExitCode.DONE;
        }
    }

    @Command(name = "remove", description = "Remove a user: its token stops working with this entry.")
    static final class RemoveUser extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME", description = "the user's name")
        String name;

        @Override
        int run(RatchetClient c) {
            show(this, c.changeAuth(new AuthChange.RemoveUser(name)), null);
            return ExitCode.DONE;
        }
    }

    @Command(name = "role", description = "Roles: 'role grant ROLE PERMISSION PREFIX', 'role revoke ROLE PERMISSION PREFIX'.",
            subcommands = {Grant.class, Revoke.class})
    static final class Role extends ClientCommand {
        @Override
        int run(RatchetClient c) {
            spec.commandLine().usage(out());
            return ExitCode.INVALID;
        }
    }

    /** A grant's three words, shared by {@code grant} and {@code revoke}. */
    abstract static class GrantWords extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ROLE", description = "the role (created by its first grant)")
        String role;

        @Parameters(index = "1", paramLabel = "PERMISSION", description = "read, write (includes read) or admin (includes both)")
        String permission;

        @Parameters(index = "2", paramLabel = "PREFIX", description = "the key prefix, e.g. orders/ ('' for every key)")
        String prefix;

        abstract AuthChange change(AuthTable.Permission p);

        @Override
        int run(RatchetClient c) {
            show(this, c.changeAuth(change(AuthTable.Permission.parse(permission))), null);
            return ExitCode.DONE;
        }
    }

    @Command(name = "grant", description = "Grant read, write or admin on keys starting with PREFIX ('' for all).")
    static final class Grant extends GrantWords {
        @Override
        AuthChange change(AuthTable.Permission p) {
            return new AuthChange.Grant(role, p, prefix);
        }
    }

    @Command(name = "revoke", description = "Take a grant back; a role with none left is gone.")
    static final class Revoke extends GrantWords {
        @Override
        AuthChange change(AuthTable.Permission p) {
            return new AuthChange.Revoke(role, p, prefix);
        }
    }
}
