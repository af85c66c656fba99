package io.ratchet.spring.integration;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.event.DefaultLeaderEventPublisher;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.leader.event.OnRevokedEvent;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Spring's {@link LockRegistryLeaderInitiator}s competing for one role, each over a registry of its own (a
 * process of its own), with a count of the candidates that believe they lead: {@link #mostAtOnce()} must
 * never exceed 1. Each member records its callbacks and the events its initiator published.
 */
final class Election implements AutoCloseable {
    static final String ROLE = "cluster-leader";

    private final AtomicInteger leaders = new AtomicInteger();
    private final AtomicInteger mostAtOnce = new AtomicInteger();
    private final List<Member> members = new ArrayList<>();

    /** A candidate and its initiator, started, with a short heartbeat and busy wait. */
    Member join(String id, LockRegistry<?> registry, Duration heartBeat) {
        Member member = new Member(id, registry, heartBeat);
        members.add(member);
        member.initiator.start();
        return member;
    }

    /** The most candidates that believed they led at one moment. */
    int mostAtOnce() {
        return mostAtOnce.get();
    }

    List<Member> leading() {
        return members.stream().filter(Member::isLeading).toList();
    }

    /** The one leader, once there is exactly one. */
    Member awaitOneLeader(Duration atMost) {
        await().atMost(atMost).until(() -> leading().size() == 1);
        return leading().get(0);
    }

    @Override
    public void close() {
        members.forEach(m -> m.initiator.stop());
        // stop() only interrupts the selector; its last unlock (the release) follows on its thread.
        await().atMost(Duration.ofSeconds(10)).until(() -> leading().isEmpty() && members.stream().allMatch(Member::isDone));
    }

    final class Member implements Candidate {
        final String id;
        final LockRegistryLeaderInitiator initiator;
        final AtomicBoolean leading = new AtomicBoolean();
        final AtomicInteger granted = new AtomicInteger();
        final AtomicInteger revoked = new AtomicInteger();
        final List<Object> events = new CopyOnWriteArrayList<>();

        Member(String id, LockRegistry<?> registry, Duration heartBeat) {
            this.id = id;
            this.initiator = new LockRegistryLeaderInitiator(registry, this);
            initiator.setHeartBeatMillis(heartBeat.toMillis());
            initiator.setBusyWaitMillis(20);
            initiator.setLeaderEventPublisher(new DefaultLeaderEventPublisher(events::add));
        }

        @Override
        public String getRole() {
            return ROLE;
        }

        @Override
        public String getId() {
            return id;
        }

        @Override
        public void onGranted(Context ctx) {
            mostAtOnce.accumulateAndGet(leaders.incrementAndGet(), Math::max);
            leading.set(true);
            granted.incrementAndGet();
        }

        @Override
        public void onRevoked(Context ctx) {
            leading.set(false);
            leaders.decrementAndGet();
            revoked.incrementAndGet();
        }

        boolean isLeading() {
            return leading.get();
        }

        void stop() {
            initiator.stop();
        }

        boolean isDone() {
            return !initiator.isRunning() && !leading.get();
        }

        long grantedEvents() {
            return events.stream().filter(e -> e instanceof OnGrantedEvent g && g.getSource() == initiator).count();
        }

        long revokedEvents() {
            return events.stream().filter(e -> e instanceof OnRevokedEvent r && r.getSource() == initiator).count();
        }

        @Override
        public String toString() {
            return id + (leading.get() ? " (leading)" : "") + " granted " + granted + ", revoked " + revoked;
        }
    }
}
