package io.ratchet.recipes.session;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;

/**
 * One operation's events: kept in order, logged at debug level and handed to the operation's listeners.
 * An operation's events may be emitted by different threads one after another (a combined update is
 * driven by whichever caller leads), never at once; the methods are synchronized so each thread sees
 * the events before it.
 */
final class Trail {
    private final String id;
    private final List<RetryListener> listeners;
    private final Logger log;
    private final List<RetryEvent> events = new ArrayList<>();

    Trail(String id, List<RetryListener> listeners, Logger log) {
        this.id = id;
        this.listeners = listeners;
        this.log = log;
    }

    String id() {
        return id;
    }

    synchronized void emit(RetryEvent event) {
        events.add(event);
        if (log.isDebugEnabled()) {
            log.debug("{}", event.describe());
        }
        for (RetryListener listener : listeners) {
            try {
                listener.onEvent(event);
            } catch (RuntimeException e) {
                log.warn("a retry listener failed on {}; ignored", event, e);
            }
        }
    }

    /** The events so far, as an immutable list. */
    synchronized List<RetryEvent> snapshot() {
        return List.copyOf(events);
    }
}
