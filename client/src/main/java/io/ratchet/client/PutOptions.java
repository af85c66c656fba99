package io.ratchet.client;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Expiry;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * How a put is written besides its key, value and index: when the item expires (a time to live judged
 * on cluster time, or an instant), its metadata, and whether an item that has expired counts as absent
 * for a create. Immutable; start from {@link #none()}:
 *
 * <pre>{@code
 * client.put("sessions/42", session, 0, PutOptions.none().ttl(Duration.ofMinutes(30)));
 * }</pre>
 */
public final class PutOptions {
    private static final PutOptions NONE = new PutOptions(null, null, null, false);

    private final Duration ttl;
    private final Instant expiresAt;
    private final Object metadata;
    private final boolean expiredCountsAsAbsent;

    private PutOptions(Duration ttl, Instant expiresAt, Object metadata, boolean expiredCountsAsAbsent) {
        this.ttl = ttl;
        this.expiresAt = expiresAt;
        this.metadata = metadata;
        this.expiredCountsAsAbsent = expiredCountsAsAbsent;
    }

    /** A plain put: no expiry, no metadata. */
    public static PutOptions none() {
        return NONE;
    }

    /**
     * The item expires this long after the write's cluster time; a put at an index with a ttl renews
     * it, and is refused once the item has expired. Not with {@link #expiresAt}.
     */
    public PutOptions ttl(Duration ttl) {
        return new PutOptions(Objects.requireNonNull(ttl, "ttl"), expiresAt, metadata, expiredCountsAsAbsent);
    }

    /** The item expires at this instant, judged on cluster time (stored as {@code @expires}). Not with {@link #ttl}. */
    public PutOptions expiresAt(Instant instant) {
        return new PutOptions(ttl, Objects.requireNonNull(instant, "instant"), metadata, expiredCountsAsAbsent);
    }

    /** Metadata: an object Jackson writes as a JSON object, or {@link io.ratchet.protocol.JsonText}. */
    public PutOptions metadata(Object metadata) {
        return new PutOptions(ttl, expiresAt, Objects.requireNonNull(metadata, "metadata"), expiredCountsAsAbsent);
    }

    /**
     * With index 0: an item that has expired at cluster time counts as absent and is replaced. This is how
     * a lock is taken over from a holder whose lease ran out.
     */
    public PutOptions expiredCountsAsAbsent() {
        return new PutOptions(ttl, expiresAt, metadata, true);
    }

    /**
     * The protocol's put for {@code value} (JSON text already written) under these options: for a
     * transaction's operations, or a write sent with an idempotency key.
     *
     * @throws InvalidCommandException for options that cannot go together or are out of range
     */
    public Command.Put toCommand(String key, String value, long index) {
        String metadataJson = metadata == null ? null : Json.write(metadata);
        long ttlMillis = 0;
        if (ttl != null) {
            if (ttl.isNegative() || ttl.isZero()) {
                throw new InvalidCommandException("ttl must be above 0, not " + ttl);
            }
            if (expiresAt != null) {
                throw new InvalidCommandException("give a ttl or an expiry instant, not both");
            }
            ttlMillis = ttl.toMillis();
        }
        if (expiresAt != null) {
            if (Expiry.fromMetadata(Json.validateMetadata(metadataJson)) != 0) {
                throw new InvalidCommandException("give an expiry instant or an " + Expiry.FIELD + " in the metadata, not both");
            }
            try {
                metadataJson = Expiry.withExpiry(metadataJson, expiresAt.toEpochMilli());
            } catch (ArithmeticException e) {
                throw new InvalidCommandException("expiry instant " + expiresAt + " is out of range");
            }
        }
        return new Command.Put(key, value, index, metadataJson, ttlMillis, expiredCountsAsAbsent);
    }

    @Override
    public String toString() {
        return "PutOptions[ttl=" + ttl + ", expiresAt=" + expiresAt + ", metadata=" + metadata
                + ", expiredCountsAsAbsent=" + expiredCountsAsAbsent + "]";
    }
}
