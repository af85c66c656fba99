package io.ratchet.client.backup;

import java.nio.file.Path;
import java.time.Instant;
import java.util.UUID;

/**
 * A backup saved to a file, verified whole.
 *
 * @param file      where it is
 * @param node      the node that wrote it
 * @param cluster   the cluster's name
 * @param clusterId the cluster's id (a cluster restored from the backup takes another)
 * @param term      the Raft term of the entry at {@code index}
 * @param index     the log index the state holds: every write acknowledged before the backup was asked for
 *                  is at or below it, and the state holds nothing above it
 * @param takenAt   when the node began it, by its clock
 * @param bytes     the file's size
 * @param sha256    the SHA-256 of the whole file, in hex, as {@code sha256sum} prints it
 */
public record SavedBackup(Path file, String node, String cluster, UUID clusterId, long term, long index, Instant takenAt,
                          long bytes, String sha256) {
}
