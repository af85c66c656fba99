package io.ratchet.node;

import io.ratchet.common.GrpcLogging;
import io.ratchet.common.Release;
import java.nio.file.Path;
import java.util.List;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar ratchet-node.jar --conf FILE}, or a release's {@code bin/ratchet-node}: runs one server
 * until the process is told to stop. The server takes three options, so it parses them by hand and leaves
 * picocli to the command line.
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

    static final String USAGE = "usage: ratchet-node --conf FILE [--join] | --version   (bin/ratchet-node of a release,"
            + " or java -jar ratchet-node.jar)\n"
            + "  --conf FILE   the node's properties file, e.g. conf/local-3/n1.properties\n"
            + "  --join        on empty storage, wait to be added to a running cluster ('ratchet members add')\n"
            + "                instead of forming a new one with the configured peers\n"
            + "  --version     print the release this node is and exit";

    static final String JOIN = "--join";

    /** The exit code of a node that halted because its disk failed (sysexits' EX_IOERR). */
    public static final int EXIT_STORAGE = 74;
    /**
     * The exit code of a node whose log holds an entry a later release wrote (sysexits' EX_DATAERR): a
     * restart of the same release cannot help, so the systemd unit does not restart it.
     */
    public static final int EXIT_LATER_RELEASE = 65;
    /**
     * How long a leader told to stop waits for its hand-over before it closes anyway: well inside the
     * systemd unit's TimeoutStopSec (30 s).
     */
    static final Duration HAND_OVER_ON_STOP = Duration.ofSeconds(5);
    /** How long a node whose disk filled may take to close before it halts instead. */
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);
    /** How often a node whose disk filled looks for space. */
    private static final Duration SPACE_POLL = Duration.ofSeconds(1);
    private static final Logger LOG = LoggerFactory.getLogger(NodeMain.class);

    private NodeMain() {
    }

    public static void main(String[] args) throws Exception {
        if (System.getProperty(COMMON_POOL_PARALLELISM) == null) {
            System.setProperty(COMMON_POOL_PARALLELISM,
                    Integer.toString(Math.max(4, Runtime.getRuntime().availableProcessors() - 1)));
        }
        if (args.length == 1 && args[0].equals("--version")) {
            System.out.println("ratchet-node " + Release.version());
            return;
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
        // The first line of every start: which release wrote what follows in the log.
        LOG.info("ratchet-node {} starting node {} from {} (java {})", Release.version(), config.id(),
                conf.toAbsolutePath(), Runtime.version());
        run(config, join);
    }

    /**
     * Runs the node until the process is told to stop. When its storage fails under it, it stops serving:
     * on a full disk it closes, waits until the disk has room again and starts anew (recovering from what it
     * had made durable, catching up from the others); on an I/O error it halts with {@link #EXIT_STORAGE}:
     * a disk that fails writes or fsyncs cannot be trusted with more, and closing cleanly would ask it for
     * more of both. Either way it acknowledges nothing it has not made durable, and the others go on.
     */
    private static void run(NodeConfig config, boolean join) throws InterruptedException {
        CountDownLatch stopped = new CountDownLatch(1);
        AtomicReference<RatchetNode> current = new AtomicReference<>();
        // Completed (with no failure) when the process is told to stop.
        CompletableFuture<Halt> stop = new CompletableFuture<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop.complete(null);
            try {
                RatchetNode node = current.getAndSet(null);
                if (node != null) {
                    node.handOverLeadership(HAND_OVER_ON_STOP);
                    node.close();
                }
            } catch (Exception e) {
                System.err.println("ratchet node " + config.id() + ": stopping failed: " + e);
            } finally {
                stopped.countDown();
            }
        }, "ratchet-shutdown"));
        boolean diskFilled = false;
        while (!stop.isDone()) {
            if (diskFilled && !awaitSpace(config, stop)) {
                break;
            }
            RatchetNode node;
            try {
                node = RatchetNode.start(config, join);
            } catch (RuntimeException | java.io.IOException e) {
                // A heap too small, storage that cannot be used: say so in one line, not a trace. Whatever it
                // was, the process ends: Ratis' and gRPC's threads would otherwise keep a node that never
                // started alive, and a service manager would take it for one that runs.
                System.err.println("ratchet node " + config.id() + ": " + e.getMessage());
                System.exit(1);
                return;
            }
            current.set(node);
            if (stop.isDone() && current.compareAndSet(node, null)) {
                closeQuietly(node);
                break;
            }
            System.out.printf("ratchet node %s serving cluster '%s' (%s%s) on %s, storage %s%s%n",
                    config.id(), config.group(), node.groupId().getUuid(),
                    config.groups() == 1 ? "" : ", " + config.groups() + " Raft groups", config.peers().get(config.id()), config.storage(),
                    node.isMember() ? "" : "; waiting to be added: ratchet members add " + config.id() + "="
                            + config.peers().get(config.id()));
            System.out.flush();
            Halt halt = node.halted().applyToEither(stop, f -> f).join();
            if (halt == null || !current.compareAndSet(node, null)) {
                break; // stopping: the shutdown hook closes it
            }
            switch (halt.reason()) {
                case LATER_RELEASE -> halt("node " + config.id() + " (ratchet " + Release.version() + ") halts: " + halt
                        + ". It stops rather than skip the entry and drift from the members that applied it: install the"
                        + " release the others run (docs/OPERATING.md, \"Upgrading\"), then start it again; it goes on from that entry",
                        EXIT_LATER_RELEASE);
                case DISK_FAILED -> halt("node " + config.id() + " halts: its disk failed a write or an fsync (" + halt.cause()
                        + "). A failed fsync cannot be retried (the kernel may have dropped what it could not write), so it "
                        + "stops rather than serve on: check or replace the disk, then start it again (it recovers from "
                        + "what it had made durable), or replace the node (docs/OPERATING.md, \"Operating a cluster\")", EXIT_STORAGE);
                case DISK_FULL -> {
                    LOG.error("node {} stops serving: {}", config.id(), halt);
                    if (!closeWithin(node, CLOSE_TIMEOUT)) {
                        LOG.error("node {} did not close within {} s after its disk filled; halting", config.id(),
                                CLOSE_TIMEOUT.toSeconds());
                        Runtime.getRuntime().halt(EXIT_STORAGE);
                    }
                }
            }
            diskFilled = true;
        }
        stopped.await();
    }

    /** Says why in the log and on stderr, then ends the process at once with {@code code}, closing nothing. */
    private static void halt(String why, int code) {
        LOG.error(why);
        System.err.println("ratchet " + why);
        System.err.flush();
        Runtime.getRuntime().halt(code);
    }

    /**
     * Waits until the storage's disk has {@link Halt#resumeAt room} again; false when the process
     * is stopping meanwhile. Says every minute what it waits for: the alarm an operator sees in the log
     * (the node serves nothing meanwhile, so the others' status shows it unreachable).
     */
    private static boolean awaitSpace(NodeConfig config, CompletableFuture<?> stop) throws InterruptedException {
        long needed = Halt.resumeAt(config.minFreeBytes());
        long nextSay = 0;
        while (!stop.isDone()) {
            long free = config.storage().toFile().getUsableSpace();
            if (free >= needed) {
                LOG.warn("node {}: the disk has {} bytes free again (needs {}); starting again", config.id(), free, needed);
                return true;
            }
            if (System.nanoTime() - nextSay >= 0) {
                LOG.error("node {} is not serving: the disk that holds {} is full ({} bytes free); it starts again by "
                        + "itself once {} bytes are free", config.id(), config.storage(), free, needed);
                nextSay = System.nanoTime() + Duration.ofMinutes(1).toNanos();
            }
            Thread.sleep(SPACE_POLL.toMillis());
        }
        return false;
    }

    private static boolean closeWithin(RatchetNode node, Duration timeout) throws InterruptedException {
        Thread closer = new Thread(() -> closeQuietly(node), "ratchet-close-after-failure");
        closer.setDaemon(true);
        closer.start();
        closer.join(timeout.toMillis());
        return !closer.isAlive();
    }

    private static void closeQuietly(RatchetNode node) {
        try {
            node.close();
        } catch (Exception e) {
            LOG.warn("closing node {}: {}", node.config().id(), e.toString());
        }
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
