package io.ratchet.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.ratis.protocol.RaftGroupId;
import org.junit.jupiter.api.Test;

/**
 * Which group holds a key is part of the storage format: a cluster's keys stay where this function put
 * them, so its values are pinned here (CRC-32 of the tag's UTF-8 bytes, modulo the count).
 */
class GroupsTest {

    @Test
    void aKeysGroupIsTheCrc32OfItsTagModuloTheCountAndNeverChanges() {
        assertEquals(1, Groups.of("spread/k0", 4));
        assertEquals(2, Groups.of("orders/2026", 4));
        assertEquals(10, Groups.of("orders/2026", 16));
        assertEquals(0, Groups.of("user:{42}", 4), "the tag, 42, decides");
        assertEquals(8, Groups.of("user:{42}", 16));
        assertEquals(0, Groups.of("anything", 1));
    }

    @Test
    void keysCompareCaseInsensitivelySoTheirGroupDoesToo() {
        assertEquals(Groups.of("Orders/2026", 16), Groups.of("orders/2026", 16));
        assertEquals(Groups.of("USER:{Ada}", 16), Groups.of("email:{ada}", 16));
    }

    @Test
    void onlyANonEmptyTagIsATag() {
        assertEquals("a{}b", Groups.tag("a{}b"), "an empty tag is no tag: the whole key decides");
        assertEquals("a{b", Groups.tag("a{b"), "no closing brace: the whole key");
        assertEquals("c", Groups.tag("a}b{c}"), "the first { and the first } after it");
        assertEquals("y", Groups.tag("x{y}z{w}"));
    }

    @Test
    void aDocumentAndItsAtomicGuardAreInOneGroup() {
        for (String id : List.of("users/1", "orders/{7}/lines/2", "a")) {
            assertEquals(Groups.of(id, 16), Groups.of(Document.guardKey(id), 16), id);
        }
    }

    @Test
    void requestsAreInOneGroupNoneOrSeveral() {
        Request tagged = Request.of(List.of(new Command.Transaction(List.of(
                new Command.Put("user:{42}", "1", 0, null), new Command.Check("email:{42}", 3)))));
        assertEquals(Groups.of("user:{42}", 4), Groups.of(tagged, 4));
        assertEquals(Groups.NO_KEY, Groups.of(Request.of(List.of(new Command.SetQuota(1 << 20, false))), 4));
        Request across = Request.of(List.of(new Command.Put("spread/k0", "1", 0, null), new Command.Put("orders/2026", "1", 0, null)));
        assertEquals(Groups.SEVERAL, Groups.of(across, 4));
        assertEquals(0, Groups.of(across, 1), "in a cluster of one group every request is in group 0");
    }

    @Test
    void keysSpreadOverEveryGroup() {
        Set<Integer> used = IntStream.range(0, 1_000).mapToObj(i -> Groups.of("k" + i, 16))
                .collect(Collectors.toSet());
        assertEquals(16, used.size());
    }

    @Test
    void groupZeroIsTheClusterAndTheOthersAreDerivedFromIt() {
        RaftGroupId cluster = GroupName.toGroupId("ratchet");
        List<RaftGroupId> ids = Groups.ids(cluster, 4);
        assertEquals(cluster, ids.get(0), "a cluster of one group is what it always was");
        assertEquals(4, Set.copyOf(ids).size());
        assertEquals(ids, Groups.ids(cluster, 4), "the same on every node");
        assertNotEquals(ids.get(1), Groups.ids(GroupName.toGroupId("restored"), 4).get(1),
                "a cluster with a new id (a restore) has new ids for every group");
        assertThrows(IllegalArgumentException.class, () -> Groups.validCount(0));
        assertThrows(IllegalArgumentException.class, () -> Groups.validCount(Groups.MAX + 1));
    }
}
