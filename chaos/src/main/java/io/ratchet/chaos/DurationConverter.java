package io.ratchet.chaos;

import io.ratchet.common.Durations;
import java.time.Duration;
import picocli.CommandLine.ITypeConverter;

/** Durations as people type them ({@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}), for picocli. */
final class DurationConverter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String text) {
        return Durations.parse(text);
    }
}
