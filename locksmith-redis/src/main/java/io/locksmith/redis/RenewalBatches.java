package io.locksmith.redis;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.SlotHash;
import io.locksmith.spi.RenewRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * Renewal batching for every Redis lock kind: many leases in few script calls, each call's keys in one
 * Cluster slot. Stateless and thread-safe; the calls go through {@link RedisBackend#run}, so a failure is
 * translated there ({@link RedisExceptions}).
 */
final class RenewalBatches {
  /** Keys per renewal script call: keeps one call short on the server's single thread. */
  static final int RENEW_CHUNK = 256;

  private RenewalBatches() {}

  /**
   * Renews leases of any lock kind: one call of {@code script} per batch, each batch's keys in one slot.
   * The script takes {@code keysOf(request)} for each request, in order, and ARGV pairs of owner and
   * lease ms, and answers 1 (extended) or 0 (not owned) per request.
   *
   * @param keysOf the script keys of one request, all under its lock's hash tag
   */
  static CompletionStage<List<Boolean>> renew(RedisBackend backend, boolean cluster, RedisScript script, String what,
      List<RenewRequest> requests, Function<RenewRequest, String[]> keysOf) {
    Boolean[] renewed = new Boolean[requests.size()];
    List<String[]> requestKeys = new ArrayList<>(requests.size());
    for (RenewRequest r : requests) {
      requestKeys.add(keysOf.apply(r));
    }
    List<CompletableFuture<Throwable>> parts = new ArrayList<>();
    for (int[] batch : batches(requestKeys, cluster)) {
      List<String> scriptKeys = new ArrayList<>();
      String[] args = new String[batch.length * 2];
      for (int i = 0; i < batch.length; i++) {
        RenewRequest r = requests.get(batch[i]);
        scriptKeys.addAll(Arrays.asList(requestKeys.get(batch[i])));
        args[2 * i] = r.owner();
        args[2 * i + 1] = Long.toString(r.leaseMillis());
      }
      CompletionStage<List<Object>> reply = backend.run(script, ScriptOutputType.MULTI,
          "renew " + batch.length + " " + what, scriptKeys.toArray(new String[0]), args);
      // A batch that fails leaves its leases unknown (null): on a Cluster the other batches went to
      // other masters, whose answers stand. Only when every batch failed does the whole call fail.
      parts.add(reply.handle((r, failure) -> {
        if (failure != null) {
          return failure;
        }
        for (int i = 0; i < batch.length; i++) {
          renewed[batch[i]] = ((Long) r.get(i)) == 1L;
        }
        return null;
      }).toCompletableFuture());
    }
    return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0])).thenCompose(v -> {
      Throwable firstFailure = parts.isEmpty() ? null : parts.get(0).join();
      boolean allFailed = parts.stream().allMatch(part -> part.join() != null);
      return allFailed && firstFailure != null ? CompletableFuture.<List<Boolean>>failedFuture(firstFailure)
          : CompletableFuture.completedFuture(Arrays.asList(renewed));
    });
  }

  /** Indexes into the requests, grouped into script calls (see {@link #renew}). */
  private static List<int[]> batches(List<String[]> requestKeys, boolean cluster) {
    List<int[]> batches = new ArrayList<>();
    if (!cluster) {
      for (int from = 0; from < requestKeys.size(); from += RENEW_CHUNK) {
        int[] batch = new int[Math.min(requestKeys.size() - from, RENEW_CHUNK)];
        for (int i = 0; i < batch.length; i++) {
          batch[i] = from + i;
        }
        batches.add(batch);
      }
      return batches;
    }
    Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
    for (int i = 0; i < requestKeys.size(); i++) {
      bySlot.computeIfAbsent(SlotHash.getSlot(requestKeys.get(i)[0]), slot -> new ArrayList<>()).add(i);
    }
    for (List<Integer> slot : bySlot.values()) {
      for (int from = 0; from < slot.size(); from += RENEW_CHUNK) {
        batches.add(slot.subList(from, Math.min(slot.size(), from + RENEW_CHUNK)).stream()
            .mapToInt(Integer::intValue).toArray());
      }
    }
    return batches;
  }
}
