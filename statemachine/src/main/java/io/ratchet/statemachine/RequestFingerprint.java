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
        // The words are this encoding's own, not the wire's tags: a fingerprint changes only on purpose.
        Runnable canonical = switch (command.kind()) {
            case PUT, DELETE -> () -> op((Command.Op) command);
            case TRANSACTION -> () -> {
                List<Command.Op> ops = ((Command.Transaction) command).ops();
                word("transaction");
                number(ops.size());
                ops.forEach(this::op);
            };
            case OPEN_SESSION -> () -> {
                Command.OpenSession o = (Command.OpenSession) command;
                word("open-session");
                number(o.id());
                number(o.timeoutMillis());
            };
            case SET_QUOTA -> () -> {
                Command.SetQuota q = (Command.SetQuota) command;
                word("set-quota");
                number(q.bytes());
                number(q.ifUnset() ? 1 : 0);
            };
            case AUTH_CHANGE -> () -> {
                // A record's text names its kind and every field, in a fixed order.
                word("auth");
                text(command.toString());
            };
            case PREPARE -> () -> {
                Command.Prepare p = (Command.Prepare) command;
                word("prepare");
                text(p.txn());
                number(p.primary());
                number(p.groups().size());
                p.groups().forEach(this::number);
                number(p.leaseMillis());
                number(p.holdsRecord() ? 1 : 0);
                number(p.ops().size());
                p.ops().forEach(this::op);
            };
            case ADD -> () -> {
                Command.Add a = (Command.Add) command;
                word("add");
                text(a.key());
                number(a.delta());
            };
            case FENCE -> () -> {
                word("fence");
                number(((Command.Fence) command).millis());
            };
            case SETTLE -> () -> {
                Command.Settle st = (Command.Settle) command;
                word("settle");
                text(st.txn());
                word(st.step().name().toLowerCase(java.util.Locale.ROOT));
            };
            case SWEEP -> () -> {
                Command.Sweep s = (Command.Sweep) command;
                word("sweep");
                number(s.candidates().size());
                for (Command.KeyIndex c : s.candidates()) {
                    text(c.key());
                    number(c.index());
                }
            };
        };
        canonical.run();
    }

    private void op(Command.Op op) {
        Runnable canonical = switch (op.opKind()) {
            case PUT -> () -> {
                Command.Put p = (Command.Put) op;
                word("put");
                text(p.key());
                text(p.value());
                number(p.index());
                text(p.metadata());
                number(p.ttlMillis());
                number(p.expiredIsAbsent() ? 1 : 0);
            };
            case DELETE -> () -> {
                word("delete");
                text(op.key());
                number(op.index());
            };
            case CHECK -> () -> {
                word("check");
                text(op.key());
                number(op.index());
            };
            case PUT_DOCUMENT -> () -> {
                Command.PutDocument d = (Command.PutDocument) op;
                word("put-document");
                text(d.id());
                text(d.json());
                number(d.guardIndex());
            };
            case DELETE_DOCUMENT -> () -> {
                Command.DeleteDocument d = (Command.DeleteDocument) op;
                word("delete-document");
                text(d.id());
                number(d.guardIndex());
            };
        };
        canonical.run();
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
