package io.ratchet.chaos;

import static io.ratchet.node.ReferencePage.cell;
import static io.ratchet.node.ReferencePage.code;

import io.ratchet.node.ReferencePage;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * {@code docs/reference/chaos.md}, generated from the sources {@code scripts/chaos --help} comes from:
 * {@link ChaosCommand}'s picocli model (its options, in their order, with defaults and descriptions, and its
 * {@code check} subcommand), {@link NemesisKind} (each nemesis with its javadoc, read from the source, the
 * only place what it does is written) and {@link Workloads#NAMES}. Those are also what the harness accepts,
 * so the page cannot list a nemesis the harness refuses nor miss one it takes.
 */
final class ChaosReference {
    private static final Pattern CONSTANT_JAVADOC = Pattern.compile("/\\*\\*((?:(?!\\*/).)*)\\*/\\s*([A-Z][A-Z0-9_]*)\\s*[,;(]",
            Pattern.DOTALL);

    private final StringBuilder out = new StringBuilder();

    private ChaosReference() {
    }

    /** The page; {@code nemesisSource} is NemesisKind.java, for each nemesis' javadoc. */
    static String page(String nemesisSource) {
        return new ChaosReference().render(nemesisSource);
    }

    private String render(String nemesisSource) {
        CommandLine chaos = new CommandLine(new ChaosCommand());
        // The harness calls itself chaos; it is run as scripts/chaos, and its usage here says so.
        chaos.getCommandSpec().name("scripts/chaos");
        line("# Chaos harness reference");
        line("");
        line("Generated from the harness' picocli model (`ChaosCommand`), `NemesisKind` and `Workloads` "
                + "(chaos/src/main/java/io/ratchet/chaos/) by `ChaosReferenceTest`: do not edit it by hand. `scripts/chaos` "
                + "builds the harness when needed and passes every argument on to it; `scripts/chaos --help` prints the "
                + "same options.");
        command(chaos.getCommandSpec(), 2);
        line("");
        line("## Nemeses");
        line("");
        line("What `--nemesis` takes:");
        line("");
        line("| Nemesis | What it does |");
        line("|---|---|");
        Map<NemesisKind, String> javadoc = ReferencePage.javadocOfConstants(nemesisSource, NemesisKind.class);
        for (NemesisKind kind : NemesisKind.values()) {
            line("| " + code(kind.cliName()) + " | " + cell(javadoc.get(kind)) + " |");
        }
        line("");
        line("## Workloads");
        line("");
        line("What `--workload` takes, one or several comma-separated (`all`: every one): "
                + String.join(", ", Arrays.stream(Workloads.NAMES.split(", ")).map(ReferencePage::code).toList()) + ".");
        chaos.getSubcommands().values().forEach(sub -> command(sub.getCommandSpec(), 2));
        return out.toString();
    }

    private void command(CommandSpec spec, int level) {
        boolean root = spec.parent() == null;
        if (!root) {
            line("");
            line("#".repeat(level) + " " + spec.qualifiedName());
        }
        line("");
        line(String.join(" ", spec.usageMessage().description()).replace("%n", " ").strip());
        line("");
        line("```text");
        out.append(new CommandLine.Help(spec, CommandLine.Help.defaultColorScheme(CommandLine.Help.Ansi.OFF)).synopsis(0)
                .stripTrailing()).append('\n');
        line("```");
        List<PositionalParamSpec> positionals = spec.positionalParameters().stream().filter(p -> !p.hidden()).toList();
        if (!positionals.isEmpty()) {
            line("");
            line("| Parameter | Description |");
            line("|---|---|");
            positionals.forEach(p -> line("| " + code(p.paramLabel()) + " | " + cell(String.join(" ", p.renderedDescription())) + " |"));
        }
        List<OptionSpec> options = spec.options().stream().filter(o -> !o.hidden()).toList();
        if (!options.isEmpty()) {
            line("");
            if (root) {
                line("## Options");
                line("");
            }
            line("| Option | Default | Description |");
            line("|---|---|---|");
            for (OptionSpec o : options) {
                String names = String.join(", ", o.names()) + (o.arity().max() > 0 ? "=" + o.paramLabel() : "");
                line("| " + code(names) + " | " + (o.defaultValue() == null ? "" : code(o.defaultValue())) + " | "
                        + cell(String.join(" ", o.renderedDescription())) + " |");
            }
        }
    }


    private void line(String text) {
        out.append(text).append('\n');
    }
}
