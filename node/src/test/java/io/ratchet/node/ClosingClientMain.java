package io.ratchet.node;

import io.ratchet.client.RatchetClient;
import java.util.List;

/**
 * A program as a user writes it: connects, writes, reads, closes its client in try-with-resources and
 * returns from {@code main}. Run in a child JVM by {@link ClientExitTest}; it prints every thread the
 * client started that is still alive a moment after close, and the time it returned.
 */
public final class ClosingClientMain {
    private ClosingClientMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        try (RatchetClient client = RatchetClient.connect(args[0])) {
            long index = client.put("exit/" + System.nanoTime(), 1, 0).index();
            System.out.println("wrote at " + index);
            client.get("exit/anything");
        }
        // Close waits for its threads to stop; the moment is for the JVM to reap them.
        for (int i = 0; i < 20 && !leftovers().isEmpty(); i++) {
            Thread.sleep(50);
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
