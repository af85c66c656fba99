package io.ratchet.client;

import io.ratchet.protocol.Item;
import java.util.Optional;

/**
 * A watch's answer. {@code changed} is true when the key was put or deleted after the watched index
 * ({@code lastChange} is the index of that change), false when the timeout passed first. It may report
 * a change early when the node can no longer rule one out; callers act on {@code item}, the key's
 * state at the time of the answer.
 */
public record WatchResult(boolean changed, long lastChange, Optional<Item> item) {
}
