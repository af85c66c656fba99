package io.ratchet.common;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as people type them on a command line: {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}.
 * One parser for the CLI and the chaos harness, so both accept exactly the same forms.
 */
public final class Durations {
    private static final Pattern FORM = Pattern.compile("(\\d{1,12})(ms|s|m|h)");

    private Durations() {
    }

    /** @throws IllegalArgumentException naming the text when it is not one of the forms above */
    public static Duration parse(String text) {
        Matcher m = FORM.matcher(text == null ? "" : text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a duration such as 500ms, 30s, 2m or 1h");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            default -> Duration.ofHours(n);
        };
    }
}
