package io.ratchet.node.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.AuthenticationException;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.ErrorCode;
import io.ratchet.client.NodeStatus;
import io.ratchet.client.PermissionDeniedException;
import io.ratchet.client.PutOptions;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.TransactionResult;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.recipes.reservation.Reservations;
import io.ratchet.node.http.HttpApi.Route;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.JsonText;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Refusal;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import io.ratchet.protocol.TransactionOps;
import io.ratchet.statemachine.KeyContention;
import java.io.IOException;
import java.io.InputStream;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Function;

/**
 * The API's routes (docs/HTTP.md): each turns an HTTP call into calls of the node's own
 * {@link RatchetClient}, so an HTTP write takes the client's session and group commit and then shares
 * the leader's log entries with every other client's writes. Conditions come from {@code If-Match} /
 * {@code If-None-Match}: Ratchet has no blind writes, so a write without one is refused (428).
 */
public final class Routes {
    /** The default and the largest page of a listing. */
    static final int DEFAULT_PAGE_SIZE = 100;
    static final Duration DEFAULT_WATCH = Duration.ofSeconds(30);
    /** How long an {@code Idempotency-Key} is remembered. */
    static final Duration IDEMPOTENCY_RETENTION = Duration.ofMillis(Request.MAX_RETENTION_MILLIS);
    private static final int MAX_HOT_KEYS = 1000;
    /** Small JSON bodies: a lock or reservation request. */
    private static final long SMALL_BODY = 64 * 1024;

    private final GatewayClients clients;
    private final LocalNode node;
    private final Executor blocking;

    /**
     * @param clients  the node's own clients of the cluster, one per caller's token
     * @param node     the node it runs in
     * @param blocking where calls that block (the status probe) run
     */
    public Routes(GatewayClients clients, LocalNode node, Executor blocking) {
        this.clients = clients;
        this.node = node;
        this.blocking = blocking;
    }

    /** The client that acts for the caller: the one holding its bearer token, if it gave one. */
    private RatchetClient client(HttpCall call) {
        return clients.of(token(call));
    }

    /** Refuses, as the front end would, what the caller may not ask of this node's own state. */
    private void permit(HttpCall call, Query query) {
        Refusal denied = node.check(token(call), query);
        if (denied != null) {
            throw denied.reason() == Refusal.Reason.UNAUTHENTICATED ? new AuthenticationException(denied.message())
                    : new PermissionDeniedException(denied.message());
        }
    }

