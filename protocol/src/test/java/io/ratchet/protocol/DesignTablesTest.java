package io.ratchet.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/DESIGN.md's tables of the wire and log format ("Wire and log format") say what the code does:
 * each lists every kind of its family once, in tag order, with the tag and name its enum gives it, and
 * nothing else; a record's fields are listed in the order they are written, with their types. The
 * tables drifted once (kinds added to the code and never to the document); now they cannot.
 */
class DesignTablesTest {
    private static final Path DESIGN = Path.of(System.getProperty("user.dir")).resolveSibling("docs").resolve("DESIGN.md");
    private static final String SECTION = "## Wire and log format";
    private static final Pattern FIELD = Pattern.compile("`(\\w+)`(?::)?\\s*(\\w+)?");
    private static final Map<String, String> TYPES = Map.of("string", "String", "long", "long", "int", "int",
            "boolean", "boolean");

    /** The section's tables by their first column's heading, each row's cells in order. */
    private static Map<String, List<List<String>>> tables;

    @BeforeAll
    static void readTheSection() throws IOException {
        List<String> lines = Files.readAllLines(DESIGN);
        int start = lines.indexOf(SECTION);
        assertTrue(start >= 0, DESIGN + " has no section '" + SECTION + "'");
        tables = new LinkedHashMap<>();
        List<List<String>> table = null;
        for (String line : lines.subList(start + 1, lines.size())) {
            if (line.startsWith("## ")) {
                break;
            }
            if (!line.startsWith("|")) {
                table = null;
            } else if (table == null) {
                table = new ArrayList<>();
                String heading = cells(line).get(0);
                assertTrue(tables.put(heading, table) == null, "two tables headed '" + heading + "'");
            } else if (!line.startsWith("|---")) {
                table.add(cells(line));
            }
        }
    }

    @Test
    void theSectionHasATableForEveryFamilyAndNoOther() {
        assertEquals(Set.of("message kind", "command tag", "permission change tag", "permission tag", "query tag",
                "result tag", "refusal reason"), tables.keySet());
    }

    @Test
    void messageKinds() {
        assertKinds("message kind", Codec.MessageKind.values());
    }

    @Test
    void commandsAndOperationsShareOneTagSpaceAndTheTable() {
        Map<Integer, String> where = new TreeMap<>();
        Map<Integer, WireKind> byTag = new TreeMap<>();
        for (Command.Kind kind : Command.Kind.values()) {
            byTag.put((int) kind.tag(), kind);
            where.put((int) kind.tag(), "alone");
        }
        for (Command.Op.Kind kind : Command.Op.Kind.values()) {
            WireKind command = byTag.putIfAbsent((int) kind.tag(), kind);
            if (command != null) {
                assertEquals(name(command), name(kind), "tag " + kind.tag() + " names two things");
            }
            where.merge((int) kind.tag(), "in a transaction", (alone, txn) -> "alone or in a transaction");
        }
        List<List<String>> rows = assertKinds("command tag", byTag.values().toArray(WireKind[]::new));
        for (List<String> row : rows) {
            assertEquals(where.get(Integer.parseInt(row.get(0))), row.get(2), "where a " + row.get(1) + " goes");
        }
        assertFields("command tag", 3, Command.class, Command.Op.class);
    }

    @Test
    void permissionChangesAndPermissions() {
        assertKinds("permission change tag", Command.AuthChange.Kind.values());
        assertFields("permission change tag", 2, Command.AuthChange.class);
        assertKinds("permission tag", AuthTable.Permission.values());
    }

    @Test
    void queries() {
        assertKinds("query tag", Query.Kind.values());
        assertFields("query tag", 2, Query.class);
    }

    @Test
    void results() {
        assertKinds("result tag", Result.Kind.values());
        assertFields("result tag", 2, Result.class);
    }

    @Test
    void refusalReasons() {
        assertKinds("refusal reason", Refusal.Reason.values());
    }

    /** The table's rows are the kinds, in tag order: each once, with its tag and name, and no other. */
    private static List<List<String>> assertKinds(String heading, WireKind[] kinds) {
        List<List<String>> rows = tables.get(heading);
        assertNotNull(rows, "no table headed '" + heading + "'");
        List<String> expected = Arrays.stream(kinds).sorted((a, b) -> Integer.compare(a.tag(), b.tag()))
                .map(k -> k.tag() + " " + name(k)).toList();
        assertEquals(expected, rows.stream().map(r -> r.get(0) + " " + r.get(1)).toList(),
                "the table headed '" + heading + "' against the code's kinds");
        return rows;
    }

    /**
     * Each row whose kind is a record of the {@code families} lists its fields, named in backquotes, in the
     * record's order (which is the order the codec writes them), each with its type when the row gives one.
     */
    private static void assertFields(String heading, int column, Class<?>... families) {
        Map<String, Class<?>> members = new HashMap<>();
        for (Class<?> family : families) {
            collect(family, members);
        }
        for (List<String> row : tables.get(heading)) {
            Class<?> type = members.get(row.get(1));
            assertNotNull(type, "no type in " + Arrays.toString(families) + " is named after kind '" + row.get(1) + "'");
            if (!type.isRecord()) {
                continue;
            }
            List<String> named = new ArrayList<>();
            Matcher m = FIELD.matcher(row.get(column));
            RecordComponent[] components = type.getRecordComponents();
            while (m.find()) {
                named.add(m.group(1));
                String typeWord = m.group(2);
                if (typeWord != null && TYPES.containsKey(typeWord) && named.size() <= components.length) {
                    assertEquals(components[named.size() - 1].getType().getSimpleName(), TYPES.get(typeWord),
                            "the type of " + type.getSimpleName() + "." + m.group(1));
                }
            }
            assertEquals(Arrays.stream(components).map(RecordComponent::getName).toList(), named,
                    "the fields of " + type.getSimpleName() + " in the row for '" + row.get(1) + "'");
        }
    }

    /** The types a sealed family permits, through its sealed sub-families, by the name their kind has. */
    private static void collect(Class<?> family, Map<String, Class<?>> members) {
        for (Class<?> member : family.getPermittedSubclasses()) {
            members.put(member.getSimpleName().replaceAll("(?<=[a-z])(?=[A-Z])", "-").toLowerCase(Locale.ROOT), member);
            if (member.isSealed()) {
                collect(member, members);
            }
        }
    }

    private static String name(WireKind kind) {
        return ((Enum<?>) kind).name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    private static List<String> cells(String line) {
        String inner = line.strip();
        inner = inner.substring(1, inner.endsWith("|") ? inner.length() - 1 : inner.length());
        return Arrays.stream(inner.split("\\|", -1)).map(String::strip).toList();
    }
}
