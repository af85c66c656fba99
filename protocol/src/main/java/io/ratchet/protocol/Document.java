package io.ratchet.protocol;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A JSON document by id, kept beside the compare-exchange items. Its {@code index} is the index of its
 * Atomic Guard {@code rvn-atomic/<id>}, which every write of the document moves in the same entry.
 *
 * @param id   the id as first written (ids compare case-insensitively)
 * @param json compact JSON object text
 */
public record Document(String id, String json, long index) {

    public static String guardKey(String id) {
        return Limits.RESERVED_GUARD_PREFIX + id;
    }

    /** The document as a JSON tree. */
    public JsonNode node() {
        return Json.parse(json);
    }
}