    /** The caller's bearer token ({@code Authorization: Bearer TOKEN}), or null. */
    static String token(HttpCall call) {
        String authorization = call.header("Authorization");
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return null;
        }
        String token = authorization.substring(7).trim();
        return token.isEmpty() ? null : token;
    }

    List<Route> all() {
        return List.of(
                new Route("GET", "/v1/items", null, 0, this::list),
                new Route("GET", "/v1/items", "key", 0, this::get),
                new Route("PUT", "/v1/items", "key", Limits.MAX_VALUE_BYTES, this::put),
                new Route("DELETE", "/v1/items", "key", 0, this::delete),
                new Route("POST", "/v1/txn", null, Limits.MAX_REQUEST_BYTES, this::transaction),
                new Route("GET", "/v1/watch", "key", 0, this::watch),
                new Route("GET", "/v1/docs", "id", 0, this::getDocument),
                new Route("PUT", "/v1/docs", "id", Limits.MAX_VALUE_BYTES, this::putDocument),
                new Route("DELETE", "/v1/docs", "id", 0, this::deleteDocument),
                new Route("GET", "/v1/locks", null, 0, this::locks),
                new Route("GET", "/v1/locks", "name", 0, this::holder),
                new Route("POST", "/v1/locks", "name", SMALL_BODY, this::acquire),
                new Route("PUT", "/v1/locks", "name", SMALL_BODY, this::renew),
                new Route("DELETE", "/v1/locks", "name", 0, this::release),
                new Route("POST", "/v1/reservations", "key", SMALL_BODY, this::reserve),
                new Route("POST", "/v1/add", "key", SMALL_BODY, this::add),
                new Route("GET", "/v1/status", null, 0, this::status),
                new Route("GET", "/v1/hotkeys", null, 0, this::hotKeys),
                new Route("GET", "/v1/openapi.json", null, 0, call -> openApi()));
    }

    // ---- items

    private CompletableFuture<HttpReply> get(HttpCall call) {
        String key = call.rest();
        if (call.flag("stale")) {
            permit(call, new Query.Get(key));
            return node.staleGet(key).thenApply(read -> found(read.item())
                    .header("Ratchet-Stale", "true")
                    .header("Ratchet-Applied-Index", Long.toString(read.appliedIndex()))
                    .header("Ratchet-Node", node.id()));
        }
        return client(call).getAsync(key).thenApply(Routes::found);
    }

    private static HttpReply found(Optional<Item> item) {
        return item.map(i -> HttpReply.json(200, JsonViews.item(i)).etag(i.index()))
                .orElseGet(() -> HttpReply.error(404, "not_found", ErrorCode.NOT_FOUND, "no item under that key"));
    }

    private CompletableFuture<HttpReply> list(HttpCall call) {
        String prefix = call.param("prefix");
        int start = (int) call.longParam("start", 0, 0, Integer.MAX_VALUE);
        int pageSize = (int) call.longParam("pageSize", DEFAULT_PAGE_SIZE, 1, Limits.MAX_PAGE_SIZE);
        return client(call).listAsync(prefix == null ? "" : prefix, start, pageSize).thenApply(items -> {
            ObjectNode body = Json.MAPPER.createObjectNode();
            ArrayNode array = body.putArray("items");
            items.forEach(i -> array.add(JsonViews.item(i)));
            body.put("start", start);
            body.put("pageSize", pageSize);
            if (items.size() == pageSize) {
                body.put("next", (long) start + pageSize);
            } else {
                body.putNull("next");
            }
            return HttpReply.json(200, body);
        });
    }

    private CompletableFuture<HttpReply> put(HttpCall call) {
        long index = Preconditions.forPut(call);
        String value = Json.write(call.json());
        PutOptions options = PutOptions.none();
        String metadata = metadata(call);
        if (metadata != null) {
            options = options.metadata(JsonText.of(metadata));
        }
        Duration ttl = call.durationParam("ttl", null);
        if (ttl != null) {
            options = options.ttl(ttl);
        }
        String expires = call.param("expires");
        if (expires != null) {
            try {
                options = options.expiresAt(Instant.parse(expires));
            } catch (DateTimeException e) {
                throw HttpError.badRequest("expires '" + expires + "' is not an ISO-8601 instant such as 2030-01-01T00:00:00Z");
            }
        }
        Command.Put put;
        try {
            put = options.toCommand(call.rest(), value, index);
        } catch (InvalidCommandException e) {
            throw HttpError.badRequest(e.getMessage());
        }
        return write(call, put).thenApply(r -> {
            if (!r.successful()) {
                return preconditionFailed(r.item(), "the item's index is " + r.index() + ", not " + index
                        + (index == 0 ? " (it exists)" : ""));
            }
            HttpReply reply = HttpReply.json(index == 0 ? 201 : 200, JsonViews.item(r.item())).etag(r.index());
            return index == 0 ? reply.header("Location", "/v1/items/" + HttpApi.encodePath(call.rest())) : reply;
        });
    }

    private CompletableFuture<HttpReply> delete(HttpCall call) {
        long index = Preconditions.forDelete(call);
        Command.Delete delete = new Command.Delete(call.rest(), index);
        return write(call, delete).thenApply(r -> r.successful() ? HttpReply.empty(204)
                : preconditionFailed(r.item(), r.item() == null ? "there is no item under that key"
                        : "the item's index is " + r.index() + ", not " + index));
    }

    private CompletableFuture<CompareExchangeResult> write(HttpCall call, Command.Op op) {
        String idempotencyKey = call.header("Idempotency-Key");
        return idempotencyKey == null ? client(call).writeAsync(op) : client(call).writeAsync(op, idempotencyKey, IDEMPOTENCY_RETENTION);
    }

    private static String metadata(HttpCall call) {
        String metadata = call.param("metadata");
        if (metadata == null) {
            return null;
        }
        try {
            return Json.write(Json.parse(Json.validateMetadata(metadata)));
        } catch (InvalidCommandException e) {
            throw HttpError.badRequest("parameter 'metadata': " + e.getMessage());
        }
    }

    /** A 412: the current item (or none) in the body, and its ETag. */
    private static HttpReply preconditionFailed(Item current, String message) {
        ObjectNode body = HttpReply.errorBody("precondition_failed", ErrorCode.CONDITION_FAILED, message);
        body.set("current", current == null ? null : JsonViews.item(current));
        HttpReply reply = HttpReply.json(412, body);
        return current == null ? reply : reply.etag(current.index());
    }

    // ---- transactions

    private CompletableFuture<HttpReply> transaction(HttpCall call) {
        List<Command.Op> parsed;
        try {
            parsed = TransactionOps.parse(call.jsonObject().get("ops"));
        } catch (InvalidCommandException e) {
            throw HttpError.badRequest("the body must be {\"ops\": [...]}: " + e.getMessage());
        }
        String idempotencyKey = call.header("Idempotency-Key");
        CompletableFuture<TransactionResult> result = idempotencyKey == null ? client(call).transactionAsync(parsed)
                : client(call).transactionAsync(parsed, idempotencyKey, IDEMPOTENCY_RETENTION);
        return result.thenApply(r -> {
            ObjectNode body = r.successful() ? Json.MAPPER.createObjectNode()
                    : HttpReply.errorBody("conflict", ErrorCode.CONDITION_FAILED, r.conflicts().size() + " condition(s) failed; nothing was written");
            body.put("successful", r.successful());
            body.put("index", r.index());
            if (!r.indexes().isEmpty()) {
                // across groups: each written key's index in its own group
                r.indexes().forEach(body.putObject("indexes")::put);
            }
            ArrayNode conflicts = body.putArray("conflicts");
            for (Result.Conflict c : r.conflicts()) {
                conflicts.addObject().put("key", c.key()).put("expected", c.expected()).put("actual", c.actual());
            }
            return HttpReply.json(r.successful() ? 200 : 409, body);
        });
    }

    // ---- watches

    private CompletableFuture<HttpReply> watch(HttpCall call) {
        long after = call.longParam("after", 0, 0, Long.MAX_VALUE);
        Duration timeout = call.durationParam("timeout", DEFAULT_WATCH);
        if (timeout.isZero() || timeout.compareTo(RatchetClient.MAX_WATCH) > 0) {
            throw HttpError.badRequest("timeout must be above 0 and at most " + RatchetClient.MAX_WATCH.toSeconds() + "s");
        }
        return client(call).watchAsync(call.rest(), after, timeout).thenApply(w -> {
            ObjectNode body = Json.MAPPER.createObjectNode();
            body.put("changed", w.changed());
            body.put("lastChange", w.lastChange());
            body.set("item", w.item().map(JsonViews::item).orElse(null));
            return HttpReply.json(200, body);
        });
    }

    // ---- documents

    private CompletableFuture<HttpReply> getDocument(HttpCall call) {
        return client(call).getDocumentAsync(call.rest()).thenApply(d -> d
                .map(doc -> HttpReply.json(200, JsonViews.document(doc)).etag(doc.index()))
                .orElseGet(() -> HttpReply.error(404, "not_found", ErrorCode.NOT_FOUND, "no document under that id")));
    }

    private CompletableFuture<HttpReply> putDocument(HttpCall call) {
        long guard = Preconditions.forPut(call);
        JsonNode document = call.json();
        if (!document.isObject()) {
            throw HttpError.badRequest("a document must be a JSON object");
        }
        Command.PutDocument put = new Command.PutDocument(call.rest(), Json.write(document), guard);
        return documentWrite(call, put, guard, tx -> HttpReply.json(guard == 0 ? 201 : 200,
                JsonViews.document(new io.ratchet.protocol.Document(call.rest(), put.json(), tx.index()))).etag(tx.index()));
    }

    private CompletableFuture<HttpReply> deleteDocument(HttpCall call) {
        long guard = Preconditions.forDelete(call);
        return documentWrite(call, new Command.DeleteDocument(call.rest(), guard), guard, tx -> HttpReply.empty(204));
    }

    /** A document write is a one-op transaction on its guard; a failed guard is a 412 with the document now. */
    private CompletableFuture<HttpReply> documentWrite(HttpCall call, Command.DocumentOp op, long guard,
                                                       Function<TransactionResult, HttpReply> success) {
        String idempotencyKey = call.header("Idempotency-Key");
        CompletableFuture<TransactionResult> result = idempotencyKey == null ? client(call).transactionAsync(List.of(op))
                : client(call).transactionAsync(List.of(op), idempotencyKey, IDEMPOTENCY_RETENTION);
        return result.thenCompose(tx -> {
            if (tx.successful()) {
                return CompletableFuture.completedFuture(success.apply(tx));
            }
            long actual = tx.conflicts().get(0).actual();
            return client(call).getDocumentAsync(op.id()).thenApply(now -> {
                ObjectNode body = HttpReply.errorBody("precondition_failed", ErrorCode.CONDITION_FAILED, "the document's guard index is "
                        + actual + ", not " + guard + (guard == 0 && actual != 0 ? " (it exists)" : ""));
                body.set("current", now.map(JsonViews::document).orElse(null));
                HttpReply reply = HttpReply.json(412, body);
                return now.map(d -> reply.etag(d.index())).orElse(reply);
            });
        });
    }

    // ---- locks

    private CompletableFuture<HttpReply> locks(HttpCall call) {
        int pageSize = (int) call.longParam("pageSize", Limits.MAX_PAGE_SIZE, 1, Limits.MAX_PAGE_SIZE);
        return client(call).listAsync(Locks.PREFIX, 0, pageSize).thenApply(items -> {
            ObjectNode body = Json.MAPPER.createObjectNode();
            ArrayNode array = body.putArray("locks");
            items.forEach(i -> array.add(JsonViews.holder(i)));
            return HttpReply.json(200, body);
        });
    }

    private CompletableFuture<HttpReply> holder(HttpCall call) {
        return new Locks(client(call)).holderAsync(call.rest()).thenApply(h -> h
                .map(holder -> HttpReply.json(200, JsonViews.holder(holder)).etag(holder.index()))
                .orElseGet(() -> HttpReply.error(404, "not_found", ErrorCode.NOT_FOUND, "lock '" + call.rest() + "' is free")));
    }

    private CompletableFuture<HttpReply> acquire(HttpCall call) {
        JsonNode body = call.jsonObject();
        Duration lease = HttpCall.duration("lease", text(body, "lease", true));
        String waitText = text(body, "wait", false);
        Duration wait = waitText == null ? Duration.ZERO : HttpCall.duration("wait", waitText);
        if (wait.compareTo(RatchetClient.MAX_WATCH) > 0) {
            throw HttpError.badRequest("\"wait\" is at most " + RatchetClient.MAX_WATCH.toSeconds() + "s over HTTP; wait again to wait longer");
        }
        String owner = text(body, "owner", false);
        LockOptions options;
        try {
            options = owner == null ? LockOptions.defaults() : LockOptions.defaults().withOwner(owner);
        } catch (IllegalArgumentException e) {
            throw HttpError.badRequest(e.getMessage());
        }
        Locks locks = new Locks(client(call), options);
        return locks.acquireAsync(call.rest(), lease, wait).thenCompose(granted -> {
            if (granted.isPresent()) {
                return CompletableFuture.completedFuture(
                        HttpReply.json(200, JsonViews.lease(granted.get())).etag(granted.get().currentIndex()));
            }
            return locks.holderAsync(call.rest()).thenApply(h -> {
                ObjectNode conflict = HttpReply.errorBody("conflict", ErrorCode.CONDITION_FAILED, "lock '" + call.rest() + "' is held"
                        + h.map(holder -> " by " + holder.owner()).orElse(" (or was granted too late to use)"));
                conflict.set("holder", h.map(JsonViews::holder).orElse(null));
                return HttpReply.json(409, conflict);
            });
        });
    }

    private CompletableFuture<HttpReply> renew(HttpCall call) {
        long index = Preconditions.ifMatch(call, "renew");
        Duration lease = HttpCall.duration("lease", text(call.jsonObject(), "lease", true));
        return new Locks(client(call)).renewAsync(call.rest(), index, lease)
                .thenApply(renewed -> HttpReply.json(200, JsonViews.lease(renewed)).etag(renewed.currentIndex()));
    }

    private CompletableFuture<HttpReply> release(HttpCall call) {
        long index = Preconditions.ifMatch(call, "release");
        return new Locks(client(call)).releaseAsync(call.rest(), index).thenApply(done -> HttpReply.empty(204));
    }

    private static String text(JsonNode body, String field, boolean required) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            if (required) {
                throw HttpError.badRequest("the body needs \"" + field + "\"");
            }
            return null;
        }
        if (!value.isTextual()) {
            throw HttpError.badRequest("\"" + field + "\" must be a string");
        }
        return value.asText();
    }

    // ---- reservations

    private CompletableFuture<HttpReply> reserve(HttpCall call) {
        JsonNode body = call.jsonObject();
        String owner = text(body, "owner", true);
        String ttl = text(body, "ttl", false);
        Reservations reservations = new Reservations(client(call));
        var result = ttl == null ? reservations.reserveAsync(call.rest(), owner)
                : reservations.reserveAsync(call.rest(), owner, HttpCall.duration("ttl", ttl));
        return result.thenApply(r -> {
            ObjectNode answer = r.reserved() ? Json.MAPPER.createObjectNode()
                    : HttpReply.errorBody("conflict", ErrorCode.CONDITION_FAILED, "'" + call.rest() + "' is reserved by " + r.current().owner());
            answer.put("reserved", r.reserved());
            ObjectNode reservation = answer.putObject("reservation");
            reservation.put("key", r.current().key());
            reservation.put("owner", r.current().owner());
            reservation.put("index", r.current().index());
            reservation.put("expiresAt", r.current().expiresAt().map(Instant::toEpochMilli).orElse(null));
            return HttpReply.json(r.reserved() ? 200 : 409, answer).etag(r.current().index());
        });
    }

    /** {@code POST /v1/add/{key}} with {@code {"delta": N}}: the commutative add, answered with the sum and its index. */
    private CompletableFuture<HttpReply> add(HttpCall call) {
        JsonNode delta = call.jsonObject().get("delta");
        if (delta == null || !delta.isIntegralNumber() || !delta.canConvertToLong()) {
            throw HttpError.badRequest("the body must be {\"delta\": N}, N a signed 64-bit integer (no fraction, no exponent), not "
                    + (delta == null ? "missing" : delta.toString()));
        }
        String idempotencyKey = call.header("Idempotency-Key");
        return client(call).addAsync(call.rest(), delta.asLong(), idempotencyKey, idempotencyKey == null ? null : IDEMPOTENCY_RETENTION)
                .thenApply(r -> {
                    ObjectNode body = Json.MAPPER.createObjectNode();
                    body.put("key", r.key());
                    body.put("value", r.value());
                    body.put("index", r.index());
                    return HttpReply.json(200, body).etag(r.index());
                });
    }

    // ---- the cluster

    private CompletableFuture<HttpReply> status(HttpCall call) {
        return CompletableFuture.supplyAsync(() -> client(call).status(), blocking).thenApply(nodes -> {
            long highestCommit = nodes.stream().mapToLong(NodeStatus::commitIndex).max().orElse(0);
            ObjectNode body = Json.MAPPER.createObjectNode();
            body.put("node", node.id());
            body.put("leader", nodes.stream().filter(n -> "LEADER".equals(n.role())).map(NodeStatus::id)
                    .findFirst().orElse(null));
            body.put("items", nodes.stream().filter(n -> n.error() == null)
                    .max(java.util.Comparator.comparingLong(NodeStatus::appliedIndex)).map(NodeStatus::items).orElse(0L));
            body.put("sessions", node.sessionCount());
            ArrayNode array = body.putArray("nodes");
            for (NodeStatus n : nodes) {
                ObjectNode o = array.addObject();
                o.put("id", n.id());
                o.put("address", n.address());
                o.put("role", n.role());
                o.put("leader", n.leader());
                o.put("term", n.term());
                o.put("appliedIndex", n.appliedIndex());
                o.put("commitIndex", n.commitIndex());
                if (n.error() == null) {
                    o.put("lag", Math.max(0, highestCommit - n.appliedIndex()));
                } else {
                    o.putNull("lag");
                }
                o.put("ready", n.readiness().ready());
                o.put("clusterTime", n.clusterTime());
                o.put("items", n.items());
                o.put("error", n.error());
                if (!n.groups().isEmpty()) {
                    ArrayNode groups = o.putArray("groups");
                    n.groups().forEach(g -> groups.addObject().put("group", g.group()).put("role", g.role())
                            .put("leader", g.leader()).put("term", g.term()).put("commitIndex", g.commitIndex())
                            .put("appliedIndex", g.appliedIndex()));
                }
            }
            return HttpReply.json(200, body);
        });
    }

    private CompletableFuture<HttpReply> hotKeys(HttpCall call) {
        int limit = (int) call.longParam("limit", 20, 1, MAX_HOT_KEYS);
        permit(call, new Query.Contention(limit));
        KeyContention contention = node.contention();
        ObjectNode body = Json.MAPPER.createObjectNode();
        body.put("node", node.id());
        body.put("since", contention.since());
        ArrayNode keys = body.putArray("keys");
        for (KeyContention.Counts c : contention.hottest(limit)) {
            ObjectNode o = keys.addObject();
            o.put("key", c.key());
            o.put("attempts", c.attempts());
            o.put("commits", c.commits());
            o.put("refused", c.refused());
            o.put("attemptsPerCommit", c.attemptsPerCommit());
        }
        return CompletableFuture.completedFuture(HttpReply.json(200, body));
    }

    private static CompletableFuture<HttpReply> openApi() {
        try (InputStream in = Routes.class.getResourceAsStream("openapi.json")) {
            if (in == null) {
                throw new IllegalStateException("openapi.json is missing from the build");
            }
            return CompletableFuture.completedFuture(new HttpReply(200, new java.util.LinkedHashMap<>(),
                    HttpReply.JSON, in.readAllBytes()));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read openapi.json", e);
        }
    }
}
