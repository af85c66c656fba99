package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.ClientOptions;
import io.ratchet.common.Durations;
import io.ratchet.client.backup.Backups;
import io.ratchet.client.backup.SavedBackup;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ratchet backup --out FILE}: a consistent copy of the whole state from the running cluster, at a
 * known index, verified as it arrives ({@link Backups}). Not a {@link ClientCommand}: it needs no client
 * session, only a stream from one node.
 */
@Command(name = "backup", description = {"Save a backup of the whole state to a file, without stopping writes.",
        "It holds items, documents, client sessions, idempotency results, the quota and cluster time, with every "
                + "write acknowledged before it began. --timeout bounds the whole transfer: give a large state more.",
        "Restore it into a new cluster, offline, on the nodes' machines: scripts/ratchet restore --from FILE --conf "
                + "NODE.properties ... (it runs from the node jar)."})
final class BackupCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--out", required = true, paramLabel = "FILE",
            description = "where to write it; the file appears only when the whole backup is in and verified")
    Path out;

    @Option(names = "--node", paramLabel = "ID", description = "the node that writes it (default: a follower, the first "
            + "by id that can, else the leader); apply pauses on that node while it writes the state")
    String node;

    @Override
    public Integer call() throws IOException {
        ClientOptionsMixin client = ((Main) spec.root().userObject()).options;
        client.requireSomeNodeListening();
        ClientOptions options = ClientOptions.parse(client.resolvePeers()).withCredentials(client.credentials());
        if (node != null) {
            String address = options.peers().get(node);
            if (address == null) {
                throw new IllegalArgumentException("no node '" + node + "' among the peers " + options.peers().keySet());
            }
            options = new ClientOptions(Map.of(node, address), options.group(), options.requestTimeout(),
                    options.maxAttempts(), options.operationTimeout(), options.sessionTimeout(), options.credentials());
        }
        // The timeout bounds each node's whole transfer: a large state needs more than the default.
        options = options.withTimeouts(options.requestTimeout(), options.maxAttempts(), Durations.parse(client.timeout));
        List<SavedBackup> groups = Backups.saveGroups(options, out);
        SavedBackup b = groups.get(0);
        ObjectNode o = Output.object();
        o.put("file", b.file().toString());
        o.put("node", b.node());
        o.put("cluster", b.cluster());
        o.put("clusterId", b.clusterId().toString());
        o.put("index", b.index());
        o.put("term", b.term());
        o.put("takenAt", b.takenAt().toString());
        o.put("bytes", b.bytes());
        o.put("sha256", b.sha256());
        if (groups.size() > 1) {
            // A cluster of several groups: each group's file (group 0's is the one above), all needed to restore.
            ArrayNode files = o.putArray("groups");
            for (int g = 0; g < groups.size(); g++) {
                SavedBackup each = groups.get(g);
                files.addObject().put("group", g).put("file", each.file().toString()).put("node", each.node())
                        .put("index", each.index()).put("bytes", each.bytes()).put("sha256", each.sha256());
            }
        }
        Output.print(spec.commandLine().getOut(), client.json, o);
        return ExitCode.DONE;
    }
}
