package io.ratchet.spring.boot;

import io.ratchet.client.ClientOptions;
import io.ratchet.common.Credentials;
import io.ratchet.recipes.lock.LockOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * How a Spring Boot service reaches its Ratchet cluster: {@code ratchet.*} in its configuration. Only
 * {@code ratchet.peers} is required; every other setting has the client's own default.
 *
 * <pre>
 * ratchet.peers=n1=10.0.0.1:7001,n2=10.0.0.2:7001,n3=10.0.0.3:7001
 * ratchet.tls.ca=/etc/ratchet/ca.pem
 * ratchet.token=${RATCHET_TOKEN}
 * </pre>
 */
@ConfigurationProperties("ratchet")
public class RatchetProperties {
    /** The nodes' client addresses: host:port, or id=host:port, separated by commas. */
    private List<String> peers = new ArrayList<>();
    /** The cluster's name (its Raft group), as the nodes' configuration gives it. */
    private String group = "ratchet";
    /** How long one attempt at one node may take. */
    private Duration requestTimeout = Duration.ofSeconds(3);
    /** Attempts per operation that reach a node and get no answer. */
    private int maxAttempts = 12;
    /** The most one operation may take in all, retries included. */
    private Duration operationTimeout = Duration.ofSeconds(15);
    /** How long the cluster keeps this client's session (exactly-once writes) without a write in it. */
    private Duration sessionTimeout = ClientOptions.DEFAULT_SESSION_TIMEOUT;
    /** The bearer token of a cluster with authentication on. */
    private String token;
    private final Tls tls = new Tls();
    private final Lock lock = new Lock();
    private final ShedLock shedlock = new ShedLock();
    private final Integration integration = new Integration();

    /** TLS: the CA that signed the nodes' certificates, and for mutual TLS the client's certificate and key. */
    public static class Tls {
        /** PEM certificates trusted for the nodes' TLS certificates; unset for plaintext. */
        private Path ca;
        /** The client's certificate chain (PEM), for mutual TLS. */
        private Path cert;
        /** The private key of the client's certificate (PEM, PKCS#8). */
        private Path key;

        public Path getCa() {
            return ca;
        }

        public void setCa(Path ca) {
            this.ca = ca;
        }

        public Path getCert() {
            return cert;
        }

        public void setCert(Path cert) {
            this.cert = cert;
        }

        public Path getKey() {
            return key;
        }

        public void setKey(Path key) {
            this.key = key;
        }
    }

    /** The locks this service takes (Locks, the ShedLock provider, the Spring Integration lock registry). */
    public static class Lock {
        /** The owner id written into every lock this service takes; unset: host/pid/random, unique per instance. */
        private String owner;
        /** The longest lease a caller may ask for: a longer one is refused before anything is written. */
        private Duration maxLease = LockOptions.DEFAULT_MAX_LEASE;

        public String getOwner() {
            return owner;
        }

        public void setOwner(String owner) {
            this.owner = owner;
        }

        public Duration getMaxLease() {
            return maxLease;
        }

        public void setMaxLease(Duration maxLease) {
            this.maxLease = maxLease;
        }
    }

    /** An adapter the starter provides unless told not to, and the prefix of the names it makes. */
    public static class Adapter {
        /** Whether to provide it (unless the service defines its own). */
        private boolean enabled;
        /** What goes before the names the service gives to make Ratchet's. */
        private String prefix;

        Adapter(boolean enabled, String prefix) {
            this.enabled = enabled;
            this.prefix = prefix;
        }

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getPrefix() {
            return prefix;
        }

        public void setPrefix(String prefix) {
            this.prefix = prefix;
        }
    }

    /** ShedLock's LockProvider, when ShedLock is on the class path; its lock names as ShedLock's, unprefixed. */
    public static class ShedLock extends Adapter {
        ShedLock() {
            super(true, "");
        }
    }

    /** Spring Integration's lock registry and metadata store, when Spring Integration is on the class path. */
    public static class Integration {
        private final LockRegistry lockRegistry = new LockRegistry();
        private final MetadataStore metadataStore = new MetadataStore();

        public LockRegistry getLockRegistry() {
            return lockRegistry;
        }

        public MetadataStore getMetadataStore() {
            return metadataStore;
        }
    }

    /** The LockRegistry (distributed locks and leader election), its lock names under spring/. */
    public static class LockRegistry extends Adapter {
        /** The lease of a lock taken without a time-to-live of its own (lock(), tryLock()); as JdbcLockRegistry's. */
        private Duration ttl = Duration.ofSeconds(10);

        LockRegistry() {
            super(true, "spring/");
        }

        public Duration getTtl() {
            return ttl;
        }

        public void setTtl(Duration ttl) {
            this.ttl = ttl;
        }
    }

    /**
     * The metadataStore bean (a ConcurrentMetadataStore in the cluster), its keys under metadata/: off unless
     * asked for, since it replaces Spring Integration's in-memory default.
     */
    public static class MetadataStore extends Adapter {
        MetadataStore() {
            super(false, "metadata/");
        }
    }

    /** The client's options: a clear error when {@code ratchet.peers} is missing or malformed. */
    public ClientOptions toClientOptions() {
        if (peers.isEmpty()) {
            throw new IllegalStateException("ratchet.peers is not set: give the nodes' client addresses, as in"
                    + " ratchet.peers=n1=127.0.0.1:7001,n2=127.0.0.1:7002,n3=127.0.0.1:7003");
        }
        return ClientOptions.parse(String.join(",", peers)).withGroup(group)
                .withTimeouts(requestTimeout, maxAttempts, operationTimeout).withSessionTimeout(sessionTimeout)
                .withCredentials(new Credentials(tls.ca, tls.cert, tls.key, token == null || token.isBlank() ? null : token));
    }

    /** The lock options: the owner given, or a fresh one. */
    public LockOptions toLockOptions() {
        return new LockOptions(lock.owner == null || lock.owner.isBlank() ? LockOptions.newOwnerId() : lock.owner, lock.maxLease);
    }

    public List<String> getPeers() {
        return peers;
    }

    public void setPeers(List<String> peers) {
        this.peers = peers;
    }

    public String getGroup() {
        return group;
    }

    public void setGroup(String group) {
        this.group = group;
    }

    public Duration getRequestTimeout() {
        return requestTimeout;
    }

    public void setRequestTimeout(Duration requestTimeout) {
        this.requestTimeout = requestTimeout;
    }

    public int getMaxAttempts() {
        return maxAttempts;
    }

    public void setMaxAttempts(int maxAttempts) {
        this.maxAttempts = maxAttempts;
    }

    public Duration getOperationTimeout() {
        return operationTimeout;
    }

    public void setOperationTimeout(Duration operationTimeout) {
        this.operationTimeout = operationTimeout;
    }

    public Duration getSessionTimeout() {
        return sessionTimeout;
    }

    public void setSessionTimeout(Duration sessionTimeout) {
        this.sessionTimeout = sessionTimeout;
    }

    public String getToken() {
        return token;
    }

    public void setToken(String token) {
        this.token = token;
    }

    public Tls getTls() {
        return tls;
    }

    public Lock getLock() {
        return lock;
    }

    public ShedLock getShedlock() {
        return shedlock;
    }

    public Integration getIntegration() {
        return integration;
    }
}
