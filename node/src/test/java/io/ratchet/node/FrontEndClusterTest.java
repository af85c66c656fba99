package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Refusal;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import io.ratchet.protocol.Rpc;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The node's front end: batching across client instances, exactly-once resends, and hostile input. */
class FrontEndClusterTest {
    @TempDir
    Path dir;

    @Test
    void writesFromSeparateClientInstancesShareLogEntriesOnTheLeader() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            int instances = 8;
            int perInstance = 40;
            List<RatchetClient> clients = new ArrayList<>();
            for (int c = 0; c < instances; c++) {
                clients.add(cluster.client());
            }
            // Each instance writes one key at a time, as a process with one thread would: any entry
            // holding two writes holds them from two instances, joined by the leader's front end.
            List<CompletableFuture<List<Long>>> runs = new ArrayList<>();
            for (int c = 0; c < instances; c++) {
                RatchetClient client = clients.get(c);
                int instance = c;
                runs.add(CompletableFuture.supplyAsync(() -> {
                    List<Long> indexes = new ArrayList<>();
                    for (int i = 0; i < perInstance; i++) {
                        CompareExchangeResult r = client.put("signups/" + instance + "/" + i, i, 0);
                        assertTrue(r.successful());
                        indexes.add(r.index());
                    }
                    return indexes;
                }));
            }
            Map<Long, Set<Integer>> instancesByIndex = new HashMap<>();
            for (int c = 0; c < instances; c++) {
                for (long index : runs.get(c).join()) {
                    instancesByIndex.computeIfAbsent(index, i -> new HashSet<>()).add(c);
                }
            }
            long shared = instancesByIndex.values().stream().filter(s -> s.size() > 1).count();
            assertTrue(shared > 0, "no log entry held writes of two client instances: " + instancesByIndex);
            assertEquals(instances * perInstance, cluster.itemsOn(cluster.awaitLeader()).size());
        }
    }

    @Test
    void aWriteResentToTheNewLeaderAfterALeaderChangeGetsItsFirstOutcomeAndAppliesOnce() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            String leader = cluster.awaitLeader();
            long session = 0x7e57_5e55_1011L;
            try (Raw raw = new Raw(cluster.address(leader))) {
                Result opened = raw.results(Rpc.WRITE, Codec.encodeBatches(List.of(
                        Batch.untagged(List.of(Request.of(List.of(new Command.OpenSession(session, 60_000)))))))).get(0);
                assertEquals(new Result.SessionOpened(session, 60_000), opened);
            }
            byte[] reserve = Codec.encodeBatches(List.of(new Batch(session, 1,
                    List.of(Request.of(List.of(new Command.Put("emails/ada@example.com", "\"users/1\"", 0, null)))))));
            Result.Write first;
            try (Raw raw = new Raw(cluster.address(leader))) {
                first = (Result.Write) raw.results(Rpc.WRITE, reserve).get(0);
            }
            assertTrue(first.successful());

            // The answer is taken to be lost; the leader goes down; the client resends to the new leader.
            cluster.stopNode(leader);
            String next = cluster.awaitLeader();
            await().atMost(Duration.ofSeconds(30)).until(() -> cluster.appliedIndex(next) >= first.index());
            Result.Write again;
            try (Raw raw = new Raw(cluster.address(next))) {
                again = (Result.Write) raw.results(Rpc.WRITE, reserve).get(0);
            }

            assertEquals(first, again, "the first outcome, not 'the address is taken'");
            RatchetClient client = cluster.client();
            assertEquals(first.index(), client.get("emails/ada@example.com").orElseThrow().index(), "applied once");
            cluster.startNode(leader);
        }
    }

    @Test
    void aClientWhoseSessionExpiredWhileIdleWritesAgainInANewSession() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient idle = cluster.client(ClientOptions.parse(cluster.peers()).withSessionTimeout(Duration.ofSeconds(1)));
            RatchetClient busy = cluster.client();
            assertTrue(idle.put("idle/1", 1, 0).successful());
            long openedAt = clusterTime(idle);

            // Cluster time moves only with entries: another client's writes carry it past the timeout.
            int[] n = {0};
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                busy.put("busy/" + n[0]++, 1, 0);
                return clusterTime(busy) > openedAt + 1_500;
            });

            CompareExchangeResult after = idle.put("idle/2", 2, 0);
            assertTrue(after.successful(), "the expired session is replaced, and the write applied once");
            assertEquals(after.index(), idle.get("idle/2").orElseThrow().index());
        }
    }

    @Test
    void malformedMessagesAtEveryEndpointAreRefusedAndTheNodeKeepsServing() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            String leader = cluster.awaitLeader();
            RatchetClient client = cluster.client();
            assertTrue(client.put("before", 1, 0).successful());
            long applied = cluster.appliedIndex(leader);

            byte[] write = Codec.encodeBatches(List.of(Batch.untagged(List.of(Request.of(List.of(
                    new Command.Put("fuzz/k", "{\"a\":[1,2,3]}", 0, "{\"m\":true}")))))));
            byte[] read = Codec.encodeQuery(new Query.Gets(List.of(new Query.Get("before"), new Query.Get("fuzz/k"))));
            Random random = new Random(20261201);
            int refused = 0;
            try (Raw raw = new Raw(cluster.address(leader))) {
                for (MethodDescriptor<byte[], byte[]> method : List.of(Rpc.WRITE, Rpc.READ, Rpc.STALE_READ)) {
                    byte[] valid = method == Rpc.WRITE ? write : read;
                    List<byte[]> garbage = new ArrayList<>();
                    for (int cut = 0; cut < valid.length; cut++) {
                        garbage.add(Arrays.copyOf(valid, cut));
                    }
                    for (int i = 0; i < 200; i++) {
                        byte[] noise = new byte[random.nextInt(64)];
                        random.nextBytes(noise);
                        garbage.add(noise);
                        byte[] flipped = valid.clone();
                        flipped[random.nextInt(flipped.length)] ^= (byte) (1 + random.nextInt(255));
                        garbage.add(flipped);
                    }
                    byte methodByte = method == Rpc.WRITE ? Rpc.WRITE_CALL : method == Rpc.READ ? Rpc.READ_CALL : Rpc.STALE_READ_CALL;
                    List<byte[]> streamed = raw.stream(garbage.stream().map(g -> Rpc.frame(0, methodByte, g)).toList());
                    for (int i = 0; i < garbage.size(); i++) {
                        for (byte[] answer : List.of(raw.call(method, garbage.get(i)), streamed.get(i))) {
                            if (Codec.isRefusal(answer)) {
                                assertEquals(Refusal.Reason.INVALID, Codec.decodeRefusal(answer).reason());
                                refused++;
                            }
                        }
                    }
                }
                // A frame too short to name its call cannot be answered: the stream ends with an error.
                StatusRuntimeException cut = assertThrows(StatusRuntimeException.class,
                        () -> raw.stream(List.of(new byte[] {1, 2, 3})));
                assertEquals(Status.Code.INVALID_ARGUMENT, cut.getStatus().getCode());
            }
            assertTrue(refused > 2_000, "most garbage is refused as invalid, " + refused);
            // A flipped byte can still make a valid message (another key, say); what must never happen
            // is a node going down or an invalid message reaching the log. Every node still serves.
            assertTrue(client.put("after", 1, 0).successful());
            assertEquals(1, client.get("before").orElseThrow().valueNode().asInt());
            for (String node : cluster.nodeIds()) {
                await().atMost(Duration.ofSeconds(30)).until(() -> cluster.appliedIndex(node) > applied);
            }
        }
    }

    private static long clusterTime(RatchetClient client) {
        return client.status().stream().mapToLong(s -> s.clusterTime()).max().orElseThrow();
    }

    /** A bare gRPC caller of the front end, as a client in another language would be. */
    static final class Raw implements AutoCloseable {
        private final ManagedChannel channel;

        Raw(String address) {
            int colon = address.lastIndexOf(':');
            channel = NettyChannelBuilder.forAddress(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)))
                    .usePlaintext().build();
        }

        byte[] call(MethodDescriptor<byte[], byte[]> method, byte[] message) {
            return ClientCalls.blockingUnaryCall(channel, method,
                    CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), message);
        }

        /**
         * Sends the frames on one {@code Calls} stream and returns the answers in the order of the
         * frames (each frame's call id is replaced by its position), or throws the stream's error.
         */
        List<byte[]> stream(List<byte[]> frames) throws Exception {
            CompletableFuture<Void> done = new CompletableFuture<>();
            Map<Long, byte[]> answers = new java.util.concurrent.ConcurrentHashMap<>();
            StreamObserver<byte[]> requests = ClientCalls.asyncBidiStreamingCall(
                    channel.newCall(Rpc.CALLS, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS)),
                    new StreamObserver<>() {
                        @Override
                        public void onNext(byte[] frame) {
                            answers.put(ByteBuffer.wrap(frame).getLong(), Arrays.copyOfRange(frame, Long.BYTES, frame.length));
                        }

                        @Override
                        public void onError(Throwable t) {
                            done.completeExceptionally(t);
                        }

                        @Override
                        public void onCompleted() {
                            done.complete(null);
                        }
                    });
            for (int i = 0; i < frames.size(); i++) {
                byte[] frame = frames.get(i).clone();
                if (frame.length >= Long.BYTES) {
                    ByteBuffer.wrap(frame).putLong(i);
                }
                requests.onNext(frame);
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> done.isDone() || answers.size() == frames.size());
            requests.onCompleted();
            try {
                done.get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                throw (Exception) e.getCause();
            }
            List<byte[]> ordered = new ArrayList<>();
            for (long i = 0; i < frames.size(); i++) {
                ordered.add(answers.get(i));
            }
            return ordered;
        }

        List<Result> results(MethodDescriptor<byte[], byte[]> method, byte[] message) {
            byte[] answer = call(method, message);
            assertFalse(Codec.isRefusal(answer), () -> "refused: " + Codec.decodeRefusal(answer));
            return Codec.decodeResults(answer);
        }

        @Override
        public void close() {
            channel.shutdownNow();
        }
    }
}
