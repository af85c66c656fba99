package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.ClusterAdmin;
import io.ratchet.client.RatchetClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code ratchet members}: the cluster's configuration, and changes to it. Each change is carried out by
 * the leader through Raft and refused, with nothing changed, when it cannot work or would lose the
 * majority (exit {@link ExitCode#REFUSED}).
 */
@Command(name = "members", description = "The cluster's members: list them (the default), add or remove one.",
        subcommands = {MembersCommand.List.class, MembersCommand.Add.class, MembersCommand.Remove.class})
final class MembersCommand extends ClientCommand {
    @Override
    int run(RatchetClient c) {
        return list(this, c);
    }

    static int list(ClientCommand command, RatchetClient c) {
        show(command, c.admin().members());
        return ExitCode.DONE;
    }

    static void show(ClientCommand command, ClusterAdmin.Membership m) {
        if (command.json()) {
            ObjectNode o = Output.object();
            o.put("leader", m.leader());
            o.put("configurationIndex", m.index());
            o.put("changing", m.changing());
            ArrayNode array = o.putArray("members");
            for (ClusterAdmin.Member member : m.members()) {
                array.addObject().put("id", member.id()).put("address", member.address()).put("role", member.role())
                        .put("state", member.status().role()).put("appliedIndex", member.status().appliedIndex())
                        .put("lag", member.lag());
            }
            ArrayNode differing = o.putArray("groupsDiffering");
            for (ClusterAdmin.GroupMembers g : m.differing()) {
                ObjectNode d = differing.addObject().put("group", g.group());
                g.voters().forEach(d.putArray("voters")::add);
                g.listeners().forEach(d.putArray("listeners")::add);
            }
            command.print(o);
            return;
        }
        command.out().printf("leader: %s   configuration at index %d%s%n", m.leader(), m.index(),
                m.changing() ? "   (a change is under way)" : "");
        for (ClusterAdmin.Member member : m.members()) {
            command.out().printf("%-6s %-22s %-9s %-12s applied %-9d %s%n", member.id(), member.address(), member.role(),
                    member.status().role(), member.status().appliedIndex(),
                    member.lag() < 0 ? "did not answer" : "lag " + member.lag());
        }
        for (ClusterAdmin.GroupMembers g : m.differing()) {
            command.out().printf("group %d has other members: voters %s%s%n", g.group(), String.join(",", g.voters()),
                    g.listeners().isEmpty() ? "" : ", listeners " + String.join(",", g.listeners()));
        }
        if (!m.differing().isEmpty()) {
            command.out().printf("a change stopped half way: ask it again (members add or remove) to finish it in every group%n");
        }
        command.out().flush();
    }

    @Command(name = "list", description = "Each member: id, address, voter or listener, its role, applied index and lag.")
    static final class List extends ClientCommand {
        @Override
        int run(RatchetClient c) {
            return list(this, c);
        }
    }

    @Command(name = "add", description = "Add a node, started with --join on empty storage. It catches up from the "
            + "snapshot and log as a non-voting member and becomes a voter once caught up.")
    static final class Add extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ID=HOST:PORT", description = "the new node's id and its address")
        String member;

        @Override
        int run(RatchetClient c) {
            int eq = member.indexOf('=');
            if (eq <= 0 || eq == member.length() - 1) {
                throw new IllegalArgumentException("give the new member as ID=HOST:PORT, not '" + member + "'");
            }
            show(this, c.admin().addMember(member.substring(0, eq).trim(), member.substring(eq + 1).trim()));
            return ExitCode.DONE;
        }
    }

    @Command(name = "remove", description = "Remove a member; refused if it is the last voter or the voters left "
            + "would not have a live majority.")
    static final class Remove extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ID", description = "the member's id")
        String id;

        @Override
        int run(RatchetClient c) {
            show(this, c.admin().removeMember(id));
            return ExitCode.DONE;
        }
    }

    /** {@code ratchet leader transfer ID}. */
    @Command(name = "leader", description = "Leadership: 'leader transfer ID' hands it to another voter.",
            subcommands = Leader.Transfer.class)
    static final class Leader extends ClientCommand {
        @Override
        int run(RatchetClient c) {
            spec.commandLine().usage(out());
            return ExitCode.INVALID;
        }

        @Command(name = "transfer", description = "Make the voter ID the leader, once it has caught up; "
                + "returns when it leads.")
        static final class Transfer extends ClientCommand {
            @Parameters(index = "0", paramLabel = "ID", description = "the voter to lead")
            String id;

            @Override
            int run(RatchetClient c) {
                c.admin().transferLeadership(id);
                if (json()) {
                    ObjectNode o = Output.object();
                    o.put("leader", id);
                    print(o);
                } else {
                    out().println("leader: " + id);
                    out().flush();
                }
                return ExitCode.DONE;
            }
        }
    }
}
