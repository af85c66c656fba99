package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.ratchet.protocol.BackupRpc;
import io.ratchet.protocol.Rpc;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.junit.jupiter.api.Test;

/** Which of the node's gRPC calls run on the network thread that read them, and which keep gRPC's executor. */
class FrontEndExecutorTest {

    @Test
    void frontEndCallsRunWhereTheyArriveOthersKeepGrpcsExecutor() {
        for (MethodDescriptor<byte[], byte[]> method : List.of(Rpc.CALLS, Rpc.WRITE, Rpc.READ, Rpc.STALE_READ)) {
            Executor executor = FrontEnd.callExecutor(call(method), new Metadata());
            assertNotNull(executor, method.getFullMethodName());
            AtomicReference<Thread> ranOn = new AtomicReference<>();
            executor.execute(() -> ranOn.set(Thread.currentThread()));
            assertSame(Thread.currentThread(), ranOn.get(), method.getFullMethodName() + " ran on another thread");
        }
        // Ratis' own services and the admin and backup services (which stream files and may block) do not.
        MethodDescriptor<byte[], byte[]> other = MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(BackupRpc.SERVICE, "Save"))
                .setRequestMarshaller(Rpc.CALLS.getRequestMarshaller())
                .setResponseMarshaller(Rpc.CALLS.getResponseMarshaller())
                .build();
        assertNull(FrontEnd.callExecutor(call(other), new Metadata()));
    }

    private static ServerCall<byte[], byte[]> call(MethodDescriptor<byte[], byte[]> method) {
        return new ServerCall<>() {
            @Override
            public void request(int numMessages) {
            }

            @Override
            public void sendHeaders(Metadata headers) {
            }

            @Override
            public void sendMessage(byte[] message) {
            }

            @Override
            public void close(Status status, Metadata trailers) {
            }

            @Override
            public boolean isCancelled() {
                return false;
            }

            @Override
            public MethodDescriptor<byte[], byte[]> getMethodDescriptor() {
                return method;
            }
        };
    }
}
