package io.ratchet.common;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ReleaseTest {
    @Test
    void theVersionIsTheOneTheBuildWroteNotItsPlaceholder() {
        String version = Release.version();
        assertTrue(version.matches("\\d+\\.\\d+\\.\\d+(-[A-Za-z0-9.]+)?"), version);
    }
}
