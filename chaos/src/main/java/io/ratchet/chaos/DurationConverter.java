package io.ratchet.chaos;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;

/** Durations as people type them: {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}. */
final class DurationConverter implements ITypeConverter<Duration> {
    private static final Pattern FORM = Pattern.compile("(\\d{1,9})(ms|s|m|h)");

    @Override
    public Duration convert(String text) {
        Matcher m = FORM.matcher(text.trim());
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
