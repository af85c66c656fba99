package io.ratchet.node;

import io.ratchet.common.Failures;
import io.ratchet.protocol.BackupHeader;
import io.ratchet.node.security.Authorizer;
import io.ratchet.node.security.TokenInterceptor;
import io.ratchet.protocol.BackupRpc;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.SnapshotRpc;
import io.ratchet.statemachine.CheckpointArchive;
import io.ratchet.statemachine.Directories;
import io.ratchet.protocol.Refusal;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.Query;
import io.ratchet.statemachine.BackupFile;
import io.ratchet.statemachine.RatchetStateMachine;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.thirdparty.io.grpc.ServerServiceDefinition;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCallStreamObserver;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Streams checkpoints of this node's store as backup files ({@link BackupHeader}), for two callers:
 * operators' backups ({@link BackupRpc}, administrators only) and followers that fell behind the leader's
 * log ({@link SnapshotRpc}, nodes only). A backup holds every write acknowledged before the call: a
 * linearizable read through Raft (ReadIndex, or the leader's lease) first makes sure this node has applied
 * everything committed by then; the checkpoint holds whatever it has applied since. A follower needs no
 * barrier: any state of the leader's holds what the follower lacks.
 *
 * <p>Making a checkpoint flushes the store and hard-links its files into the group's temporary
 * directory; apply goes on meanwhile. The files are streamed at the pace gRPC's flow control allows and
 * deleted when the call ends, however it ends. One backup at a time per node, and two fetches.
 */
final class BackupService {
    private static final Logger LOG = LoggerFactory.getLogger(BackupService.class);
    /** Longer than any election: a node that cannot confirm its state by then will not soon. */
    private static final long BARRIER_SECONDS = 30;
    /** The checkpoints being sent, in the group's own temporary directory, each its own name. */
    private static final String CHECKPOINT = "checkpoint-";
    private static final java.util.concurrent.atomic.AtomicLong CHECKPOINTS = new java.util.concurrent.atomic.AtomicLong();

    private final String nodeId;
    private final String clusterName;
    /** The cluster's groups: a backup, or a follower's fetch, is of one group's state. */
    private final List<RaftGroupId> groupIds;
    /** Each group's way to its read barrier, in group order. */
    private final List<LocalSubmitter> locals;
    private final Semaphore backups = new Semaphore(1);
    private final Semaphore fetches = new Semaphore(2);
    /** A backup holds every key: only an administrator may take one. */
    private final Authorizer authorizer;
    private volatile RaftServer server;

    BackupService(String nodeId, String clusterName, List<RaftGroupId> groupIds, Authorizer authorizer) {
        this.nodeId = nodeId;
        this.authorizer = authorizer;
        this.clusterName = clusterName;
        this.groupIds = List.copyOf(groupIds);
        this.locals = groupIds.stream().map(LocalSubmitter::new).toList();
    }

    /** The backup service, for Ratis to add to its server before it starts. */
    ServerServiceDefinition service() {
        return ServerServiceDefinition.builder(BackupRpc.SERVICE)
                .addMethod(BackupRpc.BACKUP, ServerCalls.asyncServerStreamingCall(this::backup))
                .build();
    }

    /** The snapshot service followers fetch from, for Ratis to add to its server before it starts. */
    ServerServiceDefinition snapshotService() {
        return ServerServiceDefinition.builder(SnapshotRpc.SERVICE)
                .addMethod(SnapshotRpc.FETCH, ServerCalls.asyncServerStreamingCall(this::fetch))
                .build();
    }

    /** Called once the Ratis server has started; until then every call is refused as unavailable. */
    void attach(RaftServer server) {
        this.server = server;
    }

    private void backup(byte[] request, StreamObserver<byte[]> observer) {
        Transfer transfer = new Transfer((ServerCallStreamObserver<byte[]>) observer);
        RaftServer s = server;
        Refusal denied = authorizer.checkAdmin(TokenInterceptor.current(), false);
        if (denied != null) {
            transfer.fail((denied.reason() == Refusal.Reason.UNAUTHENTICATED ? Status.UNAUTHENTICATED
                    : Status.PERMISSION_DENIED).withDescription(denied.message()));
        } else if (s == null) {
            transfer.fail(Status.UNAVAILABLE.withDescription("node " + nodeId + " is starting"));
        } else if (Groups.ofRequest(request) < 0 || Groups.ofRequest(request) >= groupIds.size()) {
            transfer.fail(Status.INVALID_ARGUMENT.withDescription("a backup request is empty (group 0) or names one of the "
                    + groupIds.size() + " groups in 2 bytes; this one has " + request.length + " bytes"));
        } else if (!backups.tryAcquire()) {
            transfer.fail(Status.RESOURCE_EXHAUSTED.withDescription("node " + nodeId + " is writing another backup"));
        } else {
            // Its own thread: the barrier and the checkpoint block, and backups are rare.
            int group = Groups.ofRequest(request);
            DaemonThreads.named("ratchet-backup").newThread(() -> write(s, group, transfer, true, backups)).start();
        }
    }

    private void fetch(byte[] request, StreamObserver<byte[]> observer) {
        Transfer transfer = new Transfer((ServerCallStreamObserver<byte[]>) observer);
        RaftServer s = server;
        if (s == null) {
            transfer.fail(Status.UNAVAILABLE.withDescription("node " + nodeId + " is starting"));
        } else if (Groups.ofRequest(request) < 0 || Groups.ofRequest(request) >= groupIds.size()) {
            transfer.fail(Status.INVALID_ARGUMENT.withDescription("a fetch request is empty (group 0) or names one of the "
                    + groupIds.size() + " groups in 2 bytes; this one has " + request.length + " bytes"));
        } else if (!fetches.tryAcquire()) {
            transfer.fail(Status.RESOURCE_EXHAUSTED.withDescription("node " + nodeId + " is sending other snapshots"));
        } else {
            int group = Groups.ofRequest(request);
            DaemonThreads.named("ratchet-snapshot-send").newThread(() -> write(s, group, transfer, false, fetches)).start();
        }
    }

    /**
     * Makes a checkpoint and hands it, with the slot, to the transfer; on failure releases both itself.
     * With {@code barrier}, first waits until this node holds every write committed before the call.
     */
    private void write(RaftServer s, int group, Transfer transfer, boolean barrier, Semaphore slot) {
        Path state = null;
        Status failed;
        try {
            if (barrier) {
                barrier(s, group);
            }
            if (transfer.ended()) {
                slot.release(); // the caller gave up while this node caught up: write nothing
                return;
            }
            RaftGroupId groupId = groupIds.get(group);
            RaftServer.Division division = s.getDivision(groupId);
            Path dir = division.getRaftStorage().getStorageDir().getTmpDir().toPath();
            Files.createDirectories(dir);
            state = dir.resolve(CHECKPOINT + CHECKPOINTS.incrementAndGet());
            Directories.delete(state);
            long started = System.nanoTime();
            TermIndex at = ((RatchetStateMachine) division.getStateMachine()).checkpoint(state);
            CheckpointArchive archive = CheckpointArchive.of(state);
            BackupHeader header = new BackupHeader(clusterName, groupId.getUuid(), at.getTerm(), at.getIndex(),
                    System.currentTimeMillis(), archive.bytes());
            LOG.info("{} at index {} (term {}): a checkpoint of {} bytes made in {} ms", barrier ? "backup" : "snapshot",
                    at.getIndex(), at.getTerm(), header.stateBytes(), (System.nanoTime() - started) / 1_000_000);
            transfer.begin(BackupFile.open(header, archive), state, slot);
            return;
        } catch (BarrierException e) {
            failed = Status.UNAVAILABLE.withDescription(e.getMessage());
        } catch (IOException | RuntimeException e) {
            LOG.warn("backup failed on node {}", nodeId, e);
            failed = Status.INTERNAL.withDescription("node " + nodeId + " could not write the backup: " + e);
        }
        deleteQuietly(state);
        slot.release();
        transfer.fail(failed);
    }

    /** Waits until this node has applied every entry committed before now: a linearizable read through Raft. */
    private void barrier(RaftServer s, int group) throws BarrierException {
        try {
            locals.get(group).submit(s, Codec.encodeQuery(new Query.Stats()), RaftClientRequest.readRequestType())
                    .get(BARRIER_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            Throwable cause = Failures.unwrap(e);
            throw new BarrierException("node " + nodeId + " cannot confirm through Raft that it holds every "
                    + "committed write: " + cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BarrierException("node " + nodeId + " was interrupted");
        }
    }

    private static final class BarrierException extends Exception {
        BarrierException(String message) {
            super(message);
        }
    }

    private static void deleteQuietly(Path checkpoint) {
        if (checkpoint == null) {
            return;
        }
        try {
            Directories.delete(checkpoint);
        } catch (IOException e) {
            LOG.warn("could not delete the checkpoint {}; the node deletes it when it restarts", checkpoint, e);
        }
    }

    /**
     * One call's stream: sends the backup's bytes while gRPC says the client can take more, and ends the
     * call (completed, failed or cancelled) exactly once, releasing the file and the backup slot.
     */
    private final class Transfer {
        private final ServerCallStreamObserver<byte[]> call;
        private InputStream bytes;
        private Path file;
        private Semaphore slot;
        private boolean ended;

        Transfer(ServerCallStreamObserver<byte[]> call) {
            this.call = call;
            // Both are set before the handler returns, as gRPC requires.
            call.setOnReadyHandler(this::pump);
            call.setOnCancelHandler(this::cancelled);
        }

        synchronized void begin(InputStream bytes, Path file, Semaphore slot) {
            this.bytes = bytes;
            this.file = file;
            this.slot = slot;
            if (ended) {
                release(); // the client went away while the state was written
            } else {
                pump();
            }
        }

        synchronized void pump() {
            if (ended || bytes == null) {
                return;
            }
            try {
                while (call.isReady()) {
                    byte[] chunk = bytes.readNBytes(BackupRpc.CHUNK_BYTES);
                    if (chunk.length == 0) {
                        call.onCompleted();
                        end();
                        return;
                    }
                    call.onNext(chunk);
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("backup stream failed on node {}", nodeId, e);
                fail(Status.INTERNAL.withDescription("node " + nodeId + " could not read its checkpoint: " + e));
            }
        }

        synchronized void fail(Status status) {
            if (!ended) {
                call.onError(status.asRuntimeException());
                end();
            }
        }

        synchronized boolean ended() {
            return ended;
        }

        private synchronized void cancelled() {
            if (!ended) {
                end();
            }
        }

        /** Marks the call ended; once the transfer holds the state (after {@link #begin}), lets it go. */
        private void end() {
            ended = true;
            if (bytes != null) {
                release();
            }
        }

        /** Closes and deletes the state and frees the backup slot: once, for a transfer that was begun. */
        private void release() {
            try {
                bytes.close();
            } catch (IOException e) {
                LOG.debug("closing the backup stream", e);
            }
            deleteQuietly(file);
            slot.release();
        }
    }
}
