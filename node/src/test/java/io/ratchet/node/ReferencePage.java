package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A page of {@code docs/reference/} that is generated from the code, and the check that the committed page
 * is still what the code generates: a golden file. A test builds the page in memory and calls {@link
 * #check}; when the page differs the test fails with the page's name, the first difference and the
 * command that rewrites it, which is the same test with {@code -Dratchet.docs.write=true}. So a change
 * to the code that changes its reference cannot go in without the page, and nobody edits the page by hand.
 *
 * <p>Public, in node's test jar, for the command line's page too.
 */
public final class ReferencePage {
    /** The system property under which a reference test writes its page instead of failing. */
    public static final String WRITE = "ratchet.docs.write";

    private ReferencePage() {
    }

    /**
     * Fails unless {@code docs/reference/<page>} holds {@code generated}; with {@code -Dratchet.docs.write=true}
     * writes it instead.
     *
     * @param page      the file's name under {@code docs/reference/}, e.g. {@code cli.md}
     * @param module    the Maven module of the test, for the command that rewrites the page
     * @param test      the test class that generates it
     * @param generated the page as the code says it is now
     */
    public static void check(String page, String module, Class<?> test, String generated) {
        Path file = directory().resolve(page);
        String command = "mvn -B -o -q -pl " + module + " test -Dtest=" + test.getSimpleName() + " -D" + WRITE + "=true";
        try {
            if (Boolean.getBoolean(WRITE)) {
                Files.writeString(file, generated, StandardCharsets.UTF_8);
                return;
            }
            if (!Files.isRegularFile(file)) {
                fail("docs/reference/" + page + " is missing: generate it with\n  " + command);
            }
            String committed = Files.readString(file, StandardCharsets.UTF_8);
            if (!committed.equals(generated)) {
                fail("docs/reference/" + page + " is not what the code generates (" + firstDifference(committed, generated)
                        + "). Do not edit it by hand; rewrite it with\n  " + command);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code docs/reference/}, found from the module directory a test runs in. */
    public static Path directory() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path reference = d.resolve("docs").resolve("reference");
            if (Files.isDirectory(reference)) {
                return reference;
            }
        }
        throw new IllegalStateException("no docs/reference/ above " + Path.of("").toAbsolutePath());
    }

    /**
     * {@code text} as one cell of a Markdown table: on one line, with the characters that would end the
     * cell, open an HTML tag or start emphasis escaped.
     */
    public static String cell(String text) {
        if (text == null || text.isBlank()) {
            return "";
        }
        return text.strip().replaceAll("\\s*\\R\\s*", " ").replace("\\", "\\\\").replace("|", "\\|")
                .replace("<", "\\<").replace("*", "\\*");
    }

    /** {@code text} as inline code, in a table cell too. */
    public static String code(String text) {
        return "`" + text.replace("|", "\\|") + "`";
    }

    private static String firstDifference(String committed, String generated) {
        List<String> was = committed.lines().toList();
        List<String> now = generated.lines().toList();
        for (int i = 0; i < Math.max(was.size(), now.size()); i++) {
            String a = i < was.size() ? was.get(i) : "<end of file>";
            String b = i < now.size() ? now.get(i) : "<end of file>";
            if (!a.equals(b)) {
                return "line " + (i + 1) + ": committed '" + a + "', generated '" + b + "'";
            }
        }
        return "line endings differ";
    }

    private static final Pattern CONSTANT_JAVADOC =
            Pattern.compile("/\\*\\*((?:(?!\\*/).)*)\\*/\\s*([A-Z][A-Z0-9_]*)\\s*[(,;]", Pattern.DOTALL);

    /**
     * Each constant's javadoc in {@code source} (the enum's own .java file), as plain text: the one place a
     * constant's meaning is written, since an enum carries no description at run time.
     *
     * @throws IllegalStateException when a constant has none
     */
    public static <E extends Enum<E>> Map<E, String> javadocOfConstants(String source, Class<E> type) {
        Map<E, String> text = new EnumMap<>(type);
        Matcher m = CONSTANT_JAVADOC.matcher(source);
        while (m.find()) {
            String doc = m.group(1).replaceAll("(?m)^\\s*\\*\\s?", " ").replaceAll("\\s+", " ").strip()
                    .replaceAll("\\{@link\\s+[^}\\s]+\\s+([^}]+)}", "$1")
                    .replaceAll("\\{@link\\s+(?:[\\w.]*#)?([^}\\s]+)}", "$1")
                    .replaceAll("\\{@code\\s+([^}]+)}", "$1");
            for (E constant : type.getEnumConstants()) {
                if (constant.name().equals(m.group(2))) {
                    text.put(constant, doc);
                }
            }
        }
        for (E constant : type.getEnumConstants()) {
            if (!text.containsKey(constant)) {
                throw new IllegalStateException(type.getSimpleName() + "." + constant + " has no javadoc to describe it with");
            }
        }
        return text;
    }
}
