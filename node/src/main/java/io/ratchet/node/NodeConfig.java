package io.ratchet.node;

import io.ratchet.common.Credentials;
import io.ratchet.node.security.TlsFiles;
import io.ratchet.protocol.ByteSize;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.Limits;
import io.ratchet.statemachine.kv.RocksKeyValueStore;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.function.Function;

/**
 * One node's settings, read from a properties file (see {@code conf/local-3/n1.properties}).
 *
 * @param id                    this node's id, one of {@code peers}' ids
 * @param peers                 every voting member, id to {@code host:port}
 * @param group                 the cluster's name; nodes of one cluster share it
 * @param storage               where the Raft log and the state's store live
 * @param snapshotThreshold     log entries after which a snapshot is taken and the log before it purged
 * @param segmentSizeBytes      the size of one Raft log segment file (purge drops whole closed segments)
 * @param electionTimeoutMin    the least time without a leader's heartbeat before a follower stands
 * @param electionTimeoutMax    the most, randomised between the two so candidates rarely collide
 * @param sweepInterval         how often the leader proposes removing expired items
 * @param httpPort              the port of the HTTP API and console, on this node's host; 0 for none
 * @param quotaBytes            the storage quota this node proposes when it leads a cluster that never had
 *                              one set ({@code quota.bytes}); 0: {@link #DEFAULT_QUOTA_BYTES}, at most its disk's size
 * @param tls                   the node's certificate, key and CA ({@code tls.cert}, {@code tls.key}, {@code tls.ca});
 *                              null for none: then every port is plaintext
 * @param store                 the native memory of the state's store: its block cache ({@code store.block.cache})
 *                              and one memtable ({@code store.write.buffer})
 * @param minFreeBytes          the free space under which the leader refuses writes that grow the state
 *                              ({@code store.min.free}): the disk fills no further than this, whatever the quota
 * @param listen                the address the node listens on, Raft and HTTP ({@code listen}); null: its host
 *                              from {@code peers}. {@code 0.0.0.0} (every interface) or a local address for a
 *                              node whose address in {@code peers} is not its machine's own: behind NAT, or a
 *                              container whose published address is its host's
 * @param groups                how many Raft groups the cluster's keys are spread over ({@code groups}, 1 to
 *                              {@link Groups#MAX}); fixed when the cluster is formed, and the same on every node
 */
