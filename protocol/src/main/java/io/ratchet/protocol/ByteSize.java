package io.ratchet.protocol;

import java.util.Locale;

/** Sizes as people write them: {@code 268435456}, {@code 256MiB}, {@code 1GiB}, {@code 512KiB} (binary units). */
public final class ByteSize {
    private ByteSize() {
    }

    /**
     * Parses a byte count, plain or with a binary unit (KiB, MiB, GiB, TiB; case-insensitive, KB, MB, GB
     * and TB read as the same).
     *
     * @throws IllegalArgumentException when {@code text} is no such size, or overflows
     */
    public static long parse(String text) {
        String t = text.trim().toUpperCase(Locale.ROOT).replace("_", "");
        int shift = 0;
        String[] units = {"TIB", "TB", "GIB", "GB", "MIB", "MB", "KIB", "KB", "B"};
        int[] shifts = {40, 40, 30, 30, 20, 20, 10, 10, 0};
        for (int i = 0; i < units.length; i++) {
            if (t.endsWith(units[i])) {
                shift = shifts[i];
                t = t.substring(0, t.length() - units[i].length()).trim();
                break;
            }
        }
        try {
            long n = Long.parseLong(t);
            if (n < 0 || (shift > 0 && n > (Long.MAX_VALUE >> shift))) {
                throw new NumberFormatException();
            }
            return n << shift;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is not a size: give bytes, or a number with KiB, MiB, GiB or TiB");
        }
    }

    /** {@code bytes} in the largest binary unit that keeps one decimal meaningful: {@code 1.5 GiB}, {@code 300 B}. */
    public static String format(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = 0;
        while (Math.abs(v) >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? bytes + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
