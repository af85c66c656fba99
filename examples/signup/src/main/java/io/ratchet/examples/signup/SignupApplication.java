package io.ratchet.examples.signup;

import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A sign-up service on Ratchet: the starter makes the client, the recipes, the ShedLock provider, the
 * health indicator and the meters from {@code ratchet.*}; this service only uses them.
 */
@SpringBootApplication
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "PT30S")
public class SignupApplication {
    public static void main(String[] args) {
        SpringApplication.run(SignupApplication.class, args);
    }
}
