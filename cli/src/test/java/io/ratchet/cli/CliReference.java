package io.ratchet.cli;

import static io.ratchet.node.ReferencePage.cell;
import static io.ratchet.node.ReferencePage.code;

import io.ratchet.node.ReferencePage;
import io.ratchet.client.ErrorCode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgGroupSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * {@code docs/reference/cli.md}, generated from picocli's model of the {@code ratchet} command: every command
 * and subcommand with its description, its usage as {@code --help} prints it, its options and parameters
 * (names, labels, defaults, descriptions), its example, and the exit codes from {@link ErrorCode}, the one
 * table from a failure to its name, exit code and HTTP status.
 *
 * <p>The command line registers its commands itself, in {@code Main.run}, from its table of groups (so that
 * a run loads one command's class only); {@code Main.everyCommand} registers them all from that table, as
 * {@code ratchet --help} does, so no second list here can drift.
 * Each {@link ErrorCode}'s meaning is its javadoc, read from the source, which is the only place it is
 * written.
 */
final class CliReference {
    private final StringBuilder out = new StringBuilder();

    private CliReference() {
    }

    /** The page; {@code errorCodeSource} is ErrorCode.java, for each code's javadoc. */
    static String page(Path errorCodeSource) throws IOException {
        return new CliReference().render(errorCodeSource);
    }

    /** {@code ratchet} with every command registered as {@code ratchet --help} registers them, in its groups. */
    static CommandLine ratchet(Map<String, List<String>> groups) {
        return Main.everyCommand(groups);
    }

    private String render(Path errorCodeSource) throws IOException {
        Map<String, List<String>> groups = new LinkedHashMap<>();
        CommandLine ratchet = ratchet(groups);
        line("# Command-line reference");
        line("");
        line("Generated from the `ratchet` command's picocli model (cli/src/main/java/io/ratchet/cli/) and "
                + "`ErrorCode` (client/src/main/java/io/ratchet/client/ErrorCode.java) by `CliReferenceTest`: do not edit "
                + "it by hand. `ratchet COMMAND --help` prints each command's part.");
        line("");
        line("| Group | Command | Description |");
        line("|---|---|---|");
        groups.forEach((heading, names) -> names.forEach(name -> index(heading, ratchet.getSubcommands().get(name))));
        line("");
        line("Every command takes `-h`/`--help` and `-V`/`--version`, and the shared options of `ratchet` itself, "
                + "before the command or after it. See [Exit codes](#exit-codes) for what a command exits with.");
        command(ratchet, 2);
        groups.values().forEach(names -> names.forEach(name -> command(ratchet.getSubcommands().get(name), 2)));
        exitCodes(Files.readString(errorCodeSource));
        return out.toString();
    }

    private void index(String heading, CommandLine command) {
        line("| " + heading + " | [" + code(command.getCommandSpec().qualifiedName()) + "](#"
                + anchor(command.getCommandSpec().qualifiedName()) + ") | " + cell(summary(command.getCommandSpec())) + " |");
        command.getSubcommands().values().forEach(sub -> index(heading, sub));
    }

    private void command(CommandLine command, int level) {
        CommandSpec spec = command.getCommandSpec();
        boolean root = spec.parent() == null;
        line("");
        line("#".repeat(level) + " " + spec.qualifiedName());
        line("");
        if (spec.aliases().length > 0) {
            line("Also: " + String.join(", ", spec.aliases()) + ".");
            line("");
        }
        line(text(spec.usageMessage().header()) + (spec.usageMessage().header().length > 0 ? " " : "") + text(spec.usageMessage().description()));
        line("");
        line("```text");
        out.append(new CommandLine.Help(spec, CommandLine.Help.defaultColorScheme(CommandLine.Help.Ansi.OFF)).synopsis(0)
                .stripTrailing().replace("\r", "")).append('\n');
        line("```");
        List<PositionalParamSpec> positionals = spec.positionalParameters().stream().filter(p -> !p.hidden()).toList();
        if (!positionals.isEmpty()) {
            line("");
            line("| Parameter | Description |");
            line("|---|---|");
            for (PositionalParamSpec p : positionals) {
                line("| " + code(p.paramLabel() + (p.arity().max() > 1 ? "..." : "")) + " | "
                        + cell(text(p.renderedDescription()) + (p.arity().min() == 0 ? " (optional)" : "")) + " |");
            }
        }
        List<OptionSpec> options = spec.options().stream()
                .filter(o -> !o.hidden() && (root || !o.inherited()) && (root || !(o.usageHelp() || o.versionHelp())))
                .sorted(spec.usageMessage().sortOptions()
                        ? Comparator.comparing(CliReference::sortKey)
                        : Comparator.comparingInt(OptionSpec::order))
                .toList();
        if (!options.isEmpty()) {
            line("");
            line(root ? "Options (shared: every command takes them):" : "Options:");
            line("");
            line("| Option | Default | Description |");
            line("|---|---|---|");
            options.forEach(o -> line("| " + code(names(o)) + " | " + defaultValue(o).map(v -> code(v.isEmpty() ? "\"\"" : v)).orElse("")
                    + " | " + cell(optionDescription(o)) + " |"));
        }
        String[] footer = spec.usageMessage().footer();
        if (footer.length > 0) {
            String example = String.format(String.join("", footer)).strip();
            line("");
            line(example.lines().findFirst().orElse("Example:"));
            line("");
            line("```sh");
            example.lines().skip(1).map(String::strip).forEach(this::line);
            line("```");
        }
        if (!root) {
            command.getSubcommands().values().forEach(sub -> command(sub, level + 1));
        }
    }

    /** {@code --timeout=<timeout>}, {@code -h, --help}. */
    private static String names(OptionSpec o) {
        String label = o.arity().max() > 0 ? "=" + o.paramLabel() : "";
        return String.join(", ", o.names()) + label;
    }

    private static String sortKey(OptionSpec o) {
        return o.shortestName().replaceFirst("^-+", "").toLowerCase(java.util.Locale.ROOT);
    }

    private static String optionDescription(OptionSpec o) {
        String d = text(o.renderedDescription());
        List<String> also = new ArrayList<>();
        ArgGroupSpec group = o.group();
        if (group == null && o.required()) {
            also.add("Required.");
        }
        if (group != null && group.exclusive()) {
            // Within an exclusive group picocli marks each option required: the group's multiplicity says whether one must be given.
            List<String> others = group.options().stream().filter(other -> other != o).map(OptionSpec::longestName).toList();
            also.add((group.multiplicity().min() > 0 ? "This or " : "Not with ") + String.join(" or ", others)
                    + (group.multiplicity().min() > 0 ? " is required." : "."));
        }
        if (o.arity().max() > 1 || o.isMultiValue()) {
            also.add("May be given more than once.");
        }
        return also.isEmpty() ? d : (d.isEmpty() ? "" : d + (d.endsWith(".") ? " " : ". ")) + String.join(" ", also);
    }

    /** The default an option's help shows: its declared one, else its field's initial value when that says something. */
    private static java.util.Optional<String> defaultValue(OptionSpec o) {
        if (o.defaultValue() != null) {
            return java.util.Optional.of(o.defaultValue());
        }
        Object initial = o.initialValue();
        if ((o.required() && o.group() == null) || initial == null || initial instanceof Boolean || (initial instanceof Collection<?> c && c.isEmpty())
                || (initial instanceof Map<?, ?> m && m.isEmpty())) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(String.valueOf(initial));
    }

    /** A command's line in the index: its header, else the first line of its description, as {@code ratchet --help} has it. */
    private static String summary(CommandSpec spec) {
        String[] d = spec.usageMessage().header().length > 0 ? spec.usageMessage().header() : spec.usageMessage().description();
        return d.length == 0 ? "" : text(new String[] {d[0]});
    }

    /** Description lines as one paragraph, with picocli's format specifiers ({@code %n}, {@code %%}) applied. */
    private static String text(String[] lines) {
        return String.join(" ", lines).replace("%n", " ").replace("%%", "%").replaceAll(" {2,}", " ").strip();
    }

    /** The exit codes, and the table of every {@link ErrorCode}: its name, exit code, HTTP status and meaning. */
    private void exitCodes(String source) {
        Map<ErrorCode, String> meaning = ReferencePage.javadocOfConstants(source, ErrorCode.class);
        line("");
        line("## Exit codes");
        line("");
        line("A command exits 0 when it did what it was asked. Otherwise its exit code comes from the failure's "
                + "`ErrorCode`; with `--json` it also prints `{\"error\", \"message\", \"exitCode\", \"code\"}`. A usage error "
                + "(an unknown command or option, a missing parameter) exits " + ExitCode.INVALID + ", as an invalid request does. Several codes "
                + "share an exit code:");
        line("");
        Map<Integer, List<String>> byExit = new TreeMap<>();
        for (ErrorCode c : ErrorCode.values()) {
            byExit.computeIfAbsent(c.exitCode(), k -> new ArrayList<>()).add(code(c.wireName()));
        }
        line("- 0: done");
        byExit.forEach((exit, codes) -> line("- " + exit + ": " + String.join(", ", codes)));
        line("");
        line("The same codes name the HTTP API's failures: its `code` field, with the status below. \"Not applied\" "
                + "says whether a write certainly did not apply; \"Retry\" whether sending the same call again, unchanged, "
                + "is safe and can succeed.");
        line("");
        line("| Code | `error` (`--json`) | Exit | HTTP | Not applied | Retry | Meaning |");
        line("|---|---|---|---|---|---|---|");
        for (ErrorCode c : ErrorCode.values()) {
            line("| " + code(c.wireName()) + " | " + code(Main.errorName(c)) + " | " + c.exitCode() + " | " + c.httpStatus()
                    + " | " + (c.didNotApply() ? "yes" : "no") + " | " + (c.retrySafe() ? "yes" : "no") + " | "
                    + cell(meaning.get(c)) + " |");
        }
    }


    /** GitHub's anchor for a heading. */
    private static String anchor(String heading) {
        return heading.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9 _-]", "").replace(' ', '-');
    }

    private void line(String text) {
        out.append(text).append('\n');
    }
}
