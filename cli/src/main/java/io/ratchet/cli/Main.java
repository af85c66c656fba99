package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.GrpcLogging;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.InvalidCommandException;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParseResult;

/** The {@code ratchet} command: talk to a cluster. The server is {@code ratchet-node.jar}. */
@Command(name = "ratchet", mixinStandardHelpOptions = true, version = "ratchet 0.1.0",
        description = "A Raft-replicated compare-exchange cluster.",
        subcommands = {
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

    public static void main(String[] args) {
        // The shaded gRPC logs through java.util.logging; its INFO start-up lines are noise on stderr.
        GrpcLogging.quiet();
        System.exit(run(args));
    }

    /** One example per command, shown at the end of its help. */
    private static final Map<String, String> EXAMPLES = Map.ofEntries(
            Map.entry("put", "ratchet put emails/ada@example.com '\"users/1\"' --index 0"),
            Map.entry("get", "ratchet get emails/ada@example.com"),
            Map.entry("delete", "ratchet delete stock/widgets --index 6"),
            Map.entry("list", "ratchet list --prefix emails/ --page-size 100"),
            Map.entry("status", "ratchet status"),
            Map.entry("txn", "ratchet txn '[{\"op\":\"put\",\"key\":\"a\",\"value\":1,\"index\":0},"
                    + "{\"op\":\"check\",\"key\":\"b\",\"index\":0}]'"),
            Map.entry("doc", "ratchet doc put users/7 '{\"name\":\"Ada\"}'"),
            Map.entry("doc get", "ratchet doc get users/7"),
            Map.entry("doc put", "ratchet doc put users/7 '{\"name\":\"Ada L.\"}' --guard-index 12"),
            Map.entry("doc delete", "ratchet doc delete users/7 --guard-index 13"),
            Map.entry("doc list", "ratchet doc list --prefix users/"),
            Map.entry("watch", "ratchet watch stock/widgets --after 7 --timeout 30s"),
            Map.entry("lock", "ratchet lock acquire printer-3 --lease 30s --wait 10s"),
            Map.entry("lock acquire", "ratchet lock acquire printer-3 --lease 30s --wait 10s"),
            Map.entry("lock renew", "ratchet lock renew printer-3 --index 42 --lease 30s"),
            Map.entry("lock release", "ratchet lock release printer-3 --index 42"),
            Map.entry("reserve", "ratchet reserve emails/lin@example.com users/7"),
            Map.entry("bench", "ratchet bench --workload reserve --clients 16 --duration 10s"));

    /** Runs a command line and returns its exit code (see {@link ExitCode}). */
    public static int run(String... args) {
        return run(null, null, args);
    }

    /** As {@link #run(String...)}, printing to {@code out} and {@code err} (null: the standard streams). */
    static int run(java.io.PrintWriter out, java.io.PrintWriter err, String... args) {
        CommandLine cli = new CommandLine(new Main());
        cli.addSubcommand("help", new CommandLine.HelpCommand());
        helpEverywhere(cli, "");
        if (out != null) {
            cli.setOut(out);
        }
        if (err != null) {
            cli.setErr(err);
        }
        cli.setExecutionExceptionHandler(Main::handle);
        cli.setParameterExceptionHandler(Main::badCommandLine);
        return cli.execute(args);
    }

    /** -h/--help on every command (before its required parameters are checked), and its example. */
    private static void helpEverywhere(CommandLine command, String path) {
        command.getSubcommands().forEach((name, sub) -> {
            if (sub.getCommand() instanceof CommandLine.HelpCommand) {
                return;
            }
            String qualified = path.isEmpty() ? name : path + " " + name;
            sub.getCommandSpec().mixinStandardHelpOptions(true);
            String example = EXAMPLES.get(qualified);
            if (example != null) {
                sub.getCommandSpec().usageMessage().footer("%nExample:%n  " + example.replace("%", "%%"));
            }
            helpEverywhere(sub, qualified);
        });
    }

    /**
     * A command line that does not parse: the reason, the nearest command for a misspelt one, and how
     * to get help. Exit {@link ExitCode#INVALID}.
     */
    private static int badCommandLine(CommandLine.ParameterException e, String[] args) {
        CommandLine cli = e.getCommandLine();
        java.io.PrintWriter err = cli.getErr();
        String unknown = e instanceof CommandLine.UnmatchedArgumentException u && !u.getUnmatched().isEmpty()
                && !u.getUnmatched().get(0).startsWith("-") && !cli.getSubcommands().isEmpty()
                ? u.getUnmatched().get(0) : null;
        if (unknown != null) {
            err.println(cli.getCommandSpec().qualifiedName() + ": '" + unknown + "' is not a command."
                    + Suggestions.nearest(unknown, cli.getSubcommands().keySet()).map(n -> " Did you mean '" + n + "'?").orElse(""));
        } else {
            err.println(cli.getCommandSpec().qualifiedName() + ": " + e.getMessage());
        }
        err.println("See '" + cli.getCommandSpec().qualifiedName() + " --help'" + (unknown != null ? " for the commands." : "."));
        err.flush();
        return ExitCode.INVALID;
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
