package io.ratchet.recipes.docs;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.ratchet.testing.InProcessCluster;
import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;

/**
 * Every ```java block of {@code README.md} and {@code docs/*.md} compiles and runs: a snippet that no
 * longer does is stale documentation. Skipped: {@code docs/SPRING.md} and any block containing
 * {@code class Accounts} (the Spring Boot module's {@code SpringDocsTest} covers them).
 *
 * <p>All blocks are compiled in one call of the JDK's compiler ({@code -proc:none}, the test JVM's class
 * path), each error mapped back to its Markdown file and line. Each block becomes one of these sources,
 * all importing {@link #IMPORTS}:
 * <ul>
 *   <li>a block that declares a type (its first code line is an annotation or a class, interface, record
 *       or enum declaration) is compiled as it is, in a package of its own, and not run;</li>
 *   <li>any other block is a list of statements: its lines, unchanged, are the body of
 *       {@code public void run() throws Exception} in a class extending {@link SnippetContext}, which
 *       declares what snippets name without declaring ({@code client}, {@code printer}, {@code session},
 *       {@code openIndex}, ...). The class is run against a fresh {@link InProcessCluster} after
 *       {@link SnippetContext#prepare} has put what the snippet reads, within {@link #RUN_TIMEOUT}; some
 *       snippets' visible effects are then checked ({@link #HAPPY_PATHS}).</li>
 * </ul>
 * A statement block that connects to a cluster is compiled twice, once as written (it must compile) and
 * once with every {@code RatchetClient.connect("...")} (a string literal argument, {@link #CONNECT})
 * replaced by {@code connectForDocs()}, which returns another client of the in-process cluster (closing it
 * leaves the cluster running); only the second one is run.
 */
class DocsSnippetsTest {
    static final Path REPOSITORY = Path.of("..").toAbsolutePath().normalize();
    static final List<String> IMPORTS = List.of("io.ratchet.client.*", "io.ratchet.client.micrometer.*",
            "io.ratchet.protocol.*", "io.ratchet.recipes.lock.*", "io.ratchet.recipes.reservation.*",
            "io.ratchet.recipes.session.*", "io.ratchet.recipes.election.*", "io.ratchet.recipes.counter.*",
            "io.ratchet.testing.*", "java.time.*",
            "java.util.*", "java.util.concurrent.*");
    static final String SKIPPED_GUIDE = "SPRING.md";
    static final String SKIPPED_MARKER = "class Accounts";
    static final Pattern CONNECT = Pattern.compile("RatchetClient\\.connect\\(\"[^\"]*\"\\)");
    static final Duration RUN_TIMEOUT = Duration.ofSeconds(30);
    private static final String PACKAGE = "io.ratchet.recipes.docs.snippets";
    private static final Pattern FENCE = Pattern.compile("^(\\s*)(```+|~~~+)\\s*([\\w+-]*).*$");
    private static final Pattern DECLARATION = Pattern.compile(
            "^(@\\w+|((public|protected|private|abstract|final|static|sealed|non-sealed|strictfp)\\s+)*"
                    + "(class|interface|enum|record)\\s+(\\w+))");

    /** A snippet's visible effect, checked after it ran when its text contains the key. */
    static final Map<String, Consumer<SnippetContext>> HAPPY_PATHS = new LinkedHashMap<>();

