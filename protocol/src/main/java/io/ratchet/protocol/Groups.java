package io.ratchet.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.zip.CRC32;
import org.apache.ratis.protocol.RaftGroupId;

/**
 * A cluster's Raft groups, and which one holds a key. A cluster has {@code count} groups, fixed when it is
 * formed (1 unless {@code groups} says otherwise); every node is a member of every group, and each group
 * has its own log, leader and store.
 *
 * <p>A key belongs to group {@code CRC32(tag) mod count}, where the tag is the key's lower-case form
 * ({@link Keys#normalize}), or, when the key holds a {@code {...}} with something inside, what is between
 * the first {@code {} and the first {@code }} after it (Redis Cluster's hash tags): {@code user:{42}} and
 * {@code email:{42}} share a group, so one transaction can hold both. An Atomic Guard key is placed by
 * its document's id, so a document and its guard are always in one group. The function is part of the
 * storage format: it never changes for a cluster that exists.
 */
public final class Groups {
    /** The most groups a cluster may have. */
    public static final int MAX = 64;

    private Groups() {
    }

    /** The group of {@code key} in a cluster of {@code count} groups. */
    public static int of(String key, int count) {
        if (count == 1) {
            return 0;
        }
        String normalized = Keys.normalize(key);
        if (normalized.startsWith(Limits.RESERVED_GUARD_PREFIX)) {
            normalized = normalized.substring(Limits.RESERVED_GUARD_PREFIX.length());
        }
        CRC32 crc = new CRC32();
        crc.update(tag(normalized).getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() % count);
    }

    /** {@link #of(Request, int)}: the request names no key (a session's open, the quota, permissions). */
    public static final int NO_KEY = -1;
    /** {@link #of(Request, int)}: the request's keys are in more than one group. */
    public static final int SEVERAL = -2;

    /**
     * The group of every key {@code request} names, in a cluster of {@code count} groups; {@link #NO_KEY}
     * when it names none, {@link #SEVERAL} when its keys are in different groups.
     */
    public static int of(Request request, int count) {
        int group = NO_KEY;
        for (Command command : request.commands()) {
            for (String key : keys(command)) {
                int g = of(key, count);
                if (group == NO_KEY) {
                    group = g;
                } else if (group != g) {
                    return SEVERAL;
                }
            }
        }
        return group;
    }

    /** {@code keys} by the group each is in, groups in order, keys in the order given. */
    public static Map<Integer, List<String>> byGroup(Collection<String> keys, int count) {
        Map<Integer, List<String>> byGroup = new TreeMap<>();
        keys.forEach(k -> byGroup.computeIfAbsent(of(k, count), g -> new ArrayList<>()).add(k));
        return byGroup;
    }

    /** The keys a command names: none for the cluster's own commands. */
    public static List<String> keys(Command command) {
        return switch (command.kind()) {
            case PUT, DELETE -> List.of(((Command.Op) command).key());
            case ADD -> List.of(((Command.Add) command).key());
            case TRANSACTION -> ((Command.Transaction) command).ops().stream().map(Command.Op::key).toList();
            case SWEEP -> ((Command.Sweep) command).candidates().stream().map(Command.KeyIndex::key).toList();
            case PREPARE -> ((Command.Prepare) command).ops().stream().map(Command.Op::key).toList();
            case OPEN_SESSION, SET_QUOTA, AUTH_CHANGE, SETTLE, FENCE -> List.of();
        };
    }

    /** The keys a query names: none for one that asks about a whole group (a list, stats, the shape). */
    public static List<String> keys(Query query) {
        return switch (query.kind()) {
            case GET -> List.of(((Query.Get) query).key());
            case GET_ALL -> ((Query.GetAll) query).keys();
            case GETS -> ((Query.Gets) query).gets().stream().map(Query.Get::key).toList();
            case WATCH -> List.of(((Query.Watch) query).key());
            case GET_DOCUMENT -> List.of(Document.guardKey(((Query.GetDocument) query).id()));
            case LIST_ITEMS, STATS, CONTENTION, AUTH_STATUS, SHAPE, TXN_STATUS -> List.of();
        };
    }

    /** Whether {@code key} holds a hash tag: a non-empty {@code {...}}, which alone then decides its group. */
    public static boolean hasTag(String key) {
        return !tag(key).equals(key);
    }

    /** What of a (normalized) key decides its group: the hash tag inside {@code {}}, or the whole key. */
    static String tag(String key) {
        int open = key.indexOf('{');
        if (open >= 0) {
            int close = key.indexOf('}', open + 1);
            if (close > open + 1) {
                return key.substring(open + 1, close);
            }
        }
        return key;
    }

    /**
     * A request of the nodes' backup and snapshot services for group {@code group}'s state: empty for group
     * 0 (what the services took before groups), else the group's number in 2 bytes.
     */
    public static byte[] request(int group) {
        return group == 0 ? new byte[0] : ByteBuffer.allocate(Short.BYTES).putShort((short) group).array();
    }

    /** The group a {@link #request} names; -1 when it is neither empty nor 2 bytes. */
    public static int ofRequest(byte[] request) {
        return switch (request.length) {
            case 0 -> 0;
            case Short.BYTES -> ByteBuffer.wrap(request).getShort() & 0xffff;
            default -> -1;
        };
    }

    /** Checks a group count, as configured or recorded; returns it. */
    public static int validCount(int count) {
        if (count < 1 || count > MAX) {
            throw new IllegalArgumentException("groups must be 1.." + MAX + ", not " + count);
        }
        return count;
    }

    /**
     * The Raft group ids of a cluster whose first group is {@code first}: group 0 is the cluster's id
     * ({@code cluster.id}), so a cluster of one group is what it always was, and group {@code g} is
     * derived from it. A restored cluster, which gets a new id, so gets new ids for all its groups.
     */
    public static List<RaftGroupId> ids(RaftGroupId first, int count) {
        List<RaftGroupId> ids = new ArrayList<>(count);
        ids.add(first);
        for (int g = 1; g < count; g++) {
            ids.add(RaftGroupId.valueOf(UUID.nameUUIDFromBytes(
                    ("ratchet-group:" + first.getUuid() + "/" + g).getBytes(StandardCharsets.UTF_8))));
        }
        return ids;
    }
}
