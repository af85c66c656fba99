package io.ratchet.statemachine;

import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Result;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs when the state crosses {@link Limits#QUOTA_ALARM_PERCENT} of its quota, and the first write
 * refused for the quota while it stays there: once each, not once an entry. Lowered again a few points
 * below the mark, so a state that hovers at it does not fill the log. Not state: only this node's log.
 */
final class QuotaAlarm {
    private static final Logger LOG = LoggerFactory.getLogger(QuotaAlarm.class);
    private static final int LOWER_PERCENT = Limits.QUOTA_ALARM_PERCENT - 5;

    private boolean raised;
    private boolean refusing;

    /** Called after each entry, on the apply thread, with the state's size and whether a write was refused for it. */
    void observe(long used, long quota, boolean refused) {
        if (!raised && Result.Quota.alarm(used, quota)) {
            raised = true;
            LOG.warn("storage at {}% of its quota ({} of {} bytes): writes that grow the state will be refused at "
                    + "100%; delete items or raise the quota (ratchet quota set)", percent(used, quota), used, quota);
        } else if (raised && used * 100 < quota * LOWER_PERCENT) {
            raised = false;
            refusing = false;
            LOG.info("storage back to {}% of its quota ({} of {} bytes)", percent(used, quota), used, quota);
        }
        if (refused && !refusing) {
            refusing = true;
            LOG.warn("storage quota reached ({} of {} bytes): refusing writes that grow the state; reads, deletes "
                    + "and writes that do not grow it go on", used, quota);
        }
    }

    boolean raised() {
        return raised;
    }

    private static long percent(long used, long quota) {
        return used * 100 / quota;
    }
}
