package io.ratchet.chaos.nemesis;

import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.Random;

/** Each fault drawn at random from several nemeses. */
public final class MixedNemesis implements Nemesis {
    private final List<Nemesis> choices;

    public MixedNemesis(List<Nemesis> choices) {
        this.choices = List.copyOf(choices);
    }

    @Override
    public String name() {
        return "mixed";
    }

    @Override
    public Optional<Fault> inject(Random random) throws IOException, FaultRefused {
        return choices.get(random.nextInt(choices.size())).inject(random);
    }

    @Override
    public void healAll() throws IOException {
        IOException first = null;
        for (Nemesis n : choices) {
            try {
                n.healAll();
            } catch (IOException e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
