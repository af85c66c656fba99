package io.ratchet.statemachine.kv;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Run in its own process by {@link RocksKeyValueStoreTest}: writes rounds, each one write that sets
 * {@code round} and every {@code key-N} to the round's number, flushes now and then without waiting, and
 * prints each round it learns is on disk, until it is killed.
 */
public final class CrashWriter {
    static final int KEYS = 200;

    private CrashWriter() {
    }

    public static void main(String[] args) {
        RocksKeyValueStore store = RocksKeyValueStore.open(Path.of(args[0]), new RocksKeyValueStore.Settings(8 << 20, 1 << 20));
        long reported = -1;
        long requestedRound = -1;
        long requestedSequence = Long.MAX_VALUE;
        for (long round = 0; ; round++) {
            Changes changes = new Changes();
            byte[] value = Long.toString(round).getBytes(StandardCharsets.UTF_8);
            changes.put("round".getBytes(StandardCharsets.UTF_8), value);
            for (int k = 0; k < KEYS; k++) {
                changes.put(("key-" + k).getBytes(StandardCharsets.UTF_8), value);
            }
            store.write(changes);
            if (store.flushedSequence() >= requestedSequence && requestedRound > reported) {
                reported = requestedRound;
                System.out.println("flushed " + reported);
                System.out.flush();
                requestedSequence = Long.MAX_VALUE;
            }
            if (round % 500 == 0 && requestedSequence == Long.MAX_VALUE) {
                requestedRound = round;
                requestedSequence = store.lastSequence();
                store.requestFlush();
            }
        }
    }
}
