package io.ratchet.node;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.ErrorCode;
import io.ratchet.protocol.BackupHeader;
import io.ratchet.protocol.InvalidBackupException;
import io.ratchet.protocol.Json;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * {@code ratchet restore}: starts a new cluster from a backup by writing it into its nodes' empty storage,
 * offline ({@link ClusterRestore}). It runs from the node jar, as etcd's offline restore runs from etcdutl
 * and not etcdctl: it works on a node's storage with Ratis' server code, which the command line does not
 * carry. {@code scripts/ratchet restore ...} runs it. Its exit codes are the command line's: 0 done, 2
 * invalid input (nothing written), 5 failed while writing (the message names the storage to empty).
 */
public final class RestoreMain {
    static final int DONE = 0;
    static final int INVALID = ErrorCode.INVALID_REQUEST.exitCode();

    static final String USAGE = """
            usage: ratchet restore --from FILE --conf NODE.properties [--conf ...] [--cluster-id UUID] [--dry-run] [--json]
              Offline: writes a backup into the empty storage of the nodes of a new cluster, under a new cluster
              id, so the restored cluster and the one the backup came from can never mix. Start the nodes after.
              --from FILE         the backup, from 'ratchet backup --out FILE'
              --conf FILE         a node's properties file; once for each of the cluster's nodes on this machine
              --cluster-id UUID   the new cluster's id, as the restore of its first nodes printed it: for its
                                  nodes on other machines (default: a new random id)
              --dry-run           verify the backup (and that the nodes' storage is empty); write nothing
              --json              print one JSON object
            Example:
              ratchet restore --from backup.rbk --conf conf/local-3/n1.properties --conf conf/local-3/n2.properties""";

    /** The command line, parsed. */
    private record Request(Path from, List<Path> confs, UUID clusterId, boolean dryRun, boolean json) {
    }

    private RestoreMain() {
    }

