package io.ratchet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every link between the repository's Markdown files resolves: the file is there, inside the repository,
 * and a {@code #fragment} names a heading of it (as GitHub makes heading anchors). Links to the web are
 * left alone. The docs are read as they are checked in, so a guide that moves breaks the build, not a reader.
 */
class DocsLinksTest {
    private static final Path ROOT = ScriptRunner.HOME;
    private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)\\)");
    private static final Pattern FENCE = Pattern.compile("(?s)```.*?```");

    @Test
    void everyLinkBetweenTheDocsResolves() throws IOException {
        List<String> broken = new ArrayList<>();
        Map<Path, Set<String>> anchors = new HashMap<>();
        for (Path md : markdownFiles()) {
            String text = FENCE.matcher(Files.readString(md, StandardCharsets.UTF_8)).replaceAll("");
            Matcher m = LINK.matcher(text);
            while (m.find()) {
                String target = m.group(1);
                if (target.matches("^[a-z]+:.*")) {
                    continue; // https:, mailto:
                }
                String file = target.contains("#") ? target.substring(0, target.indexOf('#')) : target;
                String fragment = target.contains("#") ? target.substring(target.indexOf('#') + 1) : null;
                Path resolved = file.isEmpty() ? md : md.getParent().resolve(file).normalize();
                String where = ROOT.relativize(md) + ": " + target;
                if (!resolved.startsWith(ROOT)) {
                    broken.add(where + " (outside the repository)");
                } else if (!Files.exists(resolved)) {
                    broken.add(where + " (no such file)");
                } else if (fragment != null && resolved.toString().endsWith(".md")
                        && !anchors.computeIfAbsent(resolved, DocsLinksTest::anchorsOf).contains(fragment)) {
                    broken.add(where + " (no such heading)");
                }
            }
        }
        assertEquals(List.of(), broken, "links that do not resolve");
    }

    private static List<Path> markdownFiles() throws IOException {
        try (Stream<Path> all = Files.walk(ROOT)) {
            return all.filter(p -> p.toString().endsWith(".md"))
                    .filter(p -> Stream.of("target", "node_modules", ".git", "data")
                            .noneMatch(skip -> ROOT.relativize(p).toString().startsWith(skip + "/")
                                    || ROOT.relativize(p).toString().contains("/" + skip + "/")))
                    .sorted().toList();
        }
    }

    /** GitHub's anchors: the heading in lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
    static Set<String> anchorsOf(Path md) {
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        try {
            String text = FENCE.matcher(Files.readString(md, StandardCharsets.UTF_8)).replaceAll("");
            for (String line : text.split("\n")) {
                if (line.matches("^#{1,6} .*")) {
                    String slug = line.replaceFirst("^#+ ", "").strip().toLowerCase(Locale.ROOT)
                            .replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
                    int n = seen.merge(slug, 1, Integer::sum);
                    anchors.add(n == 1 ? slug : slug + "-" + (n - 1));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return anchors;
    }
}
