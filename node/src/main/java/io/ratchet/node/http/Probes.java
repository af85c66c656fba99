package io.ratchet.node.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.ErrorCode;
import io.ratchet.common.Readiness;
import io.ratchet.node.metrics.NodeMetrics;
import io.ratchet.protocol.Json;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;

/**
 * What monitoring and orchestration poll, beside the {@code /v1} API: {@code GET /metrics} (Prometheus
 * text), {@code GET /health/live} (the process serves HTTP) and {@code GET /health/ready} (200 only
 * while the node is {@link Readiness ready}, else 503 naming what failed). Each is answered from this
 * node's own state at once, never through the cluster, so a probe cannot hang on a lost leader.
 */
public final class Probes {
    private final LocalNode node;

    public Probes(LocalNode node) {
        this.node = node;
    }

    /** The answer to a probe's path, or null when {@code path} is no probe. */
    HttpReply answer(String method, String path) {
        if (!path.equals("/metrics") && !path.equals("/health/live") && !path.equals("/health/ready")) {
            return null;
        }
        if (!method.equals("GET")) {
            return HttpReply.error(405, "method_not_allowed", ErrorCode.INVALID_REQUEST, method + " is not allowed on " + path).header("Allow", "GET");
        }
        return switch (path) {
            case "/metrics" -> new HttpReply(200, new LinkedHashMap<>(), NodeMetrics.CONTENT_TYPE,
                    node.metrics().getBytes(StandardCharsets.UTF_8));
            case "/health/live" -> HttpReply.json(200, Json.MAPPER.createObjectNode().put("live", true).put("node", node.id()));
            default -> ready();
        };
    }

    private HttpReply ready() {
        Readiness readiness = node.readiness();
        ObjectNode body = Json.MAPPER.createObjectNode();
        body.put("ready", readiness.ready());
        body.put("node", node.id());
        body.put("member", readiness.member());
        body.put("leader", readiness.leader());
        body.put("appliedIndex", readiness.appliedIndex());
        body.put("commitIndex", readiness.commitIndex());
        body.put("maxApplyLag", Readiness.MAX_APPLY_LAG);
        readiness.failed().forEach(body.putArray("failed")::add);
        return HttpReply.json(readiness.ready() ? 200 : 503, body).header("Cache-Control", "no-store");
    }
}
