package io.ratchet.chaos.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Each node in its own Linux network namespace, so that links between nodes can be cut. The namespaces
 * hang off a bridge in a hub namespace; the harness reaches every node through one veth pair from the
 * host into the hub, on a private /24 that no existing route uses. Nothing else is touched: traffic goes
 * only to these namespaces, and {@link #close()} removes all of them.
 *
 * <p>A partition is made of blackhole routes inside the node namespaces: node {@code a} drops every
 * packet it would send to node {@code b}, and {@code b} every packet to {@code a}, so established
 * connections stall as in a real partition. Routes need nothing but iproute2: neither iptables nor nft
 * is assumed, and tc's drop action is often not built into minimal kernels. The harness keeps
 * talking to every node.
 *
 * <p>Every namespace and link is written to a record file before it is made, so that the launcher can
 * remove them even when the harness is killed with SIGKILL.
 */
public final class NamespaceNetwork implements Network {
    private static final int PORT_BASE = 7100;

    private final String tag;
    private final String subnet;
    private final int nodes;
    private final Path record;
    private final List<String> namespaces = new ArrayList<>();
    private final List<String> hostLinks = new ArrayList<>();
    /** Installed cuts: node {@code from} drops what it sends to node {@code to}. */
    private final Set<List<Integer>> cuts = new LinkedHashSet<>();

    private NamespaceNetwork(String tag, String subnet, int nodes, Path record) {
        this.tag = tag;
        this.subnet = subnet;
        this.nodes = nodes;
        this.record = record;
    }

    /**
     * Why namespaces cannot be used on this machine, or empty when they can: it makes a namespace with a
     * veth pair and a blackhole route, and removes it again.
     */
    public static Optional<String> unavailableReason() {
        String probe = "ratchet-probe-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x10000, 0xfffff));
        try {
            Shell.run("ip", "netns", "add", probe);
        } catch (IOException e) {
            return Optional.of("cannot create a network namespace (needs iproute2 and root or CAP_SYS_ADMIN): " + e.getMessage());
        }
        try {
            Shell.run("ip", "-n", probe, "link", "add", "probe0", "type", "veth", "peer", "name", "probe1");
            Shell.run("ip", "-n", probe, "link", "set", "probe0", "up");
            Shell.run("ip", "-n", probe, "addr", "add", "10.213.0.1/24", "dev", "probe0");
            Shell.run("ip", "-n", probe, "route", "add", "blackhole", "10.213.0.2/32");
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of("network namespaces work, but not what partitions need (veth pairs, blackhole routes): " + e.getMessage());
        } finally {
            String failure = Shell.quietly("ip", "netns", "del", probe);
            if (failure != null) {
                System.err.println("chaos: could not remove the probe namespace " + probe + ": " + failure);
            }
        }
    }

    /** Creates the namespaces, bridge and links for {@code nodes} nodes; on failure removes what it made. */
    public static NamespaceNetwork create(int nodes, Path record) throws IOException {
        String tag = Integer.toHexString(ThreadLocalRandom.current().nextInt(0x1000, 0x10000));
        NamespaceNetwork network = new NamespaceNetwork(tag, freeSubnet(), nodes, record);
        try {
            network.build();
            return network;
        } catch (IOException | RuntimeException e) {
            network.close();
            throw e;
        }
    }

    /** A 10.213.X.0/24 that no address or route on this host mentions. */
    private static String freeSubnet() throws IOException {
        String taken = Shell.run("ip", "-4", "route", "show", "table", "all") + Shell.run("ip", "-4", "addr");
        Set<Integer> tried = new HashSet<>();
        while (tried.size() < 200) {
            int x = ThreadLocalRandom.current().nextInt(1, 250);
            if (tried.add(x) && !taken.contains("10.213." + x + ".")) {
                return "10.213." + x + ".";
            }
        }
        throw new IOException("no free 10.213.X.0/24 subnet for the namespaces");
    }

    private String hub() {
        return "ratchet-" + tag + "-hub";
    }

    private String namespace(int n) {
        return "ratchet-" + tag + "-n" + n;
    }

    private String ip(int n) {
        return subnet + n;
    }

    private void build() throws IOException {
        addNamespace(hub());
        Shell.run("ip", "-n", hub(), "link", "add", "br0", "type", "bridge");
        Shell.run("ip", "-n", hub(), "link", "set", "br0", "up");
        for (int n = 1; n <= nodes; n++) {
            String ns = namespace(n);
            addNamespace(ns);
            Shell.run("ip", "-n", ns, "link", "set", "lo", "up");
            // Created inside the namespaces, so no interface name ever appears on the host.
            Shell.run("ip", "-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", "n" + n, "netns", hub());
            Shell.run("ip", "-n", ns, "addr", "add", ip(n) + "/24", "dev", "eth0");
            Shell.run("ip", "-n", ns, "link", "set", "eth0", "up");
            Shell.run("ip", "-n", hub(), "link", "set", "n" + n, "master", "br0");
            Shell.run("ip", "-n", hub(), "link", "set", "n" + n, "up");
        }
        String hostLink = "rc" + tag;
        remember("link " + hostLink);
        Shell.run("ip", "link", "add", hostLink, "type", "veth", "peer", "name", "host", "netns", hub());
        hostLinks.add(hostLink);
        Shell.run("ip", "-n", hub(), "link", "set", "host", "master", "br0");
        Shell.run("ip", "-n", hub(), "link", "set", "host", "up");
        Shell.run("ip", "addr", "add", ip(254) + "/24", "dev", hostLink);
        Shell.run("ip", "link", "set", hostLink, "up");
    }

    private void addNamespace(String name) throws IOException {
        remember("netns " + name);
        Shell.run("ip", "netns", "add", name);
        namespaces.add(name);
    }

    private void remember(String line) throws IOException {
        Files.writeString(record, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    @Override
    public String address(int n) {
        return ip(n) + ":" + (PORT_BASE + n);
    }

    @Override
    public List<String> launcher(int n) {
        return List.of("ip", "netns", "exec", namespace(n));
    }

    @Override
    public String describe() {
        return String.format(Locale.ROOT, "network namespaces ratchet-%s-* on %s0/24 (harness at %s)", tag, subnet, ip(254));
    }

    /**
     * Cuts every link between nodes on different sides (node numbers, 1-based). The harness still reaches
     * every node. Cuts add up until {@link #heal()}.
     */
    public synchronized void partition(List<Set<Integer>> sides) throws IOException {
        for (Set<Integer> side : sides) {
            for (Set<Integer> other : sides) {
                if (side == other) {
                    continue;
                }
                for (int from : side) {
                    for (int to : other) {
                        if (cuts.add(List.of(from, to))) {
                            Shell.run("ip", "-n", namespace(from), "route", "add", "blackhole", ip(to) + "/32");
                        }
                    }
                }
            }
        }
    }

    /** Removes every cut. */
    public synchronized void heal() throws IOException {
        IOException first = null;
        for (List<Integer> cut : List.copyOf(cuts)) {
            try {
                Shell.run("ip", "-n", namespace(cut.get(0)), "route", "del", "blackhole", ip(cut.get(1)) + "/32");
                cuts.remove(cut);
            } catch (IOException e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }

    public synchronized boolean partitioned() {
        return !cuts.isEmpty();
    }

    @Override
    public synchronized void close() {
        cuts.clear();
        for (String link : hostLinks) {
            report(Shell.quietly("ip", "link", "del", link));
        }
        hostLinks.clear();
        for (int i = namespaces.size() - 1; i >= 0; i--) {
            report(Shell.quietly("ip", "netns", "del", namespaces.get(i)));
        }
        namespaces.clear();
    }

    private static void report(String failure) {
        if (failure != null) {
            System.err.println("chaos: clean-up: " + failure);
        }
    }
}
