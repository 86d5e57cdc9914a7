package io.locksmith.redis;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.locksmith.BackendUnavailableException;
import io.locksmith.LockKind;
import io.locksmith.LockScan.End;
import io.locksmith.LockScan.Found;
import io.locksmith.LockScan.Result;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Finds the locks stored under a {@link RedisLockClient}'s namespace by walking the server's keys with
 * {@code SCAN}: for operator tools ({@code locksmith list}, {@code locksmith inspect}), not for
 * applications, which know their lock names.
 *
 * <p><b>What it reports.</b> A lock is <em>found</em> when a key of it exists that only lives while the
 * lock is held or waited for: the exclusive or fair lock's hash, its waiters or queue, a read-write
 * lock's writer, readers or waiting sets, a semaphore's holders or waiters. A retained fencing token
 * ({@code :fence}, kept for {@link RedisLockClient.Builder#fenceRetention(Duration)} after the last grant),
 * a read-write lock's write generation ({@code :gen}, kept for a write lease after the grant) and a
 * semaphore's stored permit count (kept without TTL) are counted as Locksmith keys but do not make their
 * name found. Whether a found lock is still held must be read with the lock's own {@code inspect}
 * or {@code describe}: a key may expire between the walk and that read.
 *
 * <p><b>Cost and bounds.</b> {@code SCAN} walks the whole keyspace in batches (here up to 1,000 keys a
 * call), not only the namespace, and never blocks the server for long; on a large database a walk takes
 * many round trips. Every walk therefore stops at a number of found locks or at a time budget, whichever
 * comes first, and says which ({@link End}). Keys present for the whole walk are seen; keys created or
 * deleted during it may or may not be (SCAN's guarantee).
 *
 * <p><b>Where it walks.</b> One node: that node. Sentinel: the current master. Cluster: every master, one
 * after the other (Lettuce's cluster-wide {@code SCAN}). A Redlock is N independent nodes: walk each with
 * a {@link RedisLockClient} of its own on the same namespace.
 *
 * <p>Stateless and thread-safe; the walks run on the client's command connection.
 */
public final class RedisLockScan {
  /** Keys asked per SCAN call: large enough for few round trips, small enough for a short server step. */
  static final int BATCH = 1000;

  /** The key prefix of each kind, as {@link RedisKeys} lays them out. */
  private static final List<KindPrefix> PREFIXES = List.of(new KindPrefix(LockKind.EXCLUSIVE, "lock"),
      new KindPrefix(LockKind.FAIR, "fair"), new KindPrefix(LockKind.READ_WRITE, "rw"),
      new KindPrefix(LockKind.SEMAPHORE, "sem"));

  private record KindPrefix(LockKind kind, String prefix) {}

  private RedisLockScan() {}

  /**
   * Walks the keys of the client's namespace and returns the locks that are held or waited for.
   *
   * @param client the client whose server and namespace to walk
   * @param limit the most locks to find, at least 1; the walk stops when one more would be found
   * @param budget the longest the walk may take, positive
   * @return the locks found, with how the walk ended
   * @throws NullPointerException if {@code client} or {@code budget} is null
   * @throws IllegalArgumentException if {@code limit} is below 1 or {@code budget} is not positive
   * @throws BackendUnavailableException if the server cannot be reached or does not answer a SCAN
   *     within the command timeout, or the calling thread is interrupted (its flag is set again)
   * @throws io.locksmith.LockException if the server refuses SCAN (e.g. an ACL without it)
   */
  public static Result locks(RedisLockClient client, int limit, Duration budget) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, was " + limit);
    }
    return walk(client, limit, budget, false);
  }

  /**
   * Walks until the first Locksmith key of the client's namespace, of any lock, held or not (a retained
   * fencing token counts): tells an empty or mistyped namespace from one in use.
   *
   * @param client the client whose server and namespace to walk
   * @param budget the longest the walk may take, positive
   * @return {@link Result#traces()} 1 and {@link End#LIMIT_REACHED} if a key was found, 0 and
   *     {@link End#FINISHED} if the namespace has none, 0 and {@link End#OUT_OF_TIME} if the budget ran out
   *     first; {@link Result#locks()} is empty
   * @throws NullPointerException if {@code client} or {@code budget} is null
   * @throws IllegalArgumentException if {@code budget} is not positive
   * @throws BackendUnavailableException as for {@link #locks}
   * @throws io.locksmith.LockException as for {@link #locks}
   */
  public static Result anyKey(RedisLockClient client, Duration budget) {
    return walk(client, 0, budget, true);
  }

  private static Result walk(RedisLockClient client, int limit, Duration budget, boolean firstKey) {
    Objects.requireNonNull(client, "client");
    Objects.requireNonNull(budget, "budget");
    if (budget.isNegative() || budget.isZero()) {
      throw new IllegalArgumentException("budget must be positive, was " + budget);
    }
    String namespace = client.options().namespace();
    RedisKeys keys = client.backend.keys();
    String what = "scan the keys of namespace '" + namespace + "'";
    RedisClusterAsyncCommands<String, String> commands = client.backend.commands(what);
    ScanArgs args = ScanArgs.Builder.matches(globEscape(namespace) + ":*").limit(BATCH);
    long deadline = System.nanoTime() + budget.toNanos();
    Set<Found> found = new LinkedHashSet<>();
    long lockKeys = 0;
    KeyScanCursor<String> cursor = null;
    do {
      Optional<KeyScanCursor<String>> next = await(cursor == null ? commands.scan(args)
          : commands.scan(cursor, args), deadline, what);
      if (next.isEmpty()) {
        return result(found, lockKeys, End.OUT_OF_TIME);
      }
      cursor = next.get();
      for (String key : cursor.getKeys()) {
        Optional<ParsedKey> parsed = parse(keys, namespace, key);
        if (parsed.isEmpty()) {
          continue;
        }
        lockKeys++;
        if (firstKey) {
          return result(found, lockKeys, End.LIMIT_REACHED);
        }
        ParsedKey p = parsed.get();
        if (p.marksActivity()) {
          Found f = new Found(p.kind(), p.name());
          if (!found.contains(f) && found.size() == limit) {
            return result(found, lockKeys, End.LIMIT_REACHED);
          }
          found.add(f);
        }
      }
    } while (!cursor.isFinished());
    return result(found, lockKeys, End.FINISHED);
  }

  private static Result result(Set<Found> found, long lockKeys, End end) {
    return Result.sorted(found, lockKeys, end);
  }

  /** @return the reply, or empty if the deadline passed first */
  private static <T> Optional<T> await(RedisFuture<T> future, long deadline, String what) {
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      future.cancel(false);
      return Optional.empty();
    }
    try {
      return Optional.of(future.get(left, TimeUnit.NANOSECONDS));
    } catch (TimeoutException e) {
      future.cancel(false);
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BackendUnavailableException("interrupted, could not " + what, e);
    } catch (ExecutionException e) {
      throw RedisExceptions.translate(e, what);
    }
  }

  /**
   * A key of one lock: its kind, name and what follows the lock's root key ({@code ""} for the root
   * itself, e.g. {@code "fence"} or {@code "waiters"}).
   */
  record ParsedKey(LockKind kind, String name, String suffix) {
    /** Whether this key exists only while the lock is held or waited for (see the class comment). */
    boolean marksActivity() {
      return !suffix.equals("fence") && !(kind == LockKind.SEMAPHORE && suffix.isEmpty())
          && !(kind == LockKind.READ_WRITE && suffix.equals("gen"));
    }
  }

  /**
   * Reads a key back into the lock it belongs to. Each candidate name is checked by laying out its keys
   * again with {@code keys}, so only a key that {@link RedisKeys} writes for that name is accepted; for
   * a name with braces (digest tag, {@code {#digest}:name[:suffix]}) this also decides where the name
   * ends, since the name may itself contain colons.
   *
   * @return the lock, or empty if the key is not one of Locksmith's under this namespace
   */
  static Optional<ParsedKey> parse(RedisKeys keys, String namespace, String key) {
    String namespaceColon = namespace + ":";
    if (!key.startsWith(namespaceColon)) {
      return Optional.empty();
    }
    String rest = key.substring(namespaceColon.length());
    for (KindPrefix k : PREFIXES) {
      if (!rest.startsWith(k.prefix() + ":{")) {
        continue;
      }
      String tagged = rest.substring(k.prefix().length() + 1);
      int close = tagged.indexOf('}');
      if (close < 0) {
        return Optional.empty();
      }
      // a name with braces: the digest tag, then the name, then maybe a suffix; checked first, since the
      // digest tag alone would also read as a name without braces that starts with '#'
      List<String> candidates = new ArrayList<>();
      if (tagged.startsWith("{#") && tagged.startsWith(":", close + 1)) {
        String nameAndSuffix = tagged.substring(close + 2);
        candidates.add(nameAndSuffix);
        for (int colon = nameAndSuffix.lastIndexOf(':'); colon > 0;
            colon = nameAndSuffix.lastIndexOf(':', colon - 1)) {
          candidates.add(nameAndSuffix.substring(0, colon));
        }
      }
      candidates.add(tagged.substring(1, close)); // a name without braces is the tag itself
      for (String name : candidates) {
        if (!name.isEmpty() && keysOf(keys, k.kind(), name).contains(key)) {
          String root = keys.tagged(k.prefix(), name);
          return Optional.of(new ParsedKey(k.kind(), name,
              key.length() == root.length() ? "" : key.substring(root.length() + 1)));
        }
      }
      return Optional.empty();
    }
    return Optional.empty();
  }

  /** Every key {@link RedisKeys} lays out for lock {@code name} of {@code kind}. */
  private static List<String> keysOf(RedisKeys keys, LockKind kind, String name) {
    switch (kind) {
      case EXCLUSIVE: {
        String lock = keys.lock(name);
        return List.of(lock, RedisKeys.waiters(lock), RedisKeys.fence(lock));
      }
      case FAIR: {
        String fair = keys.fairLock(name);
        return List.of(fair, RedisKeys.fairQueue(fair), RedisKeys.fairPlaces(fair), RedisKeys.fairFence(fair));
      }
      case SEMAPHORE: {
        String sem = keys.semaphore(name);
        return List.of(sem, RedisKeys.semaphoreHolders(sem), RedisKeys.semaphoreTokens(sem),
            RedisKeys.waiters(sem), RedisKeys.fence(sem));
      }
      default:
        return List.of(keys.readWrite(name));
    }
  }

  /** {@code s} as a SCAN {@code MATCH} pattern that matches only itself. */
  static String globEscape(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
        b.append('\\');
      }
      b.append(c);
    }
    return b.toString();
  }
}
