package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.node.NodeCommand;
import io.ratchet.protocol.InvalidCommandException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParseResult;

/** The {@code ratchet} command: run a node, or talk to a cluster. */
@Command(name = "ratchet", mixinStandardHelpOptions = true, version = "ratchet 0.1.0",
        description = "A Raft-replicated compare-exchange cluster.",
        subcommands = {
            NodeCommand.class,
            WriteCommands.Put.class,
            ReadCommands.Get.class,
            WriteCommands.Delete.class,
            ReadCommands.ListItems.class,
            ReadCommands.Status.class,
            TransactionCommand.class,
            DocumentCommands.class,
            WatchCommand.class,
            LockCommand.class,
            ReserveCommand.class,
            BenchCommand.class,
        })
public final class Main implements Runnable {

    /**
     * With fewer than 3 cores the JDK sizes its common fork-join pool to one thread, and then every
     * {@code CompletableFuture.*Async} call without an executor starts a new thread. Ratis 3.3.0 makes
     * such calls on the follower's append path and on every unordered read reply, so on a 2-core
     * machine each replicated entry cost a thread start. Set before anything touches the pool; an
     * explicit {@code -Djava.util.concurrent.ForkJoinPool.common.parallelism} wins.
     */
    static final String COMMON_POOL_PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";

    static {
        if (System.getProperty(COMMON_POOL_PARALLELISM) == null) {
            System.setProperty(COMMON_POOL_PARALLELISM,
                    Integer.toString(Math.max(4, Runtime.getRuntime().availableProcessors() - 1)));
        }
    }

    /** Held so the level sticks: java.util.logging keeps loggers weakly. */
    private static final java.util.logging.Logger GRPC_LOG = java.util.logging.Logger.getLogger("org.apache.ratis.thirdparty.io.grpc");

    public static void main(String[] args) {
        // The shaded gRPC logs through java.util.logging; its INFO start-up lines are noise on stderr.
        GRPC_LOG.setLevel(java.util.logging.Level.WARNING);
        if (args.length > 0 && args[0].equals("node")) {
            // A server logs its life; a client command keeps stderr for errors.
            System.setProperty("ratchet.log.level", "INFO");
            System.setProperty("ratchet.ratis.log.level", "INFO");
        }
        System.exit(run(args));
    }

    /** Runs a command line and returns its exit code (see {@link ExitCode}). */
    public static int run(String... args) {
        CommandLine cli = new CommandLine(new Main());
        cli.setExecutionExceptionHandler(Main::handle);
        return cli.execute(args);
    }

    @Override
    public void run() {
        CommandLine.usage(this, System.out);
    }

    private static int handle(Exception e, CommandLine cli, ParseResult parsed) {
        int code;
        String kind;
        if (e instanceof InvalidRequestException || e instanceof InvalidCommandException || e instanceof IllegalArgumentException) {
            code = ExitCode.INVALID;
            kind = "invalid_request";
        } else if (e instanceof ClusterUnavailableException) {
            code = ExitCode.UNAVAILABLE;
            kind = "cluster_unavailable";
        } else if (e instanceof UnknownOutcomeException) {
            code = ExitCode.UNKNOWN_OUTCOME;
            kind = "unknown_outcome";
        } else {
            code = ExitCode.INTERNAL_ERROR;
            kind = "internal_error";
            e.printStackTrace(cli.getErr());
        }
        cli.getErr().println(cli.getCommandSpec().qualifiedName() + ": " + e.getMessage());
        cli.getErr().flush();
        ParseResult sub = parsed.subcommand();
        while (sub != null && sub.subcommand() != null) {
            sub = sub.subcommand(); // nested commands (doc get) carry the options
        }
        if (sub != null && sub.hasMatchedOption("--json")) {
            ObjectNode o = Output.object();
            o.put("error", kind);
            o.put("message", e.getMessage());
            o.put("exitCode", code);
            Output.print(cli.getOut(), true, o);
        }
        return code;
    }
}
