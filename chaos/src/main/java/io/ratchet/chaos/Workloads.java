package io.ratchet.chaos;

import io.ratchet.chaos.workload.AppendClient;
import io.ratchet.chaos.workload.AppendWorkload;
import io.ratchet.chaos.workload.BankWorkload;
import io.ratchet.chaos.workload.FairLockWorkload;
import io.ratchet.chaos.workload.LocksWorkload;
import io.ratchet.chaos.workload.ReadsTakenOnce;
import io.ratchet.chaos.workload.RegisterWorkload;
import io.ratchet.chaos.workload.RenewWorkload;
import io.ratchet.chaos.workload.ReservationsWorkload;
import io.ratchet.chaos.workload.SemaphoreWorkload;
import io.ratchet.chaos.workload.UncheckedReads;
import io.ratchet.chaos.workload.WatchWorkload;
import io.ratchet.chaos.workload.Workload;
import io.ratchet.client.RatchetClient;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/** The workloads by their command-line names. */
final class Workloads {
    static final String NAMES = "register, reservations, locks, fair-lock, semaphore, renew, bank, watch, append, all";
    /** Items the register processes contend on: few, so that conditions often go stale. */
    private static final int REGISTER_KEYS = 3;

    private Workloads() {
    }

    /** @throws IllegalArgumentException when {@code name} is none of {@link #NAMES} */
    static void check(String name) {
        for (String one : name.split(",")) {
            if (!List.of(NAMES.split(", ")).contains(one)) {
                throw new IllegalArgumentException("unknown workload '" + one + "'; choose one of " + NAMES
                        + " (several: comma-separated)");
            }
        }
    }

    static List<Workload> named(String name, RunSettings settings) {
        if (name.contains(",")) {
            return Arrays.stream(name.split(",")).flatMap(one -> named(one, settings).stream()).toList();
        }
        return switch (name) {
            case "register" -> List.of(register(settings));
            case "reservations" -> List.of(new ReservationsWorkload());
            case "locks" -> List.of(new LocksWorkload());
            case "fair-lock" -> List.of(new FairLockWorkload());
            case "semaphore" -> List.of(new SemaphoreWorkload());
            case "renew" -> List.of(new RenewWorkload(settings.renewLease()));
            case "bank" -> List.of(BankWorkload.withTransactions(settings.abandon()));
            case "watch" -> List.of(new WatchWorkload());
            case "append" -> List.of(append(settings));
            case "all" -> List.of(register(settings), new ReservationsWorkload(), new LocksWorkload(),
                    new FairLockWorkload(), new SemaphoreWorkload(), new RenewWorkload(settings.renewLease()), BankWorkload.withTransactions(settings.abandon()), new WatchWorkload(),
                    append(settings));
            default -> throw new IllegalArgumentException("unknown workload '" + name + "'; choose one of " + NAMES);
        };
    }

    private static Workload register(RunSettings settings) {
        return new RegisterWorkload(REGISTER_KEYS, settings.testMode() == TestMode.UNCONDITIONAL_PUTS, settings.checkBudget());
    }

    private static Workload append(RunSettings settings) {
        Function<RatchetClient, AppendClient> client = switch (settings.testMode()) {
            case UNCHECKED_READS -> UncheckedReads::new;
            case READS_ONCE -> ReadsTakenOnce::new;
            default -> AppendClient::of;
        };
        return new AppendWorkload(settings.groups(), settings.abandon(), client, settings.checkBudget());
    }
}
