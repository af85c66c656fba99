package io.ratchet.chaos;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.chaos.workload.Workload;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * With authentication on, each workload's user may write its own prefixes only; that catches a workload
 * straying into another's keys only if no two workloads' prefixes cover a common key.
 */
class WorkloadsTest {
    @Test
    void noTwoWorkloadsShareAKeyPrefix() {
        RunSettings settings = new RunSettings(3, Duration.ofSeconds(1), NemesisKind.NONE, "all", 1, 1, 1, Path.of("unused"),
                Path.of("unused"), Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1),
                1000, List.of(), TestMode.NONE, true, true, Duration.ZERO, 1, 0.005, 0, null, Duration.ZERO, Duration.ofSeconds(5));
        List<Workload> all = Workloads.named("all", settings);
        for (Workload a : all) {
            assertFalse(a.keyPrefixes().isEmpty(), a.name());
            for (Workload b : all) {
                if (a == b) {
                    continue;
                }
                for (String p : a.keyPrefixes()) {
                    for (String q : b.keyPrefixes()) {
                        // Keys compare case-insensitively, and a grant on a prefix covers every key starting with it.
                        String lp = p.toLowerCase(Locale.ROOT);
                        String lq = q.toLowerCase(Locale.ROOT);
                        assertFalse(lp.startsWith(lq) || lq.startsWith(lp), a.name() + " " + p + " and " + b.name() + " " + q);
                    }
                }
            }
        }
    }

    /** The unchecked load ({@code --load}) writes beside the workloads, never into their keys, where a checker would see it. */
    @Test
    void theLoadKeepsOutOfEveryWorkloadsKeys() {
        RunSettings settings = new RunSettings(3, Duration.ofSeconds(1), NemesisKind.NONE, "all", 1, 1, 1, Path.of("unused"),
                Path.of("unused"), Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1),
                1000, List.of(), TestMode.NONE, false, false, Duration.ZERO, 1, 0.005, 16, null, Duration.ZERO, Duration.ofSeconds(5));
        for (Workload w : Workloads.named("all", settings)) {
            for (String p : w.keyPrefixes()) {
                String lp = p.toLowerCase(Locale.ROOT);
                assertFalse(lp.startsWith(BackgroundLoad.PREFIX) || BackgroundLoad.PREFIX.startsWith(lp), w.name() + " " + p);
            }
        }
    }

    @Test
    void authenticationNeedsTls() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new RunSettings(3, Duration.ofSeconds(1), NemesisKind.NONE, "all", 1, 1, 1, Path.of("unused"),
                        Path.of("unused"), Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1),
                        Duration.ofSeconds(1), 1000, List.of(), TestMode.NONE, false, true, Duration.ZERO, 1, 0.005, 0, null, Duration.ZERO, Duration.ofSeconds(5)));
        assertTrue(e.getMessage().contains("--auth needs --tls"), e.getMessage());
    }

    @Test
    void theWarmUpIsPartOfTheRunAndShorterThanIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new RunSettings(3, Duration.ofSeconds(5), NemesisKind.KILL_LEADER, "all", 1, 1, 1, Path.of("unused"),
                        Path.of("unused"), Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1),
                        Duration.ofSeconds(1), 1000, List.of(), TestMode.NONE, false, false, Duration.ZERO, 1, 0.005, 0, null,
                        Duration.ofSeconds(5), Duration.ofSeconds(5)));
        assertTrue(e.getMessage().contains("--warmup must be at least 0 and shorter than --duration (5 s)"), e.getMessage());
    }
}
