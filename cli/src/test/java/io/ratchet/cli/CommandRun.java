package io.ratchet.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

/** A command line run in this JVM: its exit code and what it printed. */
record CommandRun(int code, String out, String err) {
    static CommandRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new CommandRun(code, out.toString(), err.toString());
    }
}
