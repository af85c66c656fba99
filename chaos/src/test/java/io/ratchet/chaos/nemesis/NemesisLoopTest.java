package io.ratchet.chaos.nemesis;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.chaos.history.History;
import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.OpType;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The loop as a membership nemesis uses it: a refused change is recorded as failed and passed over, a
 * lasting change is never "healed", and two loops at once keep their lines on processes of their own.
 */
class NemesisLoopTest {
    private static final Duration SPELL = Duration.ofMillis(2);

    /** Refuses every other change, carries out the rest. */
    private static final class Operator implements Nemesis {
        private final AtomicInteger calls = new AtomicInteger();

        @Override
        public String name() {
            return "membership";
        }

        @Override
        public Optional<Fault> inject(Random random) throws FaultRefused {
            if (calls.incrementAndGet() % 2 == 0) {
                throw new FaultRefused("a membership change is in progress");
            }
            return Optional.of(Fault.lasting("grow", "grew: added n4"));
        }

        @Override
        public void healAll() {
        }
    }

    /** Kills and restarts, counting the restarts. */
    private static final class Killer implements Nemesis {
        final AtomicInteger healed = new AtomicInteger();

        @Override
        public String name() {
            return "kill-leader";
        }

        @Override
        public Optional<Fault> inject(Random random) {
            return Optional.of(new Fault("kill", "killed n1", () -> "restarted n1 (" + healed.incrementAndGet() + ")"));
        }

        @Override
        public void healAll() {
        }
    }

    @Test
    void refusedChangesAreFailedLinesAndLastingOnesAreNeverHealedWhileAKillLoopRunsBeside() throws Exception {
        History history = History.inMemory();
        Killer killer = new Killer();
        NemesisLoop changes = new NemesisLoop(new Operator(), "nemesis-membership", history, SPELL, SPELL, new Random(1));
        NemesisLoop kills = new NemesisLoop(killer, "nemesis-kill-leader", history, SPELL, SPELL, new Random(2));
        changes.start();
        kills.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> changes.faults() >= 3 && changes.refused() >= 3 && kills.faults() >= 3);
        NemesisLoop.stopAll(List.of(changes, kills));

        List<Op> ops = history.ops();
        List<Op> membership = ops.stream().filter(op -> op.process().equals("nemesis-membership")).toList();
        assertTrue(membership.stream().noneMatch(op -> op.f().equals("heal")), "a lasting change has nothing to heal");
        assertEquals(changes.refused(), membership.stream()
                .filter(op -> op.type() == OpType.FAIL && op.error().equals("not done: a membership change is in progress")).count());
        assertEquals(Map.of("grow", changes.faults()), changes.kinds());
        assertEquals(kills.faults(), killer.healed.get(), "every kill healed, the last one on stopping");
        assertEquals(Map.of("kill", kills.faults()), kills.kinds());
        for (String process : List.of("nemesis-membership", "nemesis-kill-leader")) {
            List<Op> lines = ops.stream().filter(op -> op.process().equals(process)).toList();
            for (int i = 0; i < lines.size(); i++) {
                assertEquals(i % 2 == 0, lines.get(i).isInvoke(),
                        process + " has one operation open at a time: " + lines.get(i).describe());
            }
        }
        List<NemesisLoop.Event> timeline = NemesisLoop.timeline(List.of(changes, kills));
        for (int i = 1; i < timeline.size(); i++) {
            assertTrue(timeline.get(i - 1).time() <= timeline.get(i).time(), "one timeline, in time order");
        }
    }
}
