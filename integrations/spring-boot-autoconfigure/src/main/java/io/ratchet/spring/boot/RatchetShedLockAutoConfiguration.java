package io.ratchet.spring.boot;

import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.shedlock.RatchetLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * ShedLock's {@link LockProvider} on Ratchet ({@link RatchetLockProvider}) when ShedLock and
 * {@code ratchet-shedlock} are on the class path and the service has no provider of its own:
 * {@code @SchedulerLock} jobs then run on one instance at a time, leased on cluster time. Its locks have
 * the maximum lease of {@code ratchet.lock.*} and its owner id with {@code /shedlock} after it, and are named
 * {@code ratchet.shedlock.prefix} plus ShedLock's name. Off with {@code ratchet.shedlock.enabled=false}.
 */
@AutoConfiguration(after = RatchetAutoConfiguration.class)
@ConditionalOnClass({LockProvider.class, RatchetLockProvider.class})
@ConditionalOnBean(Locks.class)
@ConditionalOnProperty(prefix = "ratchet.shedlock", name = "enabled", matchIfMissing = true)
public class RatchetShedLockAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(LockProvider.class)
    public RatchetLockProvider ratchetLockProvider(RatchetClient client, LockOptions options, RatchetProperties properties) {
        // An owner of its own: the provider tells its grants from others' by it (an acquire in doubt).
        return new RatchetLockProvider(new Locks(client, options.withOwner(options.owner() + "/shedlock")),
                properties.getShedlock().getPrefix());
    }
}
