package io.ratchet.chaos.workload;

/** A short back-off between retries of a read that got no answer, so a recovering cluster is not hammered. */
final class Pause {
    private Pause() {
    }

    static void briefly() {
        try {
            Thread.sleep(500);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
