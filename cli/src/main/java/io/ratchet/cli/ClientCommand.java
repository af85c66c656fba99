package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.RatchetClient;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** A command that talks to a cluster: it connects, runs, prints, and closes the connection. */
abstract class ClientCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    /** The global options, which picocli sets on {@code ratchet} wherever they appear. */
    ClientOptionsMixin client() {
        return ((Main) spec.root().userObject()).options;
    }

    /** Runs against a connected client; returns an {@link ExitCode}. */
    abstract int run(RatchetClient client);

    @Override
    public final Integer call() {
        client().requireSomeNodeListening();
        try (RatchetClient c = client().connect()) {
            return run(c);
        }
    }

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    boolean json() {
        return client().json;
    }

    void print(ObjectNode result) {
        Output.print(out(), client().json, result);
    }
}
