package io.ratchet.node;

import io.ratchet.client.GrpcLogging;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * {@code java -jar ratchet-node.jar --conf FILE}: runs one server until the process is told to stop.
 * The server takes one option, so it parses it by hand and leaves picocli to the command line.
 */
public final class NodeMain {
    /**
     * With fewer than 3 cores the JDK sizes its common fork-join pool to one thread, and then every
     * {@code CompletableFuture.*Async} call without an executor starts a new thread. Ratis 3.3.0 makes
     * such calls on the follower's append path and on every unordered read reply, so on a 2-core
     * machine each replicated entry cost a thread start. Set before anything touches the pool; an
     * explicit {@code -Djava.util.concurrent.ForkJoinPool.common.parallelism} wins.
     */
    static final String COMMON_POOL_PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";

    static final String USAGE = "usage: java -jar ratchet-node.jar --conf FILE [--join]\n"
            + "  --conf FILE   the node's properties file, e.g. conf/local-3/n1.properties\n"
            + "  --join        on empty storage, wait to be added to a running cluster ('ratchet members add')\n"
            + "                instead of forming a new one with the configured peers";

    static final String JOIN = "--join";

    private NodeMain() {
    }

    public static void main(String[] args) throws Exception {
        if (System.getProperty(COMMON_POOL_PARALLELISM) == null) {
            System.setProperty(COMMON_POOL_PARALLELISM,
                    Integer.toString(Math.max(4, Runtime.getRuntime().availableProcessors() - 1)));
        }
        boolean join = List.of(args).contains(JOIN);
        Path conf = confOf(List.of(args).stream().filter(a -> !a.equals(JOIN)).toArray(String[]::new));
        if (conf == null) {
            System.err.println(USAGE);
            System.exit(args.length == 1 && (args[0].equals("--help") || args[0].equals("-h")) ? 0 : 2);
        }
        GrpcLogging.quiet();
        NodeConfig config;
        try {
            config = NodeConfig.load(conf, Path.of("").toAbsolutePath());
        } catch (java.io.IOException | IllegalArgumentException e) {
            System.err.println("ratchet node: " + e.getMessage());
            System.exit(2);
            return;
        }
        RatchetNode node;
        try {
            node = RatchetNode.start(config, join);
        } catch (IllegalStateException | java.io.IOException e) {
            // A heap too small, storage that cannot be used: say so in one line, not a trace.
            System.err.println("ratchet node " + config.id() + ": " + e.getMessage());
            System.exit(1);
            return;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
            } catch (Exception e) {
                System.err.println("ratchet node " + config.id() + ": stopping failed: " + e);
            } finally {
                stopped.countDown();
            }
        }, "ratchet-shutdown"));
        System.out.printf("ratchet node %s serving cluster '%s' (%s) on %s, storage %s%s%n",
                config.id(), config.group(), node.groupId().getUuid(), config.peers().get(config.id()), config.storage(),
                node.isMember() ? "" : "; waiting to be added: ratchet members add " + config.id() + "="
                        + config.peers().get(config.id()));
        System.out.flush();
        stopped.await();
    }

    /** The file after {@code --conf} (or in {@code --conf=FILE}); null when the arguments are not that. */
    static Path confOf(String[] args) {
        if (args.length == 2 && args[0].equals("--conf")) {
            return Path.of(args[1]);
        }
        if (args.length == 1 && args[0].startsWith("--conf=") && args[0].length() > "--conf=".length()) {
            return Path.of(args[0].substring("--conf=".length()));
        }
        return null;
    }
}
