package io.ratchet.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.shedlock.RatchetLockProvider;
import io.ratchet.spring.integration.RatchetLockRegistry;
import io.ratchet.spring.integration.RatchetMetadataStore;
import io.ratchet.testing.InProcessCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.integration.metadata.ConcurrentMetadataStore;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

/** ShedLock's provider and Spring Integration's registry and store: there when their libraries are, and backing off. */
class IntegrationsAutoConfigurationTest {
    private final InProcessCluster cluster = new InProcessCluster();
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RatchetAutoConfiguration.class, RatchetShedLockAutoConfiguration.class,
                    RatchetIntegrationAutoConfiguration.class))
            .withBean("ownRatchetClient", RatchetClient.class, cluster::client)
            .withBean("ownLockOptions", LockOptions.class, () -> new LockOptions("svc-1", Duration.ofMinutes(5)));

    @AfterEach
    void stop() {
        cluster.close();
    }

    @Test
    void shedLocksJobsTakeRatchetLocksNamedWithThePrefix() {
        runner.withPropertyValues("ratchet.shedlock.prefix=jobs/").run(context -> {
            assertThat(context).hasSingleBean(LockProvider.class);
            LockProvider provider = context.getBean(LockProvider.class);
            Optional<SimpleLock> lock = provider.lock(new LockConfiguration(Instant.now(), "report", Duration.ofSeconds(30),
                    Duration.ZERO));
            assertThat(lock).isPresent();
            assertThat(context.getBean(Locks.class).holder("jobs/report")).hasValueSatisfying(h ->
                    assertThat(h.owner()).isEqualTo("svc-1/shedlock"));
            lock.get().unlock();
            assertThat(context.getBean(Locks.class).holder("jobs/report")).isEmpty();
        });
    }

    @Test
    void theLockRegistryTakesItsTtlAndPrefixFromProperties() {
        runner.withPropertyValues("ratchet.integration.lock-registry.ttl=3s", "ratchet.integration.lock-registry.prefix=si/")
                .run(context -> {
                    RatchetLockRegistry registry = (RatchetLockRegistry) context.getBean(LockRegistry.class);
                    assertThat(registry.getTtl()).isEqualTo(Duration.ofSeconds(3));
                    var lock = registry.obtain("orders");
                    assertThat(lock.tryLock()).isTrue();
                    assertThat(context.getBean(Locks.class).holder("si/orders")).isPresent();
                    lock.unlock();
                });
    }

    @Test
    void theMetadataStoreIsThereOnlyWhenAskedFor() {
        runner.run(context -> assertThat(context).doesNotHaveBean("metadataStore"));
        runner.withPropertyValues("ratchet.integration.metadata-store.enabled=true").run(context -> {
            assertThat(context).getBean("metadataStore").isInstanceOf(RatchetMetadataStore.class);
            ConcurrentMetadataStore store = context.getBean("metadataStore", ConcurrentMetadataStore.class);
            assertThat(store.putIfAbsent("offset", "1")).isNull();
            assertThat(store.replace("offset", "1", "2")).isTrue();
            assertThat(store.get("offset")).isEqualTo("2");
        });
    }

    @Test
    void theServicesOwnProviderAndRegistryWin() {
        LockProvider own = configuration -> Optional.empty();
        runner.withBean("ownProvider", LockProvider.class, () -> own)
                .withBean("ownRegistry", LockRegistry.class, DefaultLockRegistry::new)
                .run(context -> {
                    assertThat(context).doesNotHaveBean(RatchetLockProvider.class).doesNotHaveBean(RatchetLockRegistry.class);
                    assertThat(context.getBean(LockProvider.class)).isSameAs(own);
                });
    }

    @Test
    void eachBacksOffWithoutItsLibraryOrWhenTurnedOff() {
        runner.withClassLoader(new FilteredClassLoader(LockProvider.class, LockRegistry.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RatchetLockProvider.class)
                        .doesNotHaveBean(RatchetLockRegistry.class).hasSingleBean(Locks.class));
        runner.withPropertyValues("ratchet.shedlock.enabled=false", "ratchet.integration.lock-registry.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(LockProvider.class).doesNotHaveBean(LockRegistry.class));
    }
}
