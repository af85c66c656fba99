package io.ratchet.node;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Nodes on addresses of their own with one port for all, as three machines' nodes are (the release, upgrade
 * and image tests run them on loopback addresses such as 127.0.0.11 to .13).
 *
 * @param addresses id to host:port, in the order given
 */
public record HostPeers(Map<String, String> addresses) {
    public static HostPeers of(List<String> ids, List<String> hosts, int port) {
        Map<String, String> addresses = new LinkedHashMap<>();
        for (int i = 0; i < ids.size(); i++) {
            addresses.put(ids.get(i), hosts.get(i) + ":" + port);
        }
        return new HostPeers(addresses);
    }

    /** The {@code peers} line of a node's configuration: {@code n1=host:port,...}. */
    public String line() {
        return addresses.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(","));
    }
}
