package io.ratchet.examples.signup;

import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import io.ratchet.shedlock.RatchetLockProvider;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.ObjectMapper;

/**
 * A report of the users, written by one instance at a time: {@code @SchedulerLock} takes a Ratchet lock for
 * each run, and the run passes the lock's fencing token to what it writes, so a run that overran its lease
 * (paused, slow) cannot overwrite a later run's report. {@code GET /runs} lists this instance's runs.
 */
@Component
@RestController
public class ReportJob {
    /** One run: its lock's fencing token, and when it began and ended (this machine's clock, ms). */
    public record Run(String instance, long token, long startedAt, long endedAt, long users, boolean written) {
    }

    private final RatchetClient client;
    private final ObjectMapper json = new ObjectMapper();
    private final String instance;
    private final Duration work;
    private final List<Run> runs = new CopyOnWriteArrayList<>();

    public ReportJob(RatchetClient client, @Value("${signup.instance:${random.uuid}}") String instance,
                     @Value("${signup.report.work:0ms}") Duration work) {
        this.client = client;
        this.instance = instance;
        this.work = work;
    }

    @Scheduled(fixedDelayString = "${signup.report.every}")
    @SchedulerLock(name = "signup-report", lockAtMostFor = "30s", lockAtLeastFor = "${signup.report.at-least}")
    public void report() throws InterruptedException {
        long token = RatchetLockProvider.currentFencingToken();
        long started = System.currentTimeMillis();
        long users = client.list("emails/", 0, 1000).size();
        if (!work.isZero()) {
            Thread.sleep(work.toMillis()); // a stand-in for a report that takes a while to build
        }
        boolean written = writeFenced(token, users);
        runs.add(new Run(instance, token, started, System.currentTimeMillis(), users, written));
    }

    /**
     * The fenced write: the report item remembers the token that wrote it, and a run whose token is lower
     * than that one (a stale holder) writes nothing. Compare-exchange at the index read makes the check and
     * the write one step.
     */
    private boolean writeFenced(long token, long users) {
        Optional<Item> current = client.get("reports/users");
        if (current.isPresent() && json.readTree(current.get().value()).path("token").asLong() > token) {
            return false;
        }
        return client.put("reports/users", Map.of("token", token, "users", users, "by", instance),
                current.map(Item::index).orElse(0L)).successful();
    }

    @GetMapping("/runs")
    public List<Run> runs() {
        return runs;
    }
}
