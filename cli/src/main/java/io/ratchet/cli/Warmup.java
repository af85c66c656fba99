package io.ratchet.cli;

import io.ratchet.client.RatchetClient;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.netty.buffer.ByteBufAllocator;

/**
 * A command that talks to a cluster spends most of its short life initializing gRPC and Netty, and
 * that does not depend on the command line. So, on a second core, while picocli parses the arguments
 * on the first, a daemon thread initializes the client's network classes; the command then finds them
 * ready. It changes no state the command sees, and a failure here only means the command does the work
 * itself.
 */
final class Warmup {
    private Warmup() {
    }

    static void start(String[] args) {
        String command = Main.commandWord(args);
        if (command == null || command.equals("help") || Arrays.stream(args).anyMatch(Main.HELP_OPTIONS::contains)) {
            return;
        }
        Thread t = new Thread(Warmup::run, "ratchet-warmup");
        t.setDaemon(true);
        t.start();
    }

    private static void run() {
        try {
            // Initializing the client quiets gRPC's java.util.logging first (a static initializer).
            Class.forName(RatchetClient.class.getName(), true, Warmup.class.getClassLoader());
            ByteBufAllocator.DEFAULT.buffer(1).release(); // unpooled: see Main
            NettyChannelBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 1)).usePlaintext();
            Output.write(Output.object());
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            // The command initializes what it needs itself.
        }
    }
}