    static {
        HAPPY_PATHS.put("printer.print(", c -> assertFalse(c.printed.isEmpty(), "the printer got a fencing token"));
        // A LeaderElection tells its listeners on a thread of their own, in order: await() can return before
        // the isLeader event has run (a CI run on 2 busy cores saw it), so the check waits for it.
        HAPPY_PATHS.put("scheduler.resume(", c -> await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertFalse(c.terms.isEmpty(), "the scheduler was resumed in a term")));
        HAPPY_PATHS.put("\"orders/ada-1\"",
                c -> assertTrue(c.cluster.item("orders/ada-1").isPresent(), "the transaction applied"));
        HAPPY_PATHS.put("\"accounts/bob\"",
                c -> assertEquals("110", c.cluster.item("accounts/bob").orElseThrow().value(), "the transfer applied"));
        HAPPY_PATHS.put("withTier(\"gold\")",
                c -> assertTrue(c.cluster.document("customers/42").orElseThrow().json().contains("gold"), "saved"));
        HAPPY_PATHS.put("withPhone(\"555-0199\")",
                c -> assertTrue(c.cluster.document("customers/42").orElseThrow().json().contains("555-0199"), "saved"));
        HAPPY_PATHS.put("bindTo(meterRegistry)", c -> assertFalse(
                c.meterRegistry.find("ratchet.client.attempts").meters().isEmpty(), "the client's meters are bound"));
        HAPPY_PATHS.put("\"counters/downloads\"",
                c -> assertEquals("6", c.cluster.item("counters/downloads").orElseThrow().value(), "both adds counted once"));
        HAPPY_PATHS.put("\"counters/likes\"", c -> assertEquals(2L, c.cluster.read(s -> s.list("counters/likes/", 0, 100)).stream()
                .mapToLong(i -> Long.parseLong(i.value())).sum(), "two likes over the shards"));
        HAPPY_PATHS.put("\"payments/7\"",
                c -> assertTrue(c.cluster.item("payments/7").isPresent(), "the keyed write applied"));
    }

    @TempDir
    static Path classes;

    /** One ```java block: its file (relative to the repository), the line of its opening fence, its lines. */
    record Block(String file, int line, List<String> code) {
        String name() {
            return file + ":" + line;
        }

        String text() {
            return String.join("\n", code);
        }

        /** The Markdown line of the block's {@code i}-th code line (0-based). */
        int lineOf(int i) {
            return line + 1 + i;
        }
    }

    /**
     * A generated source: its block, class (in {@code pkg}), text, how many lines precede the block's first
     * line, whether it runs, and what its errors are labelled with.
     */
    record Unit(Block block, String pkg, String className, String source, int headerLines, boolean runs, String label) {
        URI uri() {
            return URI.create("string:///" + pkg.replace('.', '/') + "/" + className + JavaFileObject.Kind.SOURCE.extension);
        }
    }

    @TestFactory
    Stream<DynamicTest> everyJavaSnippetCompilesAndRuns() throws IOException {
        List<Block> blocks = blocks();
        assertFalse(blocks.isEmpty(), "no ```java block found under " + REPOSITORY);
        List<Unit> units = new ArrayList<>();
        for (int i = 0; i < blocks.size(); i++) {
            units.addAll(units(blocks.get(i), i));
        }
        Map<Unit, List<String>> errors = compile(units);
        URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()},
                DocsSnippetsTest.class.getClassLoader());
        return blocks.stream().map(block -> DynamicTest.dynamicTest(block.name(), () -> {
            List<Unit> own = units.stream().filter(u -> u.block() == block).toList();
            List<String> failures = own.stream().flatMap(u -> errors.getOrDefault(u, List.of()).stream()).toList();
            if (!failures.isEmpty()) {
                fail(block.name() + " does not compile:\n" + String.join("\n", failures));
            }
            for (Unit unit : own) {
                if (unit.runs()) {
                    run(unit, loader);
                }
            }
        }));
    }

    private static void run(Unit unit, ClassLoader loader) throws Exception {
        try (InProcessCluster cluster = new InProcessCluster()) {
            SnippetContext context = (SnippetContext) loader.loadClass(unit.pkg() + "." + unit.className())
                    .getConstructor().newInstance();
            context.prepare(cluster);
            String name = unit.block().name() + unit.label();
            try {
                assertTimeoutPreemptively(RUN_TIMEOUT, context::run, name + " did not finish");
                HAPPY_PATHS.forEach((marker, check) -> {
                    if (unit.block().text().contains(marker)) {
                        check.accept(context);
                    }
                });
            } catch (Throwable e) {
                throw new AssertionFailedError(name + " failed: " + e, e);
            }
        }
    }

    /** Every ```java block of README.md and docs/*.md but the skipped ones, in file order. */
    static List<Block> blocks() throws IOException {
        List<Path> files = new ArrayList<>();
        files.add(REPOSITORY.resolve("README.md"));
        try (Stream<Path> docs = Files.list(REPOSITORY.resolve("docs"))) {
            docs.filter(p -> p.getFileName().toString().endsWith(".md"))
                    .filter(p -> !p.getFileName().toString().equals(SKIPPED_GUIDE))
                    .sorted()
                    .forEach(files::add);
        }
        List<Block> blocks = new ArrayList<>();
        for (Path file : files) {
            String name = REPOSITORY.relativize(file).toString().replace('\\', '/');
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            for (int i = 0; i < lines.size(); i++) {
                Matcher open = FENCE.matcher(lines.get(i));
                if (!open.matches()) {
                    continue;
                }
                int start = i;
                String indent = open.group(1);
                List<String> code = new ArrayList<>();
                for (i++; i < lines.size(); i++) {
                    String line = lines.get(i);
                    Matcher close = FENCE.matcher(line);
                    if (close.matches() && close.group(3).isEmpty() && close.group(2).startsWith(open.group(2))) {
                        break;
                    }
                    code.add(line.startsWith(indent) ? line.substring(indent.length()) : line.strip());
                }
                if (open.group(3).toLowerCase(Locale.ROOT).equals("java")
                        && code.stream().noneMatch(l -> l.contains(SKIPPED_MARKER))) {
                    blocks.add(new Block(name, start + 1, List.copyOf(code)));
                }
            }
        }
        return blocks;
    }

    /** The sources block {@code n} becomes (see the class's comment). */
    private static List<Unit> units(Block block, int n) {
        StringBuilder imports = new StringBuilder();
        for (String i : IMPORTS) {
            imports.append("import ").append(i).append(";\n");
        }
        String firstCode = block.code().stream().map(String::strip)
                .filter(l -> !l.isEmpty() && !l.startsWith("//") && !l.startsWith("/*") && !l.startsWith("*"))
                .findFirst().orElse("");
        Matcher declaration = DECLARATION.matcher(firstCode);
        if (declaration.find()) {
            String pkg = PACKAGE + ".declared" + n;
            String header = "package " + pkg + ";\n" + imports;
            Matcher named = Pattern.compile("\\b(class|interface|enum|record)\\s+(\\w+)").matcher(block.text());
            String className = named.find() ? named.group(2) : "Declared" + n;
            return List.of(new Unit(block, pkg, className, header + block.text() + "\n", lines(header), false, ""));
        }
        List<Unit> units = new ArrayList<>();
        String text = block.text();
        String runnable = CONNECT.matcher(text).replaceAll("connectForDocs()");
        if (!runnable.equals(text)) {
            units.add(statements(block, "Snippet" + n + "AsWritten", text, imports, false, " (as written)"));
        }
        units.add(statements(block, "Snippet" + n, runnable, imports, true, runnable.equals(text) ? "" : " (as run)"));
        return units;
    }

    private static Unit statements(Block block, String className, String body, CharSequence imports, boolean runs,
            String label) {
        String header = "package " + PACKAGE + ";\n" + imports
                + "public final class " + className + " extends " + SnippetContext.class.getName() + " {\n"
                + "    @Override\n"
                + "    public void run() throws Exception {\n";
        return new Unit(block, PACKAGE, className, header + body + "\n    }\n}\n", lines(header), runs, label);
    }

    private static int lines(String header) {
        return (int) header.chars().filter(c -> c == '\n').count();
    }

    /**
     * Compiles every unit into {@link #classes}; returns each failing unit's errors, as
     * {@code FILE:LINE: message}. javac writes no class when any source has an error, so the units without
     * errors are compiled again on their own.
     */
    private static Map<Unit, List<String>> compile(List<Unit> units) throws IOException {
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        assertTrue(compiler != null, "the tests need a JDK, not a JRE");
        Map<Unit, List<String>> errors = new LinkedHashMap<>(compileOnce(compiler, units));
        if (!errors.isEmpty()) {
            List<Unit> rest = units.stream().filter(u -> !errors.containsKey(u)).toList();
            Map<Unit, List<String>> more = rest.isEmpty() ? Map.of() : compileOnce(compiler, rest);
            errors.putAll(more);
        }
        return errors;
    }

    private static Map<Unit, List<String>> compileOnce(JavaCompiler compiler, List<Unit> units) throws IOException {
        Map<URI, Unit> byUri = new LinkedHashMap<>();
        List<JavaFileObject> sources = new ArrayList<>();
        for (Unit unit : units) {
            JavaFileObject source = new SimpleJavaFileObject(unit.uri(), JavaFileObject.Kind.SOURCE) {
                @Override
                public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                    return unit.source();
                }
            };
            byUri.put(source.toUri(), unit);
            sources.add(source);
        }
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        List<String> options = List.of("-proc:none", "-nowarn", "-encoding", "UTF-8",
                "-classpath", System.getProperty("java.class.path"), "-d", classes.toString());
        try (StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8)) {
            compiler.getTask(null, files, diagnostics, options, null, sources).call();
        }
        Map<Unit, List<String>> errors = new LinkedHashMap<>();
        List<String> unplaced = new ArrayList<>();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR) {
                continue;
            }
            Unit unit = d.getSource() == null ? null : byUri.get(d.getSource().toUri());
            if (unit == null) {
                unplaced.add(d.getMessage(Locale.ROOT));
                continue;
            }
            int codeLine = (int) d.getLineNumber() - unit.headerLines() - 1;
            String where = codeLine >= 0 && codeLine < unit.block().code().size()
                    ? unit.block().file() + ":" + unit.block().lineOf(codeLine)
                    : unit.block().name() + " (generated line " + d.getLineNumber() + ")";
            errors.computeIfAbsent(unit, u -> new ArrayList<>()).add(where + unit.label() + ": " + d.getMessage(Locale.ROOT));
        }
        assertTrue(unplaced.isEmpty(), "the compiler failed outside the snippets: " + unplaced);
        return errors;
    }
}
