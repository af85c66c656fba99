package io.ratchet.chaos;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A page of {@code docs/reference/} generated from the code, and the golden-file check that the committed
 * page is what the code generates; with {@code -Dratchet.docs.write=true} the test writes it instead. The
 * same as node's {@code io.ratchet.node.ReferencePage}, which the other reference tests share: the harness
 * does not depend on node's test jar (nor should it, for one small class).
 */
final class ReferencePage {
    static final String WRITE = "ratchet.docs.write";

    private ReferencePage() {
    }

    /** Fails unless {@code docs/reference/<page>} holds {@code generated}, naming the command that rewrites it. */
    static void check(String page, Class<?> test, String generated) {
        Path file = directory().resolve(page);
        String command = "mvn -B -o -q -pl chaos test -Dtest=" + test.getSimpleName() + " -D" + WRITE + "=true";
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
    static Path directory() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path reference = d.resolve("docs").resolve("reference");
            if (Files.isDirectory(reference)) {
                return reference;
            }
        }
        throw new IllegalStateException("no docs/reference/ above " + Path.of("").toAbsolutePath());
    }

    /** {@code text} as one cell of a Markdown table. */
    static String cell(String text) {
        if (text == null || text.isBlank()) {
            return "";
        }
        return text.strip().replaceAll("\\s*\\R\\s*", " ").replace("\\", "\\\\").replace("|", "\\|")
                .replace("<", "\\<").replace("*", "\\*");
    }

    /** {@code text} as inline code, in a table cell too. */
    static String code(String text) {
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
}
