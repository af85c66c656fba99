package io.ratchet.statemachine;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Request;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;

/**
 * What makes two requests "the same request" for an idempotency key: the first 8 bytes of a SHA-256 over
 * a canonical form of the commands, defined here and nowhere else. Each command is named by a word and
 * its fields follow in a fixed order, strings as length and UTF-8, numbers as 8 bytes, behind a version
 * label. It does not depend on the wire codec, so a change to the wire format neither changes which
 * resends count as the same nor what is on disk; a change here must be a new version label.
 *
 * <p>Not thread-safe: apply runs one entry at a time, so one instance (one digest) serves a store.
 */
final class RequestFingerprint {
    private static final byte[] VERSION = "ratchet/request-fingerprint/1".getBytes(StandardCharsets.UTF_8);

    private final MessageDigest sha256 = newSha256();

    long of(Request request) {
        sha256.reset();
        sha256.update(VERSION);
        List<Command> commands = request.commands();
        number(commands.size());
        for (Command command : commands) {
            command(command);
        }
        return ByteBuffer.wrap(sha256.digest()).getLong();
    }

    private void command(Command command) {
        if (command instanceof Command.Transaction t) {
            word("transaction");
            number(t.ops().size());
            t.ops().forEach(this::op);
        } else if (command instanceof Command.OpenSession o) {
            word("open-session");
            number(o.id());
            number(o.timeoutMillis());
        } else if (command instanceof Command.SetQuota q) {
            word("set-quota");
            number(q.bytes());
            number(q.ifUnset() ? 1 : 0);
        } else if (command instanceof Command.AuthChange a) {
            // A record's text names its kind and every field, in a fixed order.
            word("auth");
            text(a.toString());
        } else if (command instanceof Command.Sweep s) {
            word("sweep");
            number(s.candidates().size());
            for (Command.KeyIndex c : s.candidates()) {
                text(c.key());
                number(c.index());
            }
        } else {
            op((Command.Op) command);
        }
    }

    private void op(Command.Op op) {
        if (op instanceof Command.Put p) {
            word("put");
            text(p.key());
            text(p.value());
            number(p.index());
            text(p.metadata());
            number(p.ttlMillis());
            number(p.expiredIsAbsent() ? 1 : 0);
        } else if (op instanceof Command.Delete d) {
            word("delete");
            text(d.key());
            number(d.index());
        } else if (op instanceof Command.Check c) {
            word("check");
            text(c.key());
            number(c.index());
        } else if (op instanceof Command.PutDocument d) {
            word("put-document");
            text(d.id());
            text(d.json());
            number(d.guardIndex());
        } else if (op instanceof Command.DeleteDocument d) {
            word("delete-document");
            text(d.id());
            number(d.guardIndex());
        } else {
            throw new IllegalArgumentException("no canonical form for " + op);
        }
    }

    private void word(String word) {
        text(word);
    }

    /** Null and "" differ: null is length -1. */
    private void text(String s) {
        if (s == null) {
            number(-1);
            return;
        }
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        number(bytes.length);
        sha256.update(bytes);
    }

    private void number(long n) {
        for (int shift = 56; shift >= 0; shift -= 8) {
            sha256.update((byte) (n >>> shift));
        }
    }

    private static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
