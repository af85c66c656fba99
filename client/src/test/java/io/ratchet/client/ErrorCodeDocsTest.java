package io.ratchet.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The table of codes in docs/CLI.md (the command line's exit codes) and in docs/HTTP.md ("Errors")
 * says what {@link ErrorCode} does: every code once, in the enum's order, with its exit code, HTTP status
 * and promises. Scripts are written from those tables, so they may not drift from the code.
 */
class ErrorCodeDocsTest {
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
    private static final String HEADING = "| code | what happened | did not apply | retry safe | exit | HTTP |";

    @ParameterizedTest
    @ValueSource(strings = {"docs/CLI.md", "docs/HTTP.md"})
    void theDocumentsTableOfCodesIsTheEnums(String document) throws IOException {
        List<String> lines = Files.readAllLines(ROOT.resolve(document));
        int start = lines.indexOf(HEADING);
        assertTrue(start >= 0, document + " has a table headed " + HEADING);
        assertEquals(start, lines.lastIndexOf(HEADING), document + " has one table of codes");
        List<List<String>> rows = new ArrayList<>();
        for (String line : lines.subList(start + 2, lines.size())) {
            if (!line.startsWith("|")) {
                break;
            }
            rows.add(Arrays.stream(line.substring(1, line.length() - 1).split("\\|")).map(String::strip).toList());
        }
        ErrorCode[] codes = ErrorCode.values();
        assertEquals(codes.length, rows.size(), document + " lists every code once");
        for (int i = 0; i < codes.length; i++) {
            ErrorCode code = codes[i];
            List<String> row = rows.get(i);
            String what = document + ": " + row;
            assertEquals("`" + code.wireName() + "`", row.get(0), what);
            assertEquals(code.didNotApply() ? "yes" : "no", row.get(2), what);
            assertEquals(code.retrySafe() ? "yes" : "no", row.get(3), what);
            assertEquals(Integer.toString(code.exitCode()), row.get(4), what);
            assertTrue(row.get(5).startsWith(Integer.toString(code.httpStatus())), what);
        }
    }
}
