package io.ratchet.statemachine.kv;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link KeyValueStore} does, run against each one: the store's rules are the same in the
 * heap (tests) and on disk (nodes), so the state machine behaves alike on both.
 */
abstract class KeyValueStoreContract {
    protected KeyValueStore store;

    /** A new, empty store. */
    protected abstract KeyValueStore open();

    @BeforeEach
    void openStore() {
        store = open();
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    static byte[] b(String s) {
        return s.getBytes(UTF_8);
    }

    static String s(byte[] b) {
        return b == null ? null : new String(b, UTF_8);
    }

    void write(Object... keysAndValues) {
        Changes changes = new Changes();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            if (keysAndValues[i + 1] == null) {
                changes.delete((byte[]) keysAndValues[i]);
            } else {
                changes.put((byte[]) keysAndValues[i], (byte[]) keysAndValues[i + 1]);
            }
        }
        store.write(changes);
    }

    List<String> keys(byte[] from, byte[] to) {
        List<String> keys = new ArrayList<>();
        try (Cursor c = store.scan(from, to)) {
            while (c.next()) {
                keys.add(s(c.key()) + "=" + s(c.value()));
            }
        }
        return keys;
    }

    @Test
    void whatIsWrittenIsReadBackAndADeleteRemovesIt() {
        assertNull(store.get(b("a")));
        write(b("a"), b("1"), b("b"), b("2"));
        assertEquals("1", s(store.get(b("a"))));
        write(b("a"), b("11"), b("b"), null);
        assertEquals("11", s(store.get(b("a"))));
        assertNull(store.get(b("b")));
        write(b("never"), null); // deleting an absent key is no error
        assertNull(store.get(b("never")));
    }

    @Test
    void anEmptyValueIsAValueNotAnAbsence() {
        write(b("k"), new byte[0]);
        assertArrayEquals(new byte[0], store.get(b("k")));
        assertEquals(List.of("k="), keys(b(""), null));
    }

    @Test
    void theLastChangeOfAKeyInOneSetWins() {
        Changes changes = new Changes();
        changes.put(b("k"), b("1"));
        changes.delete(b("k"));
        changes.put(b("j"), b("1"));
        changes.put(b("j"), b("2"));
        store.write(changes);
        assertNull(store.get(b("k")));
        assertEquals("2", s(store.get(b("j"))));
    }

    @Test
    void scansGoInUnsignedByteOrderWithinTheirBounds() {
        byte[] high = {'p', (byte) 0xc3, (byte) 0xa9}; // "pé": its second byte is above every ASCII byte
        write(b("p/2"), b("x"), b("p/10"), b("x"), b("p"), b("x"), high, b("x"), b("q"), b("x"), b("o"), b("x"));
        assertEquals(List.of("p=x", "p/10=x", "p/2=x", "pé=x"), keys(b("p"), b("q")));
        assertEquals(List.of("p/10=x", "p/2=x"), keys(b("p/"), b("p0")));
        assertEquals(List.of("pé=x", "q=x"), keys(high, null));
        assertEquals(List.of(), keys(b("r"), null));
        assertEquals(List.of(), keys(b("p/3"), b("p/4")));
    }

    @Test
    void aScanSeesTheStateAsWhenItWasMade() {
        write(b("a"), b("1"), b("b"), b("2"), b("c"), b("3"));
        List<String> seen = new ArrayList<>();
        try (Cursor c = store.scan(b("a"), null)) {
            assertTrue(c.next());
            seen.add(s(c.key()));
            write(b("b"), null, b("bb"), b("new"));
            while (c.next()) {
                seen.add(s(c.key()));
            }
        }
        assertEquals(List.of("a", "b", "c"), seen);
    }

    @Test
    void aReaderSeesAWholeWriteOrNoneOfIt() throws Exception {
        // Two keys always written together with the same value: a reader must never see them differ.
        write(b("x"), b("0"), b("y"), b("0"));
        AtomicReference<String> torn = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            for (int i = 0; i < 20_000 && torn.get() == null; i++) {
                List<String> both = keys(b("x"), b("z"));
                if (both.size() != 2 || !both.get(0).substring(2).equals(both.get(1).substring(2))) {
                    torn.set(both.toString());
                }
            }
        });
        reader.start();
        for (int i = 1; i <= 2_000; i++) {
            write(b("x"), b(Integer.toString(i)), b("y"), b(Integer.toString(i)));
        }
        reader.join();
        assertNull(torn.get(), "a scan saw half a write");
    }

    @Test
    void aLongRandomHistoryMatchesASortedMap() {
        Random random = new Random(42);
        TreeMap<byte[], byte[]> model = new TreeMap<>(java.util.Arrays::compareUnsigned);
        for (int round = 0; round < 300; round++) {
            Changes changes = new Changes();
            for (int i = 0; i < 20; i++) {
                byte[] key = new byte[1 + random.nextInt(3)];
                for (int j = 0; j < key.length; j++) {
                    key[j] = (byte) random.nextInt(6) ; // few distinct keys: many overwrites and deletes
                    if (random.nextBoolean()) {
                        key[j] |= (byte) 0x80;
                    }
                }
                if (random.nextInt(4) == 0) {
                    changes.delete(key);
                    model.remove(key);
                } else {
                    byte[] value = new byte[random.nextInt(10)];
                    random.nextBytes(value);
                    changes.put(key, value);
                    model.put(key, value);
                }
            }
            store.write(changes);
        }
        List<byte[]> keys = new ArrayList<>();
        try (Cursor c = store.scan(new byte[0], null)) {
            while (c.next()) {
                keys.add(c.key());
                assertArrayEquals(model.get(c.key()), c.value());
            }
        }
        assertEquals(model.size(), keys.size());
        int i = 0;
        for (byte[] k : model.keySet()) {
            assertArrayEquals(k, keys.get(i++));
            assertArrayEquals(model.get(k), store.get(k));
        }
        assertFalse(model.isEmpty());
    }
}
