package io.ratchet.chaos.cluster;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Run under the fault library by {@link NodeFaultsTest}: every 50 ms for up to a minute, prints how far its
 * wall clock is from its monotonic clock (ms) and whether a write and fsync of a file in the directory it
 * is given, and of one outside it, went through, and how long the one inside took:
 * {@code ahead=300012 inside=EIO outside=ok ms=0}.
 */
public final class FaultProbe {
    private FaultProbe() {
    }

    public static void main(String[] args) throws Exception {
        Path inside = Path.of(args[0], "probe");
        Path outside = Path.of(args[1], "probe");
        long base = System.currentTimeMillis() - System.nanoTime() / 1_000_000;
        for (int i = 0; i < 1_200; i++) {
            long ahead = System.currentTimeMillis() - System.nanoTime() / 1_000_000 - base;
            long started = System.nanoTime();
            String in = sync(inside);
            long took = (System.nanoTime() - started) / 1_000_000;
            System.out.println("ahead=" + ahead + " inside=" + in + " outside=" + sync(outside) + " ms=" + took);
            System.out.flush();
            Thread.sleep(50);
        }
    }

    private static String sync(Path file) {
        try (FileChannel c = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            c.write(ByteBuffer.wrap("x".getBytes(StandardCharsets.US_ASCII)));
            c.force(false);
            return "ok";
        } catch (Exception e) {
            return e.getMessage() != null && e.getMessage().contains("Input/output error") ? "EIO" : e.toString();
        }
    }
}
