package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.NodeStatus;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.StaleRead;
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

    @Command(name = "status", description = "Each node's role, leader, term and applied index.")
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
                nodes.forEach(n -> array.add(Json.MAPPER.valueToTree(n)));
                print(o);
            } else {
                out().println("leader: " + leader);
                long committed = nodes.stream().mapToLong(NodeStatus::commitIndex).max().orElse(0);
                for (NodeStatus n : nodes) {
                    if (NodeStatus.STARTING.equals(n.role())) {
                        out().printf("%-4s %-16s starting, applied %d of %d%n", n.id(), n.address(), n.appliedIndex(), committed);
                    } else {
                        out().printf("%-4s %-16s %-11s term %-4d applied %-8d items %-8d%s%n", n.id(), n.address(), n.role(),
                                n.term(), n.appliedIndex(), n.items(), n.error() == null ? "" : "  " + n.error());
                    }
                }
                out().flush();
            }
            return leader == null ? ExitCode.UNAVAILABLE : ExitCode.DONE;
        }
    }
}
