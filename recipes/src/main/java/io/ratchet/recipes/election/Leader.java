package io.ratchet.recipes.election;

/**
 * Who leads an election, as one observation saw it.
 *
 * @param name  the election's name
 * @param owner the leading candidate's owner id
 * @param term  its term: the fencing token of its leadership, greater than every earlier term
 */
public record Leader(String name, String owner, long term) {
}
