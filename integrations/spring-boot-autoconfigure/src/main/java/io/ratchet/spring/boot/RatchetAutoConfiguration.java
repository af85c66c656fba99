package io.ratchet.spring.boot;

import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.FairLocks;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.recipes.reservation.Reservations;
import io.ratchet.recipes.session.SessionOptions;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * A {@link RatchetClient} from {@code ratchet.*} ({@link RatchetProperties}), closed with the context, and
 * the recipes over it: {@link Locks}, {@link FairLocks}, {@link Reservations} and {@link ClusterSessions}.
 * Each bean backs off when the application defines its own.
 */
@AutoConfiguration
@ConditionalOnClass(RatchetClient.class)
@EnableConfigurationProperties(RatchetProperties.class)
public class RatchetAutoConfiguration {

    /** Connecting opens no connection yet: the first call does, so a context starts while the cluster is away. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public RatchetClient ratchetClient(RatchetProperties properties) {
        return RatchetClient.connect(properties.toClientOptions());
    }

    @Bean
    @ConditionalOnMissingBean
    public LockOptions ratchetLockOptions(RatchetProperties properties) {
        return properties.toLockOptions();
    }

    @Bean
    @ConditionalOnMissingBean
    public Locks ratchetLocks(RatchetClient client, LockOptions options) {
        return new Locks(client, options);
    }

    @Bean
    @ConditionalOnMissingBean
    public FairLocks ratchetFairLocks(RatchetClient client, LockOptions options) {
        return new FairLocks(client, options);
    }

    @Bean
    @ConditionalOnMissingBean
    public Reservations ratchetReservations(RatchetClient client) {
        return new Reservations(client);
    }

    @Bean
    @ConditionalOnMissingBean
    public ClusterSessions ratchetClusterSessions(RatchetClient client) {
        return new ClusterSessions(client, SessionOptions.defaults());
    }
}
