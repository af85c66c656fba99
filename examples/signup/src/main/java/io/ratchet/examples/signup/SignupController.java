package io.ratchet.examples.signup;

import io.ratchet.client.TransactionResult;
import io.ratchet.recipes.reservation.Reservations;
import io.ratchet.recipes.session.ClusterSession;
import io.ratchet.spring.boot.ClusterSessions;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /users}: reserves the e-mail and creates the user document in one transaction, so two
 * sign-ups with one e-mail give one user and one 409, on any number of instances. {@code PUT
 * /users/{id}/name}: changes a user under the document's Atomic Guard, re-run on a conflict.
 */
@RestController
public class SignupController {
    private final Reservations reservations;
    private final ClusterSessions sessions;

    public SignupController(Reservations reservations, ClusterSessions sessions) {
        this.reservations = reservations;
        this.sessions = sessions;
    }

    public record SignUp(String email, String name) {
    }

    @PostMapping("/users")
    public ResponseEntity<Map<String, String>> signUp(@RequestBody SignUp request) {
        if (request.email() == null || !request.email().contains("@")) {
            return ResponseEntity.badRequest().body(Map.of("error", "an e-mail address is needed"));
        }
        String email = request.email().toLowerCase(Locale.ROOT);
        String id = "users/" + UUID.randomUUID();
        TransactionResult r = reservations.reserveWithDocument("emails/" + email, id, new User(id, email, request.name()));
        return r.successful() ? ResponseEntity.status(HttpStatus.CREATED).body(Map.of("id", id))
                : ResponseEntity.status(HttpStatus.CONFLICT).body(Map.of("error", email + " is taken"));
    }

    @GetMapping("/users/{id}")
    public ResponseEntity<User> user(@PathVariable String id) {
        ClusterSession session = sessions.open();
        return ResponseEntity.of(session.load(User.class, "users/" + id));
    }

    @PutMapping("/users/{id}/name")
    public User rename(@PathVariable String id, @RequestBody String name) {
        return sessions.call(5, session -> {
            User user = session.load(User.class, "users/" + id).orElseThrow();
            User renamed = new User(user.id(), user.email(), name);
            session.store(user.id(), renamed);
            return renamed;
        });
    }
}
