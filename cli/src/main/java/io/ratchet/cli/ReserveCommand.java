package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.RatchetClient;
import io.ratchet.common.Durations;
import io.ratchet.recipes.reservation.Reservation;
import io.ratchet.recipes.reservation.ReservationResult;
import io.ratchet.recipes.reservation.Reservations;
import java.time.Duration;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code reserve KEY OWNER [--ttl D]}: a create-only reservation of a unique key. */
@Command(name = "reserve", description = {
        "Reserve KEY for OWNER unless another owner holds it (keys compare case-insensitively).",
        "Exit 0 when OWNER holds it (now or already), 1 with the holder when someone else does."})
final class ReserveCommand extends ClientCommand {
    @Parameters(index = "0", paramLabel = "KEY")
    String key;
    @Parameters(index = "1", paramLabel = "OWNER", description = "who reserves it, e.g. users/1")
    String owner;
    @Option(names = "--ttl", description = "let the reservation lapse this long after the write's cluster time, e.g. 15m")
    String ttl;

    @Override
    int run(RatchetClient c) {
        ReservationResult r;
        if (ttl == null) {
            r = new Reservations(c).reserve(key, owner);
        } else {
            Duration lapse = Durations.parse(ttl);
            r = new Reservations(c).reserve(key, owner, lapse);
        }
        Reservation current = r.current();
        ObjectNode o = Output.object();
        o.put("reserved", r.reserved());
        o.put("key", current.key());
        o.put("owner", current.owner());
        o.put("index", current.index());
        o.put("expiresAt", current.expiresAt().map(Object::toString).orElse(null));
        print(o);
        return r.reserved() ? ExitCode.DONE : ExitCode.CONDITION_FAILED;
    }
}
