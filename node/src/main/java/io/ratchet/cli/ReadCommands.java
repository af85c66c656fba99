package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.NodeStatus;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.StaleRead;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Limits;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Reads and status. */
final class ReadCommands {
    private ReadCommands() {
    }

    @Command(name = "get", description = "Read a key (linearizable unless --stale).")
    static final class Get implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptionsMixin client;
        @Parameters(index = "0", paramLabel = "KEY")
        String key;
        @Option(names = "--stale", description = "let any node answer from its local state; it may miss recent writes")
        boolean stale;

        @Override
        public Integer call() {
            try (RatchetClient c = client.connect()) {
                Optional<Item> item;
                ObjectNode o;
                if (stale) {
                    StaleRead<Optional<Item>> read = c.getStale(key);
                    item = read.value();
                    o = item.map(Output::item).orElseGet(() -> absent(key));
                    o.put("stale", true);
                    o.put("servedBy", read.servedBy());
                } else {
                    item = c.get(key);
                    o = item.map(Output::item).orElseGet(() -> absent(key));
                }
                Output.print(spec.commandLine().getOut(), client.json, o);
                return item.isPresent() ? ExitCode.DONE : ExitCode.CONDITION_FAILED;
            }
        }

        private static ObjectNode absent(String key) {
            ObjectNode o = Output.object();
            o.put("key", key);
            o.putNull("value");
            o.put("index", 0);
            o.putNull("metadata");
            return o;
        }
    }

    @Command(name = "list", description = "List items in key order.")
    static final class ListItems implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptionsMixin client;
        @Option(names = "--prefix", defaultValue = "", description = "only keys starting with this (case-insensitive)")
        String prefix;
        @Option(names = "--start", defaultValue = "0", description = "items to skip")
        int start;
        @Option(names = "--page-size", defaultValue = "100", description = "at most this many items (1.." + Limits.MAX_PAGE_SIZE + ")")
        int pageSize;

        @Override
        public Integer call() {
            try (RatchetClient c = client.connect()) {
                List<Item> items = c.list(prefix, start, pageSize);
                ObjectNode o = Output.object();
                ArrayNode array = o.putArray("items");
                items.forEach(i -> array.add(Output.item(i)));
                if (client.json) {
                    Output.print(spec.commandLine().getOut(), true, o);
                } else {
                    items.forEach(i -> spec.commandLine().getOut().println(i.key() + "\t" + i.index() + "\t" + i.value()));
                    spec.commandLine().getOut().flush();
                }
                return ExitCode.DONE;
            }
        }
    }

    @Command(name = "status", description = "Each node's role, leader, term and applied index.")
    static final class Status implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptionsMixin client;

        @Override
        public Integer call() {
            try (RatchetClient c = client.connect()) {
                List<NodeStatus> nodes = c.status();
                String leader = nodes.stream().filter(n -> "LEADER".equals(n.role())).map(NodeStatus::id).findFirst().orElse(null);
                ObjectNode o = Output.object();
                o.put("leader", leader);
                o.put("term", nodes.stream().mapToLong(NodeStatus::term).max().orElse(0));
                ArrayNode array = o.putArray("nodes");
                for (NodeStatus n : nodes) {
                    array.add(io.ratchet.protocol.Json.MAPPER.valueToTree(n));
                }
                if (client.json) {
                    Output.print(spec.commandLine().getOut(), true, o);
                } else {
                    var out = spec.commandLine().getOut();
                    out.println("leader: " + leader);
                    for (NodeStatus n : nodes) {
                        out.printf("%-4s %-16s %-11s term %-4d applied %-8d items %-8d%s%n", n.id(), n.address(), n.role(),
                                n.term(), n.appliedIndex(), n.items(), n.error() == null ? "" : "  " + n.error());
                    }
                    out.flush();
                }
                return leader == null ? ExitCode.UNAVAILABLE : ExitCode.DONE;
            }
        }
    }
}
