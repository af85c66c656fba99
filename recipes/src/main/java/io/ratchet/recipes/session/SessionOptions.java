package io.ratchet.recipes.session;

/**
 * How a {@link ClusterSession} guards its unit of work.
 *
 * @param validateReads false (the default, as in RavenDB): a save is conditioned on the documents and
 *                      items it <em>writes</em>; what the session only read is not re-checked, so a
 *                      save can commit although a document it merely looked at has changed since.
 *                      true: every document and item the session read is re-checked in the same
 *                      transaction (a check-only op at the index it was read at), so the save commits
 *                      only if nothing it read or writes has moved: the unit of work is serializable
 *                      (no write skew), at the cost of more conflicts and bigger transactions
 */
public record SessionOptions(boolean validateReads) {

    /** Writes are guarded, reads are not. */
    public static SessionOptions defaults() {
        return new SessionOptions(false);
    }

    /** Reads are validated too. */
    public SessionOptions withReadValidation() {
        return new SessionOptions(true);
    }
}
