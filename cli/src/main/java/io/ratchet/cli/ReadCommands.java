package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.NodeStatus;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.StaleRead;
import io.ratchet.protocol.ByteSize;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Limits;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** Reads and status. */
final class ReadCommands {
    private ReadCommands() {
    }

    @Command(name = "get", description = "Read a key (linearizable unless --stale).")
    static final class Get extends ClientCommand {
        @Parameters(index = "0", paramLabel = "KEY")
        String key;
        @Option(names = "--stale", description = "let any node answer from its local state; it may miss recent writes")
        boolean stale;

        @Override
        int run(RatchetClient c) {
            Optional<Item> item;
            ObjectNode o;
            if (stale) {
                StaleRead<Optional<Item>> read = c.getStale(key);
                item = read.value();
                o = item.map(Output::item).orElseGet(() -> Output.absent(key));
                o.put("stale", true);
                o.put("servedBy", read.servedBy());
            } else {
                item = c.get(key);
                o = item.map(Output::item).orElseGet(() -> Output.absent(key));
            }
            print(o);
            return item.isPresent() ? ExitCode.DONE : ExitCode.CONDITION_FAILED;
        }
    }

    @Command(name = "list", description = "List items in key order.")
    static final class ListItems extends ClientCommand {
        @Option(names = "--prefix", defaultValue = "", description = "only keys starting with this (case-insensitive)")
        String prefix;
        @Option(names = "--start", defaultValue = "0", description = "items to skip")
        int start;
        @Option(names = "--page-size", defaultValue = "100", description = "at most this many items (1.." + Limits.MAX_PAGE_SIZE + ")")
        int pageSize;

        @Override
        int run(RatchetClient c) {
            List<Item> items = c.list(prefix, start, pageSize);
            ObjectNode o = Output.object();
            ArrayNode array = o.putArray("items");
            items.forEach(i -> array.add(Output.item(i)));
            if (json()) {
                print(o);
            } else {
                items.forEach(i -> out().println(i.key() + "\t" + i.index() + "\t" + i.value()));
                out().flush();
            }
            return ExitCode.DONE;
        }
    }

    @Command(name = "status", description = "Each node's role, term, commit and applied index, and whether it is ready.")
    static final class Status extends ClientCommand {
        @Override
        int run(RatchetClient c) {
            List<NodeStatus> nodes = c.status();
            String leader = nodes.stream().filter(n -> "LEADER".equals(n.role())).map(NodeStatus::id).findFirst().orElse(null);
            if (json()) {
                ObjectNode o = Output.object();
                o.put("leader", leader);
                o.put("term", nodes.stream().mapToLong(NodeStatus::term).max().orElse(0));
                ArrayNode array = o.putArray("nodes");
                for (NodeStatus n : nodes) {
                    ObjectNode node = Json.MAPPER.valueToTree(n);
                    node.put("ready", n.readiness().ready());
                    node.put("quotaAlarm", n.quotaAlarm());
                    notReady(n).forEach(node.putArray("notReady")::add);
                    array.add(node);
                }
                print(o);
            } else {
                out().println("leader: " + leader);
                // One release (the usual case) on a line of its own; during a rolling upgrade, each node's.
                List<String> releases = nodes.stream().filter(n -> n.error() == null).map(Status::release).distinct().toList();
                boolean mixed = releases.size() > 1;
                if (!mixed && !releases.isEmpty()) {
                    out().println("release: " + releases.get(0));
                }
                long committed = nodes.stream().mapToLong(NodeStatus::commitIndex).max().orElse(0);
                for (NodeStatus n : nodes) {
                    if (NodeStatus.STARTING.equals(n.role())) {
                        out().printf("%-4s %-16s starting, applied %d of %d  %s%s%n", n.id(), n.address(), n.appliedIndex(),
                                committed, ready(n), mixed ? "  release " + release(n) : "");
                    } else {
                        out().printf("%-4s %-16s %-11s term %-4d commit %-8d applied %-8d items %-8d %s%s%s%s%s%n", n.id(),
                                n.address(), n.role(), n.term(), n.commitIndex(), n.appliedIndex(), n.items(), ready(n),
                                storage(n), led(n), mixed && n.error() == null ? "  release " + release(n) : "",
                                n.error() == null ? "" : "  " + n.error());
                    }
                }
                out().flush();
            }
            return leader == null ? ExitCode.UNAVAILABLE : ExitCode.DONE;
        }

        /** On a cluster of several groups, which ones the node leads (the line's other figures are group 0's). */
        private static String led(NodeStatus n) {
            if (n.groups().isEmpty()) {
                return "";
            }
            List<String> led = n.groups().stream().filter(g -> "LEADER".equals(g.role())).map(g -> String.valueOf(g.group())).toList();
            return "  leads " + (led.isEmpty() ? "no group" : "group" + (led.size() == 1 ? " " : "s ") + String.join(",", led))
                    + " of " + n.groups().size();
        }

        /** The release a node said it runs; nodes of releases before they said it do not. */
        private static String release(NodeStatus n) {
            return n.release() != null ? n.release() : "(not said)";
        }

        /** The node's storage against its quota, and the alarm past 80%; nothing for a node that did not answer. */
        private static String storage(NodeStatus n) {
            if (n.quotaBytes() == 0) {
                return "";
            }
            return String.format("  storage %s of %s (%d%%)%s", ByteSize.format(n.usedBytes()), ByteSize.format(n.quotaBytes()),
                    n.usedBytes() * 100 / n.quotaBytes(), n.quotaAlarm() ? " QUOTA ALARM" : "");
        }

        /** "ready", or why not; a node that did not answer is plainly not ready (its error follows). */
        private static String ready(NodeStatus n) {
            if (n.readiness().ready()) {
                return "ready";
            }
            return n.error() != null ? "not ready" : "not ready: " + String.join("; ", notReady(n));
        }

        /** Why a node is not ready (empty when it is): for one that did not answer, just that. */
        private static List<String> notReady(NodeStatus n) {
            return n.error() != null ? List.of("did not answer") : n.readiness().failed();
        }
    }
}
