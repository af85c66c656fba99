package io.ratchet.chaos.nemesis;

import java.util.Optional;
import java.util.Random;

/** No faults: a baseline run. */
public final class NoNemesis implements Nemesis {
    @Override
    public String name() {
        return "none";
    }

    @Override
    public Optional<Fault> inject(Random random) {
        return Optional.empty();
    }

    @Override
    public void healAll() {
    }
}
