package io.ratchet.statemachine;

import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Result;
import java.util.List;
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

    /** Called after each entry, on the apply thread, with the state's size and the entry's results. */
    void observe(long used, long quota, List<Result> results) {
        if (!raised && Result.Quota.alarm(used, quota)) {
            raised = true;
            LOG.warn("storage at {}% of its quota ({} of {} bytes): writes that grow the state will be refused at "
                    + "100%; delete items or raise the quota (ratchet quota set)", percent(used, quota), used, quota);
        } else if (raised && used * 100 < quota * LOWER_PERCENT) {
            raised = false;
            refusing = false;
            LOG.info("storage back to {}% of its quota ({} of {} bytes)", percent(used, quota), used, quota);
        }
        if (raised && !refusing && refusedAny(results)) {
            refusing = true;
            LOG.warn("storage quota reached ({} of {} bytes): refusing writes that grow the state; reads, deletes "
                    + "and writes that do not grow it go on", used, quota);
        }
    }

    private static boolean refusedAny(List<Result> results) {
        for (Result r : results) {
            if (r instanceof Result.QuotaExceeded) {
                return true;
            }
        }
        return false;
    }

    private static long percent(long used, long quota) {
        return used * 100 / quota;
    }
}
