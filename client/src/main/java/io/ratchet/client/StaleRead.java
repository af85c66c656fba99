package io.ratchet.client;

/**
 * A read served by one node from its local state, without consulting the leader: it may miss writes
 * that are already acknowledged. {@code servedBy} is the address of the node that answered.
 */
public record StaleRead<T>(T value, String servedBy) {
}
