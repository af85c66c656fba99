package io.ratchet.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.micrometer.core.instrument.binder.MeterBinder;
import io.ratchet.client.ClientOptions;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.micrometer.RatchetClientMetrics;
import io.ratchet.recipes.lock.FairLocks;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.recipes.reservation.Reservations;
import io.ratchet.common.Credentials;
import io.ratchet.node.CertificateAuthority;
import io.ratchet.testing.InProcessCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The starter as a service sees it: properties in, beans out, and its own beans left alone. */
class RatchetAutoConfigurationTest {
    private final InProcessCluster cluster = new InProcessCluster();
    private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
            RatchetAutoConfiguration.class, RatchetHealthAutoConfiguration.class, RatchetMetricsAutoConfiguration.class));

    @AfterEach
    void stop() {
        cluster.close();
    }

    @Test
    void propertiesBecomeTheClientsOptions(@TempDir Path dir) {
        CertificateAuthority ca = CertificateAuthority.create(dir, "test-ca");
        Credentials client = ca.client("billing");
        runner.withPropertyValues("ratchet.peers=n1=127.0.0.1:7001,n2=127.0.0.1:7002,n3=127.0.0.1:7003",
                        "ratchet.group=orders", "ratchet.request-timeout=2s", "ratchet.max-attempts=5",
                        "ratchet.operation-timeout=9s", "ratchet.session-timeout=2m",
                        "ratchet.tls.ca=" + client.caFile(), "ratchet.tls.cert=" + client.certFile(),
                        "ratchet.tls.key=" + client.keyFile(), "ratchet.token=s3cret",
                        "ratchet.lock.owner=billing-1", "ratchet.lock.max-lease=10m")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(RatchetClient.class).hasSingleBean(Locks.class)
                            .hasSingleBean(FairLocks.class).hasSingleBean(Reservations.class).hasSingleBean(ClusterSessions.class);
                    ClientOptions options = context.getBean(RatchetClient.class).options();
                    assertEquals(Map.of("n1", "127.0.0.1:7001", "n2", "127.0.0.1:7002", "n3", "127.0.0.1:7003"), options.peers());
                    assertEquals("orders", options.group());
                    assertEquals(Duration.ofSeconds(2), options.requestTimeout());
                    assertEquals(5, options.maxAttempts());
                    assertEquals(Duration.ofSeconds(9), options.operationTimeout());
                    assertEquals(Duration.ofMinutes(2), options.sessionTimeout());
                    assertEquals(new Credentials(client.caFile(), client.certFile(), client.keyFile(), "s3cret"),
                            options.credentials());
                    assertEquals("s3cret", options.credentials().token());
                    assertEquals(new LockOptions("billing-1", Duration.ofMinutes(10)), context.getBean(LockOptions.class));
                    assertEquals("billing-1", context.getBean(Locks.class).owner());
                });
    }

    @Test
    void aMissingTlsFileFailsTheContextNamingIt(@TempDir Path dir) {
        runner.withPropertyValues("ratchet.peers=127.0.0.1:7001", "ratchet.tls.ca=" + dir.resolve("absent.pem")).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasMessageContaining("there is no file " + dir.resolve("absent.pem"));
        });
    }

    @Test
    void withoutPeersTheContextFailsSayingWhatToSet() {
        runner.run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("ratchet.peers is not set");
        });
    }

    @Test
    void aMalformedPeerFailsTheContextNamingIt() {
        runner.withPropertyValues("ratchet.peers=127.0.0.1").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("'127.0.0.1' is not host:port");
        });
    }

    @Test
    void theClientIsClosedWithTheContext() {
        RatchetClient[] client = new RatchetClient[1];
        // Nothing listens there: an open client would try for the whole operation timeout, a closed one gives up at once.
        runner.withPropertyValues("ratchet.peers=127.0.0.1:1", "ratchet.operation-timeout=60s").run(context ->
                client[0] = context.getBean(RatchetClient.class));
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertThrows(ClusterUnavailableException.class,
                () -> client[0].get("after/close")), "a closed client sends nothing and waits for nothing");
    }

    @Test
    void theServicesOwnBeansWinAndTheRecipesUseItsClient() {
        withOwnClient().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).getBean("ownRatchetClient").isSameAs(context.getBean(RatchetClient.class));
            assertThat(context.getBean(Locks.class).owner()).isEqualTo("own-owner");
            // The recipes work against the service's client: a reservation lands in the cluster behind it.
            assertThat(context.getBean(Reservations.class).reserve("emails/ada@example.com", "user-1").reserved()).isTrue();
            assertThat(cluster.item("emails/ada@example.com")).isPresent();
            ClusterSessions sessions = context.getBean(ClusterSessions.class);
            sessions.run(3, session -> session.store("users/1", Map.of("name", "Ada")));
            assertThat(cluster.document("users/1")).isPresent();
        });
    }

    @Test
    void healthAndMetersAreThereWhenActuatorAndMicrometerAre() {
        withOwnClient().run(context -> {
            assertThat(context).hasSingleBean(RatchetHealthIndicator.class).hasSingleBean(RatchetClientMetrics.class);
            assertThat(context).getBean("ratchetHealthIndicator").isInstanceOf(HealthIndicator.class);
        });
        withOwnClient().withClassLoader(new FilteredClassLoader(HealthIndicator.class, MeterBinder.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RatchetHealthIndicator.class)
                        .doesNotHaveBean(RatchetClientMetrics.class).hasSingleBean(Locks.class));
        withOwnClient().withPropertyValues("management.health.ratchet.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(RatchetHealthIndicator.class));
    }

    @Test
    void withoutTheClientLibraryNothingIsConfigured() {
        runner.withClassLoader(new FilteredClassLoader(RatchetClient.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(Locks.class));
    }

    /** The service's own client (over the in-process cluster) and lock options, as beans of its own. */
    private ApplicationContextRunner withOwnClient() {
        RatchetClient own = cluster.client();
        return runner.withBean("ownRatchetClient", RatchetClient.class, () -> own)
                .withBean("ownLockOptions", LockOptions.class, () -> new LockOptions("own-owner", Duration.ofMinutes(5)));
    }
}
