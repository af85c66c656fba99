package io.ratchet.node;

import io.ratchet.client.RatchetClient;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * A program as a user writes it: connects, writes, reads, closes its client in try-with-resources and
 * returns from {@code main}. Run in a child JVM by {@link ClientExitTest}; it prints every thread the
 * client started that is still alive a moment after close, and the time it returned.
 */
public final class ClosingClientMain {
    private ClosingClientMain() {
    }

    public static void main(String[] args) {
        try (RatchetClient client = RatchetClient.connect(args[0])) {
            long index = client.put("exit/" + System.nanoTime(), 1, 0).index();
            System.out.println("wrote at " + index);
            client.get("exit/anything");
        }
        // Close waits for its own threads; the shared group-commit hold thread ends after a second idle.
        try {
            Awaitility.await().atMost(Duration.ofSeconds(2)).until(() -> leftovers().isEmpty());
        } catch (ConditionTimeoutException e) {
            // reported below, line by line
        }
        leftovers().forEach(name -> System.out.println("leftover thread " + name));
        System.out.println("returning at " + System.currentTimeMillis());
    }

    /** Threads the client (or gRPC, Netty, Ratis on its behalf) started; the JDK's own are not counted. */
    static List<String> leftovers() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .map(Thread::getName)
                .filter(n -> n.startsWith("ratchet-") || n.startsWith("grpc-") || n.startsWith("timer")
                        || n.startsWith("nioEventLoop") || n.equals("CompletableFutureDelayScheduler"))
                .sorted()
                .toList();
    }
}
