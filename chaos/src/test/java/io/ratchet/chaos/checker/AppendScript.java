package io.ratchet.chaos.checker;

import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.Script;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * List-append histories written by hand. A micro-operation is written {@code "r x 1 2"} (read x, which
 * held [1, 2]), {@code "r x"} (read x, empty) or {@code "a x 3"} (append 3 to x); an invocation records
 * the reads without their lists, as the workload does, and the completion fills them in.
 */
final class AppendScript {
    private final Script s = new Script(ListAppendChecker.WORKLOAD);
    private final Map<Op, String[]> open = new HashMap<>();

    /** Invokes a transaction of {@code process} on keys of one group (the history names none). */
    Op invoke(String process, String... mops) {
        return invokeIn(process, List.of(), mops);
    }

    /** Invokes a transaction whose keys are in {@code groups}. */
    Op invokeIn(String process, List<Integer> groups, String... mops) {
        Op op = s.invoke(process, AppendTxn.F, null, "{\"ops\":" + ops(mops, false) + ",\"groups\":" + groups + "}");
        open.put(op, mops);
        return op;
    }

    /** It committed: its reads returned the lists written with them. */
    Op commit(Op invoke) {
        return s.ok(invoke, "{\"committed\":true,\"ops\":" + ops(open.remove(invoke), true) + "}");
    }

    /** Its conditions failed: an answer, nothing applied. */
    Op abort(Op invoke) {
        return s.ok(invoke, "{\"committed\":false,\"ops\":" + ops(open.remove(invoke), true) + "}");
    }

    /** It certainly did not apply, and answered nothing. */
    Op fail(Op invoke) {
        open.remove(invoke);
        return s.fail(invoke);
    }

    /** No answer: it may or may not have applied. */
    Op info(Op invoke) {
        open.remove(invoke);
        return s.info(invoke);
    }

    /** A transaction that overlapped nothing, and committed. */
    Op txn(String process, String... mops) {
        return commit(invoke(process, mops));
    }

    Op txnIn(String process, List<Integer> groups, String... mops) {
        return commit(invokeIn(process, groups, mops));
    }

    /** A final read, after everything healed. */
    Op finalRead(String... mops) {
        return txn("final", mops);
    }

    List<Op> ops() {
        return s.ops();
    }

    private static String ops(String[] mops, boolean answered) {
        List<String> out = new ArrayList<>();
        for (String m : mops) {
            String[] p = m.split(" ");
            switch (p[0]) {
                case "r" -> out.add("[\"r\",\"" + p[1] + "\"," + (answered
                        ? "[" + String.join(",", List.of(p).subList(2, p.length)) + "]" : "null") + "]");
                case "a" -> out.add("[\"append\",\"" + p[1] + "\"," + p[2] + "]");
                default -> throw new IllegalArgumentException("a micro-operation is 'r KEY VALUES...' or 'a KEY VALUE': " + m);
            }
        }
        return "[" + String.join(",", out) + "]";
    }
}
