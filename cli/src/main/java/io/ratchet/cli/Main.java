package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.ErrorCode;
import io.ratchet.common.Release;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

/**
 * The {@code ratchet} command: talk to a cluster. The server is {@code ratchet-node.jar}.
 *
 * <p>A command line is a short-lived process, so it registers only the subcommand it was given: picocli
 * then reflects over one command's annotations, not all of them. Help, a bare {@code ratchet} and a
 * word that is no command register every one (for the grouped list and the nearest name).
 */
@Command(name = "ratchet", mixinStandardHelpOptions = true, versionProvider = Main.ReleaseVersion.class,
        description = "A Raft-replicated compare-exchange cluster.")
public final class Main implements Runnable {
    @Mixin
    ClientOptionsMixin options;

    @Spec
    CommandSpec spec;

    /** {@code ratchet --version}: the release the build wrote, the same the node reports. */
    static final class ReleaseVersion implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"ratchet " + Release.version()};
        }
    }

    /** A help heading and the names of the commands under it, in the order {@code ratchet --help} lists them. */
    private record Group(String heading, List<String> commands) {
    }

    private static final List<Group> GROUPS = List.of(
            new Group("Items", List.of("put", "get", "delete", "add", "list", "watch", "txn")),
            new Group("Documents", List.of("doc")),
            new Group("Locks and reservations", List.of("lock", "semaphore", "reserve")),
            new Group("Cluster", List.of("status", "members", "leader", "stats", "quota", "backup", "bench", "help")),
            new Group("Security", List.of("auth", "user", "role")));

    /**
     * {@code ratchet} with every command registered and the help options everywhere, as {@code ratchet
     * --help} builds it, for the generated reference (docs/reference/cli.md); {@code groups} receives each
     * help heading with its commands, in order.
     */
    static CommandLine everyCommand(Map<String, List<String>> groups) {
        CommandLine cli = new CommandLine(new Main());
        for (Group g : GROUPS) {
            g.commands().forEach(name -> cli.addSubcommand(name, newCommand(name)));
            groups.put(g.heading(), g.commands());
        }
        helpEverywhere(cli, "");
        return cli;
    }

    /** A new instance of the named command; a switch, so that naming one loads no other command's class. */
    private static Object newCommand(String name) {
        return switch (name) {
            case "put" -> new WriteCommands.Put();
            case "get" -> new ReadCommands.Get();
            case "delete" -> new WriteCommands.Delete();
            case "add" -> new WriteCommands.Add();
            case "list" -> new ReadCommands.ListItems();
            case "watch" -> new WatchCommand();
            case "txn" -> new TransactionCommand();
            case "doc" -> new DocumentCommands();
            case "lock" -> new LockCommand();
            case "semaphore" -> new SemaphoreCommand();
            case "reserve" -> new ReserveCommand();
            case "status" -> new ReadCommands.Status();
            case "members" -> new MembersCommand();
            case "leader" -> new MembersCommand.Leader();
            case "stats" -> new StatsCommand();
            case "quota" -> new QuotaCommand();
            case "backup" -> new BackupCommand();
            case "auth" -> new AuthCommands.Auth();
            case "user" -> new AuthCommands.User();
            case "role" -> new AuthCommands.Role();
            case "bench" -> new BenchCommand();
            case "help" -> new CommandLine.HelpCommand();
            default -> throw new IllegalArgumentException("no command " + name);
        };
    }

    private static final String NETTY_ALLOCATOR = "org.apache.ratis.thirdparty.io.netty.allocator.type";

    public static void main(String[] args) {
        // One request or a few: pooled network buffers (arenas, thread caches) cost more to set up than
        // they save. The name is the relocated Netty's, as Ratis' thirdparty jar spells it.
        if (System.getProperty(NETTY_ALLOCATOR) == null) {
            System.setProperty(NETTY_ALLOCATOR, "unpooled");
        }
        Warmup.start(args);
        System.exit(run(args));
    }

    /** One example per command, shown at the end of its help. */
    private static final Map<String, String> EXAMPLES = Map.ofEntries(
            Map.entry("put", "ratchet put emails/ada@example.com '\"users/1\"' --index 0"),
            Map.entry("get", "ratchet get emails/ada@example.com"),
            Map.entry("delete", "ratchet delete stock/widgets --index 6"),
            Map.entry("add", "ratchet add counters/page-views 1 --idempotency-key view-8f3a"),
            Map.entry("list", "ratchet list --prefix emails/ --page-size 100"),
            Map.entry("status", "ratchet status"),
            Map.entry("members", "ratchet members list"),
            Map.entry("members list", "ratchet members list"),
            Map.entry("members add", "ratchet members add n4=10.0.0.4:7001"),
            Map.entry("members remove", "ratchet members remove n4"),
            Map.entry("leader", "ratchet leader transfer n2"),
            Map.entry("leader transfer", "ratchet leader transfer n2"),
            Map.entry("stats", "ratchet stats --top 5"),
            Map.entry("quota", "ratchet quota"),
            Map.entry("quota set", "ratchet quota set 512MiB"),
            Map.entry("auth", "ratchet auth status"),
            Map.entry("auth status", "ratchet auth status"),
            Map.entry("auth enable", "ratchet auth enable"),
            Map.entry("auth disable", "ratchet auth disable"),
            Map.entry("user", "ratchet user add shop --role orders"),
            Map.entry("user add", "ratchet user add shop --role orders"),
            Map.entry("user remove", "ratchet user remove shop"),
            Map.entry("role", "ratchet role grant orders write orders/"),
            Map.entry("role grant", "ratchet role grant orders write orders/"),
            Map.entry("role revoke", "ratchet role revoke orders write orders/"),
            Map.entry("backup", "ratchet backup --out ratchet-$(date +%F).rbk --node n2"),
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
            Map.entry("semaphore", "ratchet semaphore acquire db-pool --permits 4 --lease 30s --wait 10s"),
            Map.entry("semaphore acquire", "ratchet semaphore acquire db-pool --permits 4 --lease 30s --wait 10s"),
            Map.entry("semaphore renew", "ratchet semaphore renew db-pool --index 42 --lease 30s"),
            Map.entry("semaphore release", "ratchet semaphore release db-pool --index 42"),
            Map.entry("reserve", "ratchet reserve emails/lin@example.com users/7"),
            Map.entry("bench", "ratchet bench --workload reserve --clients 16 --duration 10s"));

    /** Runs a command line and returns its exit code (see {@link ExitCode}). */
    public static int run(String... args) {
        return run(null, null, args);
    }

    /** As {@link #run(String...)}, printing to {@code out} and {@code err} (null: the standard streams). */
    static int run(java.io.PrintWriter out, java.io.PrintWriter err, String... args) {
        CommandLine cli = new CommandLine(new Main());
        String command = commandWord(args);
        boolean all = command == null || command.equals("help") || !isCommand(command);
        for (Group g : GROUPS) {
            for (String name : g.commands()) {
                if (all || command.equals(name)) {
                    cli.addSubcommand(name, newCommand(name));
                }
            }
        }
        cli.getHelpSectionMap().put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_COMMAND_LIST_HEADING, help -> "");
        cli.getHelpSectionMap().put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_COMMAND_LIST, Main::groupedCommands);
        if (all || Arrays.stream(args).anyMatch(HELP_OPTIONS::contains)) {
            helpEverywhere(cli, "");
        }
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

    /** The options that ask for help or the version, which every command takes. */
    static final Set<String> HELP_OPTIONS = Set.of("-h", "--help", "-V", "--version");

    /** Root options that take a value, which {@link #commandWord} must step over. */
    private static final Set<String> VALUED_OPTIONS = Set.of("--peers", "--conf", "--timeout", "--ca", "--cert", "--key",
            "--token");

    /** The first word that is not an option or an option's value: the command asked for, or null. */
    static String commandWord(String[] args) {
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (VALUED_OPTIONS.contains(a)) {
                i++;
            } else if (!a.startsWith("-")) {
                return a;
            }
        }
        return null;
    }

    private static boolean isCommand(String word) {
        return GROUPS.stream().anyMatch(g -> g.commands().contains(word));
    }

    /** The command list of {@code ratchet --help}, under the groups' headings. */
    private static String groupedCommands(CommandLine.Help help) {
        Map<String, CommandLine.Help> registered = help.subcommands();
        int nameWidth = GROUPS.stream().flatMap(g -> g.commands().stream()).mapToInt(String::length).max().orElse(0) + 4;
        int width = help.commandSpec().usageMessage().width();
        StringBuilder text = new StringBuilder();
        for (Group g : GROUPS) {
            CommandLine.Help.TextTable table = CommandLine.Help.TextTable.forColumns(help.colorScheme(),
                    new CommandLine.Help.Column(nameWidth, 2, CommandLine.Help.Column.Overflow.SPAN),
                    new CommandLine.Help.Column(width - nameWidth, 2, CommandLine.Help.Column.Overflow.WRAP));
            g.commands().stream().filter(registered::containsKey).forEach(name -> {
                CommandLine.Model.UsageMessageSpec usage = registered.get(name).commandSpec().usageMessage();
                String[] summary = usage.header().length > 0 ? usage.header() : usage.description();
                table.addRowValues(name, summary.length == 0 ? "" : String.format(summary[0]));
            });
            text.append(String.format("%n%s:%n", g.heading())).append(table);
        }
        return text.toString();
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
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** A command's failure: its message on stderr and, with {@code --json}, its code; exits with the code's. */
    static int handle(Exception e, CommandLine cli, ParseResult parsed) {
        ErrorCode code = ErrorCode.of(e);
        if (code == ErrorCode.INTERNAL_ERROR) {
            e.printStackTrace(cli.getErr());
        }
        cli.getErr().println(cli.getCommandSpec().qualifiedName() + ": " + e.getMessage());
        cli.getErr().flush();
        if (((Main) cli.getCommandSpec().root().userObject()).options.json) {
            ObjectNode o = Output.object();
            o.put("error", errorName(code));
            o.put("message", e.getMessage());
            o.put("exitCode", code.exitCode());
            o.put("code", code.wireName());
            Output.print(cli.getOut(), true, o);
        }
        return code.exitCode();
    }

    /** The {@code error} field the command line has always printed for a code: two differ from the code's name. */
    static String errorName(ErrorCode code) {
        return switch (code) {
            case ADMIN_REFUSED -> "refused";
            case PERMISSION_DENIED -> "forbidden";
            default -> code.wireName();
        };
    }
}
