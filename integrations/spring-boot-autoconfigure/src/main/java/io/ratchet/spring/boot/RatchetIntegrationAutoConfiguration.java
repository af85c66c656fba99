package io.ratchet.spring.boot;

import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.spring.integration.RatchetLockRegistry;
import io.ratchet.spring.integration.RatchetMetadataStore;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Spring Integration on Ratchet, when it and {@code ratchet-spring-integration} are on the class path: a
 * {@link RatchetLockRegistry} (distributed locks, and leader election through
 * {@code LockRegistryLeaderInitiator}) unless the service has a {@link LockRegistry} of its own
 * ({@code ratchet.integration.lock-registry.*}), and, when asked for with
 * {@code ratchet.integration.metadata-store.enabled=true}, the {@code metadataStore} bean as a
 * {@link RatchetMetadataStore}.
 */
@AutoConfiguration(after = RatchetAutoConfiguration.class)
@ConditionalOnClass({LockRegistry.class, RatchetLockRegistry.class})
@ConditionalOnBean(Locks.class)
public class RatchetIntegrationAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(LockRegistry.class)
    @ConditionalOnProperty(prefix = "ratchet.integration.lock-registry", name = "enabled", matchIfMissing = true)
    public RatchetLockRegistry ratchetLockRegistry(RatchetClient client, LockOptions options, RatchetProperties properties) {
        RatchetProperties.LockRegistry registry = properties.getIntegration().getLockRegistry();
        // An owner of its own, as the registry asks: its leases are told from the service's other locks.
        return new RatchetLockRegistry(new Locks(client, options.withOwner(options.owner() + "/spring-integration")),
                registry.getPrefix(), registry.getTtl());
    }

    /** Named as Spring Integration looks it up: its components that keep state find it by this name. */
    @Bean(name = "metadataStore")
    @ConditionalOnMissingBean(name = "metadataStore")
    @ConditionalOnProperty(prefix = "ratchet.integration.metadata-store", name = "enabled")
    public RatchetMetadataStore ratchetMetadataStore(RatchetClient client, RatchetProperties properties) {
        return new RatchetMetadataStore(client, properties.getIntegration().getMetadataStore().getPrefix());
    }
}
