package io.ratchet.client;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.AdminRpc;
import io.ratchet.protocol.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.ratis.thirdparty.io.grpc.Server;
import org.apache.ratis.thirdparty.io.grpc.ServerServiceDefinition;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyServerBuilder;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCalls;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A membership change whose first send may have reached a leader that then went down is not reported as
 * refused when the next node refuses it as done already: the first send may have made the change.
 */
class ClusterAdminOutcomeTest {
    private ServerSocket resetting;
    private Thread resetter;
    private Server refusing;
    private Server hanging;

    @AfterEach
    void stop() throws Exception {
        for (Server server : new Server[] {refusing, hanging}) {
            if (server != null) {
                server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
        }
        if (resetting != null) {
            resetting.close();
            resetter.join(10_000);
        }
    }

    @Test
    void aRefusalAfterAConnectionResetIsAnUnknownOutcomeNotANothingChanged() throws Exception {
        // The first node takes the call and goes down without answering (killed, or halted on a failed disk):
        // a proxy in front of a node that never answers resets the client's connection (RST) once the call
        // has arrived, so the client sees UNAVAILABLE caused by the reset, after it sent the request.
        Semaphore arrived = new Semaphore(0);
        hanging = hangingNode(arrived);
        resetting = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        resetter = new Thread(() -> {
            while (!resetting.isClosed()) {
                try (Socket client = resetting.accept();
                     Socket node = new Socket(InetAddress.getLoopbackAddress(), hanging.getPort())) {
                    Thread up = pump(client.getInputStream(), node.getOutputStream());
                    Thread down = pump(node.getInputStream(), client.getOutputStream());
                    if (arrived.tryAcquire(20, TimeUnit.SECONDS)) {
                        client.setSoLinger(true, 0);
                    }
                    client.close();
                    node.close();
                    up.join(5_000);
                    down.join(5_000);
                } catch (IOException | InterruptedException e) {
                    return; // the test is over
                }
            }
        }, "resetting-node");
        resetter.start();
        // The other node has no leader at first (an election), then refuses: the change is done already. So
        // whichever node the client tries first, the reset comes before the refusal.
        AtomicInteger calls = new AtomicInteger();
        refusing = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(ServerServiceDefinition.builder(AdminRpc.SERVICE)
                        .addMethod(AdminRpc.CALL, ServerCalls.asyncUnaryCall((request, answer) -> {
                            try {
                                answer.onNext(Json.MAPPER.writeValueAsBytes(calls.getAndIncrement() == 0
                                        ? Json.MAPPER.createObjectNode().put("error", "no_leader").put("message", "an election is under way")
                                        : Json.MAPPER.createObjectNode().put("error", "refused").put("message", "n4 is already a member, at 127.0.0.1:1")));
                            } catch (IOException e) {
                                throw new IllegalStateException(e);
                            }
                            answer.onCompleted();
                        }))
                        .build())
                .build().start();
        String peers = "n1=127.0.0.1:" + resetting.getLocalPort() + ",n2=127.0.0.1:" + refusing.getPort();
        try (ClusterAdmin admin = ClusterAdmin.connect(ClientOptions.parse(peers)
                .withTimeouts(Duration.ofSeconds(2), 3, Duration.ofSeconds(10)))) {
            UnknownOutcomeException e = assertThrows(UnknownOutcomeException.class, () -> admin.addMember("n4", "127.0.0.1:1"));
            assertTrue(e.getMessage().contains("may have made the change"), e.getMessage());
        }
    }

    @Test
    void anInterruptAfterAnUnansweredSendIsAnUnknownOutcomeNotAnUnavailableCluster() throws Exception {
        // The only node takes the call and never answers: the interrupt ends the wait for it, and the change
        // may still be made, so the caller must not be told that no node took it.
        Semaphore arrived = new Semaphore(0);
        hanging = hangingNode(arrived);
        try (ClusterAdmin admin = ClusterAdmin.connect(ClientOptions.parse("n1=127.0.0.1:" + hanging.getPort())
                .withTimeouts(Duration.ofSeconds(2), 3, Duration.ofSeconds(30)))) {
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            AtomicBoolean stillInterrupted = new AtomicBoolean();
            Thread changer = new Thread(() -> {
                try {
                    admin.addMember("n4", "127.0.0.1:1");
                } catch (Throwable t) {
                    thrown.set(t);
                    stillInterrupted.set(Thread.currentThread().isInterrupted());
                }
            }, "changer");
            changer.start();
            assertTrue(arrived.tryAcquire(10, TimeUnit.SECONDS), "the change reached the node");
            changer.interrupt();
            changer.join(10_000);
            assertInstanceOf(UnknownOutcomeException.class, thrown.get());
            assertTrue(thrown.get().getMessage().contains("may have made the change"), thrown.get().getMessage());
            assertTrue(stillInterrupted.get(), "the interrupt is kept for the caller");
        }
    }

    /** A node that takes every admin call, counts it in {@code arrived}, and never answers. */
    private static Server hangingNode(Semaphore arrived) throws IOException {
        return NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(ServerServiceDefinition.builder(AdminRpc.SERVICE)
                        .addMethod(AdminRpc.CALL, ServerCalls.asyncUnaryCall((request, answer) -> arrived.release()))
                        .build())
                .build().start();
    }

    /** Copies {@code in} to {@code out} on a thread of its own until either ends. */
    private static Thread pump(InputStream in, OutputStream out) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[8192];
            try {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // One side closed.
            }
        }, "pump");
        t.setDaemon(true);
        t.start();
        return t;
    }
}
