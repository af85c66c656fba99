package io.ratchet.cli;

import java.util.Collection;
import java.util.Comparator;
import java.util.Optional;

/** The command a typo most likely meant: the fewest edits away, counting a swap of neighbours as one. */
final class Suggestions {
    private Suggestions() {
    }

    /**
     * The nearest of {@code names} to {@code typed}, if it is close enough to be a typo of it. Between
     * names as near, the one of the typed length wins ("stauts" is a swap in "status", not a letter
     * too many in "stats"), then the first alphabetically.
     */
    static Optional<String> nearest(String typed, Collection<String> names) {
        return names.stream()
                .filter(n -> distance(typed, n) <= Math.max(1, Math.min(typed.length(), n.length()) / 2))
                .min(Comparator.comparingInt((String n) -> distance(typed, n))
                        .thenComparingInt(n -> Math.abs(n.length() - typed.length()))
                        .thenComparing(n -> n));
    }

    /** Edits (insert, delete, replace, swap two neighbours) that turn {@code a} into {@code b}. */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
