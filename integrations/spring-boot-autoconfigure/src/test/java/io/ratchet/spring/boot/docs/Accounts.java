package io.ratchet.spring.boot.docs;

import io.ratchet.recipes.lock.Locks;
import io.ratchet.recipes.reservation.Reservations;
import io.ratchet.spring.boot.ClusterSessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Service;

/** The service of README's and docs/SPRING.md's Spring snippet, line for line (SpringDocsTest checks). */
@Service
class Accounts {
    @Autowired Locks locks; @Autowired Reservations reservations; @Autowired ClusterSessions sessions;

    boolean claim(String email, String userId) {                       // exactly one owner per e-mail
        return reservations.reserve("emails/" + email, userId).reserved();
    }
    void nightly() {                                                   // a lease on cluster time, with a fencing token
        locks.acquire("nightly", Duration.ofMinutes(5), Duration.ofSeconds(10)).ifPresent(lease -> { run(lease.fencingToken()); locks.release(lease); });
    }
    void rename(String id, String name) {                              // fails and re-runs if the document moved since it was loaded
        sessions.run(5, s -> s.store(id, s.load(User.class, id).orElseThrow().withName(name)));
    }

    // ---- not in the snippet: what it calls

    final List<Long> tokens = new ArrayList<>();

    void run(long fencingToken) {
        tokens.add(fencingToken);
    }

    record User(String id, String name) {
        User withName(String name) {
            return new User(id, name);
        }
    }
}
