package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.TransactionResult;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Limits;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code doc get|put|delete}: documents and their Atomic Guards. Each prints
 * {@code {"successful":…,"id":…,"document":…,"guardIndex":…}}: after a refused write, the document and
 * guard index as they are now (read after the refusal), so the next attempt can be conditioned on them.
 */
@CommandLine.Command(name = "doc", description = "Documents guarded by rvn-atomic/<id>: get, put, delete, list.",
        subcommands = {DocumentCommands.Get.class, DocumentCommands.Put.class, DocumentCommands.Delete.class,
            DocumentCommands.ListDocuments.class})
final class DocumentCommands implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "name what to do: doc get, doc put, doc delete or doc list");
    }

    static int printDocument(ClientCommand command, boolean successful, String id, Optional<Document> document) {
        ObjectNode o = Output.object();
        o.put("successful", successful);
        o.put("id", document.map(Document::id).orElse(id));
        o.set("document", Output.json(document.map(Document::json).orElse(null)));
        o.put("guardIndex", document.map(Document::index).orElse(0L));
        command.print(o);
        return successful ? ExitCode.DONE : ExitCode.CONDITION_FAILED;
    }

    /** Sends one document op; on a refusal, prints the document as it is now. */
    static int write(ClientCommand command, RatchetClient c, Command.Op op, String id, Optional<Document> after) {
        TransactionResult r = c.transaction(List.of(op));
        if (r.successful()) {
            return printDocument(command, true, id, after.map(d -> new Document(d.id(), d.json(), r.index())));
        }
        return printDocument(command, false, id, c.getDocument(id));
    }

    @CommandLine.Command(name = "get", description = "Read a document and its guard index (exit 1 when absent).")
    static final class Get extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ID")
        String id;

        @Override
        int run(RatchetClient c) {
            Optional<Document> document = c.getDocument(id);
            return printDocument(this, document.isPresent(), id, document);
        }
    }

    @CommandLine.Command(name = "put", description = "Store a JSON object and move its guard; without --guard-index,"
            + " only if the document is absent. Exit 1 when the guard has moved.")
    static final class Put extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ID")
        String id;
        @Parameters(index = "1", paramLabel = "DOCUMENT_JSON", description = "a JSON object, e.g. '{\"name\":\"Ada\"}'")
        String document;
        @Option(names = "--guard-index", defaultValue = "0", description = "the guard index the document was read at (default: create-only)")
        long guardIndex;

        @Override
        int run(RatchetClient c) {
            String json = Json.write(Json.parse(document));
            return write(this, c, new Command.PutDocument(id, json, guardIndex), id, Optional.of(new Document(id, json, 0)));
        }
    }

    @CommandLine.Command(name = "delete", description = "Delete a document and its guard if the guard index matches.")
    static final class Delete extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ID")
        String id;
        @Option(names = "--guard-index", required = true, description = "the document's current guard index")
        long guardIndex;

        @Override
        int run(RatchetClient c) {
            return write(this, c, new Command.DeleteDocument(id, guardIndex), id, Optional.empty());
        }
    }

    @CommandLine.Command(name = "list", description = "List documents whose id starts with a prefix, in id order,"
            + " each with its guard index.")
    static final class ListDocuments extends ClientCommand {
        @Option(names = "--prefix", defaultValue = "", description = "only ids starting with this (case-insensitive)")
        String prefix;
        @Option(names = "--start", defaultValue = "0", description = "documents to skip")
        int start;
        @Option(names = "--page-size", defaultValue = "100", description = "at most this many documents (1.." + Limits.MAX_PAGE_SIZE + ")")
        int pageSize;

        @Override
        int run(RatchetClient c) {
            // Every document has its guard, so the guards, listed in key order, name the documents.
            List<Item> guards = c.list(Document.guardKey(prefix), start, pageSize);
            List<CompletableFuture<Optional<Document>>> reads = guards.stream()
                    .map(g -> c.getDocumentAsync(g.key().substring(Limits.RESERVED_GUARD_PREFIX.length()))).toList();
            ObjectNode o = Output.object();
            ArrayNode array = o.putArray("documents");
            for (CompletableFuture<Optional<Document>> read : reads) {
                // A document deleted between the listing and its read is left out.
                RatchetClient.await(read).ifPresent(d -> {
                    ObjectNode doc = array.addObject();
                    doc.put("id", d.id());
                    doc.set("document", Output.json(d.json()));
                    doc.put("guardIndex", d.index());
                });
            }
            if (json()) {
                print(o);
            } else {
                array.forEach(d -> out().println(d.get("id").asText() + "\t" + d.get("guardIndex").asLong() + "\t"
                        + Output.write(d.get("document"))));
                out().flush();
            }
            return ExitCode.DONE;
        }
    }
}
