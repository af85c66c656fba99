package io.ratchet.microbench;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * The binary codec on the write path's messages: a client's requests message (encoded once per
 * request and joined, as group commit does), the leader's log entry, and the results of an entry.
 */
public class CodecBenchmark extends Microbenchmark {
    @Param({"1", "16"})
    public int requests;

    private List<Request> batch;
    private byte[] requestsMessage;
    private byte[] entry;
    private List<Result> results;
    private byte[] resultsMessage;

    @Setup
    public void build() {
        batch = new ArrayList<>();
        results = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            String key = "emails/user" + i + "@example.com";
            batch.add(Request.of(List.of(new Command.Put(key, "{\"user\":\"users/" + i + "\"}", 0, null))));
            results.add(new Result.Write(true, key, new Item(key, "{\"user\":\"users/" + i + "\"}", 77, 77, 0, null)));
        }
        requestsMessage = Codec.encodeRequests(batch);
        entry = Codec.encodeEntry(Entry.untagged(1_700_000_000_000L, batch));
        resultsMessage = Codec.encodeResults(results);
    }

    @Benchmark
    public byte[] encodeRequestsOneByOneAndJoin() {
        List<byte[]> encoded = new ArrayList<>(batch.size());
        for (Request r : batch) {
            encoded.add(Codec.encodeRequest(r));
        }
        return Codec.joinRequests(encoded);
    }

    @Benchmark
    public List<Request> decodeRequests() {
        return Codec.decodeRequests(requestsMessage);
    }

    /** What the leader does to a client's message before appending it (decode, validate, stamp, encode). */
    @Benchmark
    public byte[] leaderStampsEntry() {
        List<Request> decoded = Codec.decodeRequests(requestsMessage);
        decoded.forEach(Request::validate);
        return Codec.encodeEntry(Entry.untagged(1_700_000_000_000L, decoded));
    }

    @Benchmark
    public Entry decodeEntry() {
        return Codec.decodeEntry(entry);
    }

    @Benchmark
    public byte[] encodeResults() {
        return Codec.encodeResults(results);
    }

    @Benchmark
    public List<Result> decodeResults() {
        return Codec.decodeResults(resultsMessage);
    }
}