public record NodeConfig(String id, Map<String, String> peers, String group, Path storage, long snapshotThreshold,
                         long segmentSizeBytes, Duration electionTimeoutMin, Duration electionTimeoutMax,
                         Duration sweepInterval, int httpPort, long quotaBytes, TlsFiles tls,
                         RocksKeyValueStore.Settings store, long minFreeBytes, String listen, int groups) {

    public static final String DEFAULT_GROUP = "ratchet";
    /**
     * The quota a node proposes to a cluster that has none set: the state is on disk, so it is a disk's
     * worth. (A cluster that never had one set counts {@link Limits#DEFAULT_QUOTA_BYTES}, the same on
     * every replica of every release, until this is applied.)
     */
    public static final long DEFAULT_QUOTA_BYTES = 8L << 30;
    /** The free space under which writes that grow the state are refused, unless configured. */
    public static final long DEFAULT_MIN_FREE_BYTES = 1L << 30;

    /**
     * A key of a node's configuration file: its name, its default as it would be written in the file (null for
     * none: the key is required, or what its absence means is in the description) and what it sets.
     */
    public record Key(String name, String defaultValue, String description) {
    }

    /**
     * Every key {@link #load} reads, in the order a file usually has them: the one list of them. {@link #load}
     * refuses to read a key not listed here, so that a new key cannot go undocumented; {@code
     * docs/reference/config.md} is generated from this list, and its test checks that each default is what
     * {@link #load} takes when the key is left out.
     */
    public static final List<Key> KEYS = List.of(
            new Key("id", null, "this node's id, one of the ids in peers (required)"),
            new Key("peers", null, "every voting member of the cluster: id=host:port,id=host:port,... (required)"),
            new Key("storage", null, "the directory of the Raft log, the state's store and this node's files; "
                    + "relative to the directory the node is started in (required)"),
            new Key("group", DEFAULT_GROUP, "the cluster's name; every node of one cluster has the same"),
            new Key("groups", "1", "how many Raft groups the cluster's keys are spread over, 1 to " + Groups.MAX
                    + "; fixed when the cluster is formed, and the same on every node"),
            new Key("listen", null, "the address the node listens on, Raft and HTTP: 0.0.0.0 (every interface) or "
                    + "a local address, for a node whose address in peers is not its machine's own (behind NAT, in a "
                    + "container); unset: its host in peers"),
            new Key("snapshot.threshold", "10000", "log entries after which the store is flushed to disk (a snapshot) "
                    + "and the log before it purged"),
            new Key("log.segment.bytes", "8388608", "the size of one Raft log segment file; a purge drops whole "
                    + "closed segments"),
            new Key("election.timeout.min.ms", "300", "the least time a follower waits without hearing the leader "
                    + "before it stands for election (milliseconds)"),
            new Key("election.timeout.max.ms", "600", "the most; each wait is drawn between the two, so candidates "
                    + "rarely collide (milliseconds, above the minimum)"),
            new Key("sweep.interval.ms", "1000", "how often the leader proposes removing expired items "
                    + "(milliseconds, at least 10)"),
            new Key("http.port", "0", "the port of the HTTP API, console, /metrics and health probes; 0: none"),
            new Key("quota.bytes", "0", "the storage quota this node proposes when it leads a cluster that never had "
                    + "one set (ratchet quota set changes it later); bytes, or with KiB, MiB, GiB, TiB; 0: "
                    + (DEFAULT_QUOTA_BYTES >> 30) + " GiB, at most its disk's size"),
            new Key("store.block.cache", "128MiB", "the store's block cache (native memory)"),
            new Key("store.write.buffer", "64MiB", "one memtable of the store (native memory; two at most are held)"),
            new Key("store.min.free", "1GiB", "the free space on the store's disk under which the leader refuses "
                    + "writes that grow the state, whatever the quota"),
            new Key("tls.cert", null, "this node's certificate chain (PEM), for TLS on every port; tls.cert, tls.key "
                    + "and tls.ca go together, or none (plaintext); paths as storage's"),
            new Key("tls.key", null, "the certificate's private key (PKCS#8 PEM)"),
            new Key("tls.ca", null, "the CA certificates this node trusts for its peers and clients (PEM)"));

    public NodeConfig {
        peers = Map.copyOf(peers);
        if (!peers.containsKey(id)) {
            throw new IllegalArgumentException("node id '" + id + "' is not among the peers " + peers.keySet());
        }
        if (electionTimeoutMin.compareTo(electionTimeoutMax) >= 0) {
            throw new IllegalArgumentException("election timeout min must be below max");
        }
        if (sweepInterval.toMillis() < 10) {
            throw new IllegalArgumentException("sweep interval must be at least 10 ms");
        }
        if (httpPort < 0 || httpPort > 65_535) {
            throw new IllegalArgumentException("http.port must be 1..65535 (or 0 for no HTTP), not " + httpPort);
        }
        if (minFreeBytes < 0) {
            throw new IllegalArgumentException("store.min.free must not be negative, not " + minFreeBytes);
        }
        Groups.validCount(groups);
        if (quotaBytes != 0 && (quotaBytes < Limits.MIN_QUOTA_BYTES || quotaBytes > Limits.MAX_QUOTA_BYTES)) {
            throw new IllegalArgumentException("quota.bytes must be " + Limits.MIN_QUOTA_BYTES + " .. "
                    + Limits.MAX_QUOTA_BYTES + " (1 MiB .. 1 TiB), not " + quotaBytes);
        }
    }

    /** The quota this node proposes to a cluster that has none: its own, or {@link #DEFAULT_QUOTA_BYTES}. */
    public long effectiveQuota() {
        return quotaBytes != 0 ? quotaBytes : DEFAULT_QUOTA_BYTES;
    }

    /** Defaults for everything but identity, peers and storage. */
    public static NodeConfig of(String id, Map<String, String> peers, Path storage) {
        return new NodeConfig(id, peers, DEFAULT_GROUP, storage, 10_000, 8L << 20,
                Duration.ofMillis(300), Duration.ofMillis(600), Duration.ofSeconds(1), 0, 0, null,
                RocksKeyValueStore.Settings.DEFAULT, DEFAULT_MIN_FREE_BYTES, null, 1);
    }

    public NodeConfig withSnapshotThreshold(long entries, long segmentBytes) {
        return new NodeConfig(id, peers, group, storage, entries, segmentBytes, electionTimeoutMin, electionTimeoutMax,
                sweepInterval, httpPort, quotaBytes, tls, store, minFreeBytes, listen, groups);
    }

    public NodeConfig withElectionTimeout(Duration min, Duration max) {
        return new NodeConfig(id, peers, group, storage, snapshotThreshold, segmentSizeBytes, min, max, sweepInterval,
                httpPort, quotaBytes, tls, store, minFreeBytes, listen, groups);
    }

    public NodeConfig withHttpPort(int port) {
        return new NodeConfig(id, peers, group, storage, snapshotThreshold, segmentSizeBytes, electionTimeoutMin,
                electionTimeoutMax, sweepInterval, port, quotaBytes, tls, store, minFreeBytes, listen, groups);
    }

    public NodeConfig withQuota(long bytes) {
        return new NodeConfig(id, peers, group, storage, snapshotThreshold, segmentSizeBytes, electionTimeoutMin,
                electionTimeoutMax, sweepInterval, httpPort, bytes, tls, store, minFreeBytes, listen, groups);
    }

    public NodeConfig withTls(TlsFiles files) {
        return new NodeConfig(id, peers, group, storage, snapshotThreshold, segmentSizeBytes, electionTimeoutMin,
                electionTimeoutMax, sweepInterval, httpPort, quotaBytes, files, store, minFreeBytes, listen, groups);
    }

    public NodeConfig withStore(RocksKeyValueStore.Settings settings, long minFree) {
        return new NodeConfig(id, peers, group, storage, snapshotThreshold, segmentSizeBytes, electionTimeoutMin,
                electionTimeoutMax, sweepInterval, httpPort, quotaBytes, tls, settings, minFree, listen, groups);
    }

    /**
     * What this node shows when it is a client of its own cluster (its HTTP gateway): its own certificate,
     * trusting its CA; plaintext without TLS.
     */
    public Credentials clientCredentials() {
        return tls == null ? Credentials.NONE : tls.clientCredentials();
    }

    /** This node's port, from its own address. */
    public int port() {
        String address = peers.get(id);
        return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
    }

    /** This node's host, from its own address: where the others reach it. */
    public String host() {
        String address = peers.get(id);
        return address.substring(0, address.lastIndexOf(':'));
    }

    /** Where this node listens, Raft on {@link #port()} and HTTP on {@link #httpPort()}: {@code listen}, or its host. */
    public String listenHost() {
        return listen != null ? listen : host();
    }

    /** The same node in a cluster of {@code count} groups (set before the cluster is first formed). */
    public NodeConfig withGroups(int count) {
        return new NodeConfig(id, peers, group, storage, snapshotThreshold, segmentSizeBytes, electionTimeoutMin,
                electionTimeoutMax, sweepInterval, httpPort, quotaBytes, tls, store, minFreeBytes, listen, count);
    }

    public NodeConfig withListen(String address) {
        return new NodeConfig(id, peers, group, storage, snapshotThreshold, segmentSizeBytes, electionTimeoutMin,
                electionTimeoutMax, sweepInterval, httpPort, quotaBytes, tls, store, minFreeBytes, address, groups);
    }

    /**
     * Reads a properties file. Relative storage and TLS file paths are resolved against {@code base} (the
     * directory the process was started in), so a conf works from the repository root.
     */
    public static NodeConfig load(Path file, Path base) throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            p.load(in);
        }
        String id = required(p, file, "id");
        Map<String, String> peers = parsePeers(required(p, file, "peers"));
        Path storage = base.resolve(required(p, file, "storage")).normalize();
        NodeConfig defaults = of(id, peers, storage);
        return new NodeConfig(id, peers,
                Objects.requireNonNullElse(value(p, "group"), DEFAULT_GROUP),
                storage,
                number(p, file, "snapshot.threshold", defaults.snapshotThreshold(), Long::parseLong),
                number(p, file, "log.segment.bytes", defaults.segmentSizeBytes(), Long::parseLong),
                Duration.ofMillis(number(p, file, "election.timeout.min.ms", defaults.electionTimeoutMin().toMillis(), Long::parseLong)),
                Duration.ofMillis(number(p, file, "election.timeout.max.ms", defaults.electionTimeoutMax().toMillis(), Long::parseLong)),
                Duration.ofMillis(number(p, file, "sweep.interval.ms", defaults.sweepInterval().toMillis(), Long::parseLong)),
                number(p, file, "http.port", 0, Integer::parseInt),
                number(p, file, "quota.bytes", 0L, ByteSize::parse),
                tls(p, file, base),
                new RocksKeyValueStore.Settings(
                        number(p, file, "store.block.cache", defaults.store().blockCacheBytes(), ByteSize::parse),
                        number(p, file, "store.write.buffer", defaults.store().writeBufferBytes(), ByteSize::parse)),
                number(p, file, "store.min.free", defaults.minFreeBytes(), ByteSize::parse),
                optional(p, "listen"),
                number(p, file, "groups", 1, Integer::parseInt));
    }

    /** {@code tls.cert}, {@code tls.key} and {@code tls.ca}: all three, or none (no TLS). */
    private static TlsFiles tls(Properties p, Path file, Path base) {
        List<String> keys = List.of("tls.cert", "tls.key", "tls.ca");
        List<String> given = keys.stream().filter(k -> value(p, k) != null && !value(p, k).isBlank()).toList();
        if (given.isEmpty()) {
            return null;
        }
        if (given.size() < keys.size()) {
            throw new IllegalArgumentException(file + ": TLS needs tls.cert, tls.key and tls.ca together; only "
                    + String.join(" and ", given) + " " + (given.size() == 1 ? "is" : "are") + " set");
        }
        Function<String, Path> path = k -> base.resolve(value(p, k).trim()).normalize();
        return new TlsFiles(path.apply("tls.cert"), path.apply("tls.key"), path.apply("tls.ca"));
    }

    /** Parses {@code n1=host:port,n2=host:port}. */
    public static Map<String, String> parsePeers(String text) {
        Map<String, String> peers = new LinkedHashMap<>();
        for (String part : text.split(",")) {
            String s = part.trim();
            int eq = s.indexOf('=');
            if (eq <= 0 || s.lastIndexOf(':') < eq) {
                throw new IllegalArgumentException("peer '" + s + "' is not of the form id=host:port");
            }
            peers.put(s.substring(0, eq).trim(), s.substring(eq + 1).trim());
        }
        return peers;
    }

    /** The peers as {@code host:port,...}, the form clients take. */
    public String clientAddresses() {
        List<String> addresses = new ArrayList<>(peers.values());
        addresses.sort(null);
        return String.join(",", addresses);
    }

    /** The file's value for {@code key}, which must be one of {@link #KEYS}: a key read is a key documented. */
    private static String value(Properties p, String key) {
        if (KEYS.stream().noneMatch(k -> k.name().equals(key))) {
            throw new IllegalStateException("'" + key + "' is read but not in NodeConfig.KEYS: document it there");
        }
        return p.getProperty(key);
    }

    private static String required(Properties p, Path file, String key) {
        String value = value(p, key);
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(file + ": '" + key + "' is required");
        }
        return value.trim();
    }

    private static String optional(Properties p, String key) {
        String value = value(p, key);
        return value == null || value.isBlank() ? null : value.trim();
    }

    private static <T> T number(Properties p, Path file, String key, T fallback, Function<String, T> parse) {
        String value = value(p, key);
        if (value == null) {
            return fallback;
        }
        try {
            return parse.apply(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(file + ": '" + key + "' must be a number, not '" + value + "'");
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": '" + key + "': " + e.getMessage());
        }
    }
}