    public static void main(String[] args) {
        // Ratis tells of every directory it formats; an operator's command says only what it did.
        System.setProperty("ratchet.ratis.log.level", System.getProperty("ratchet.ratis.log.level", "WARN"));
        System.setProperty("ratchet.log.level", System.getProperty("ratchet.log.level", "WARN"));
        System.exit(run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
    }

    /** Runs a restore command line, printing to {@code out} and {@code err}; returns its exit code. */
    static int run(PrintWriter out, PrintWriter err, String... args) {
        Request request;
        try {
            request = parse(args);
        } catch (IllegalArgumentException e) {
            err.println("ratchet restore: " + e.getMessage());
            err.println(USAGE);
            return INVALID;
        }
        if (request == null) {
            out.println(USAGE);
            return DONE;
        }
        ClusterRestore.Plan plan;
        try {
            List<NodeConfig> nodes = new ArrayList<>();
            for (Path conf : request.confs()) {
                nodes.add(NodeConfig.load(conf, Path.of("").toAbsolutePath()));
            }
            plan = ClusterRestore.plan(request.from(), nodes, request.clusterId());
        } catch (IllegalArgumentException | IOException e) {
            // A bad conf, busy storage, a damaged backup, a file that cannot be read: nothing was written.
            return refuse(out, err, request, "invalid_request", ErrorCode.INVALID_REQUEST, message(e));
        }
        try (ClusterRestore.Plan p = plan) {
            if (!request.dryRun()) {
                try {
                    ClusterRestore.write(p);
                } catch (IOException e) {
                    return refuse(out, err, request, "restore_failed", ErrorCode.INTERNAL_ERROR, e.getMessage());
                }
            }
            print(out, request, p);
            return DONE;
        } catch (IOException e) {
            // Only deleting the unpacked state can fail here, after the restore: say so, and where it is.
            err.println("ratchet restore: done, but the unpacked state in " + plan.stagingDir()
                    + " could not be deleted: " + e.getMessage());
            return DONE;
        }
    }

    /** Null for {@code --help}. */
    private static Request parse(String[] args) {
        Path from = null;
        List<Path> confs = new ArrayList<>();
        UUID clusterId = null;
        boolean dryRun = false;
        boolean json = false;
        boolean commandWord = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "-h", "--help" -> {
                    return null;
                }
                case "--from" -> from = Path.of(value(args, ++i, a));
                case "--conf" -> confs.add(Path.of(value(args, ++i, a)));
                case "--cluster-id" -> clusterId = uuid(value(args, ++i, a));
                case "--dry-run" -> dryRun = true;
                case "--json" -> json = true;
                default -> {
                    // scripts/ratchet passes the command word along with everything else.
                    if (!a.equals("restore") || commandWord) {
                        throw new IllegalArgumentException("unknown argument '" + a + "'");
                    }
                    commandWord = true;
                }
            }
        }
        if (from == null) {
            throw new IllegalArgumentException("--from FILE is required");
        }
        if (confs.isEmpty() && !dryRun) {
            throw new IllegalArgumentException("--conf NODE.properties is required, once for each node to restore");
        }
        return new Request(from, List.copyOf(confs), clusterId, dryRun, json);
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length || args[i].startsWith("--")) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }

    private static UUID uuid(String text) {
        try {
            return UUID.fromString(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--cluster-id must be a UUID, as a restore prints it; not '" + text + "'");
        }
    }

    private static String message(Exception e) {
        // A missing conf or unreadable file: the JDK's message is the bare path.
        return e instanceof IOException && !(e instanceof InvalidBackupException) ? "cannot read " + e.getMessage()
                : e.getMessage();
    }

    private static int refuse(PrintWriter out, PrintWriter err, Request request, String kind, ErrorCode code, String message) {
        err.println("ratchet restore: " + message);
        err.flush();
        if (request.json()) {
            ObjectNode o = Json.MAPPER.createObjectNode();
            o.put("error", kind);
            o.put("message", message);
            o.put("exitCode", code.exitCode());
            o.put("code", code.wireName());
            out.println(Json.write(o));
            out.flush();
        }
        return code.exitCode();
    }

    private static void print(PrintWriter out, Request request, ClusterRestore.Plan plan) {
        BackupHeader h = plan.backup().header();
        String id = request.dryRun() ? null : plan.clusterId().getUuid().toString();
        if (request.json()) {
            ObjectNode o = Json.MAPPER.createObjectNode();
            o.put("restored", !request.dryRun());
            o.put("index", h.index());
            o.put("term", h.term());
            o.put("items", plan.items());
            o.put("sha256", plan.backup().sha256());
            o.put("sourceCluster", h.cluster());
            o.put("sourceClusterId", h.clusterId().toString());
            o.put("takenAt", Instant.ofEpochMilli(h.takenAt()).toString());
            o.put("clusterId", id);
            if (plan.backups().size() > 1) {
                o.put("groups", plan.backups().size());
            }
            ArrayNode nodes = o.putArray("nodes");
            plan.nodes().forEach(n -> nodes.addObject().put("id", n.id()).put("storage", n.storage().toString()));
            out.println(Json.write(o));
        } else {
            out.printf("backup: %s, cluster '%s' (%s), index %d, term %d, %d items, taken %s, sha256 %s%n",
                    request.from(), h.cluster(), h.clusterId(), h.index(), h.term(), plan.items(),
                    Instant.ofEpochMilli(h.takenAt()), plan.backup().sha256());
            if (plan.backups().size() > 1) {
                out.printf("groups: %d, each group's file verified (the index and term above are group 0's)%n", plan.backups().size());
            }
            if (request.dryRun()) {
                out.println("verified; nothing written (--dry-run)" + (plan.nodes().isEmpty() ? "" : ": the nodes' storage is empty"));
            } else {
                plan.nodes().forEach(n -> out.printf("restored node %s into %s%n", n.id(), n.storage()));
                out.printf("cluster id: %s%s%n", id, plan.given() ? " (given)"
                        : " (new: restore the cluster's nodes on other machines with --cluster-id " + id + ")");
                out.printf("start the nodes: they form the restored cluster, and new writes get indexes above %d%n", h.index());
            }
        }
        out.flush();
    }
}
