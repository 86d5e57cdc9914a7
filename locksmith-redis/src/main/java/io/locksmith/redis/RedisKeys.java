package io.locksmith.redis;

/**
 * Where a lock lives in Redis. All keys of one lock share a hash tag so that multi-key scripts work on
 * a Cluster: {@code <ns>:lock:{<name>}} plus {@code :waiters} and {@code :fence}. A name containing a
 * brace would break the tag, so such names are tagged by a digest of the name instead (the name still
 * follows, keeping keys readable and unique).
 */
final class RedisKeys {
  private final String lockPrefix;
  private final String channelPrefix;

  RedisKeys(String namespace) {
    this.lockPrefix = namespace + ":lock:";
    this.channelPrefix = namespace + ":wake:";
  }

  String lock(String name) {
    if (name.indexOf('{') < 0 && name.indexOf('}') < 0) {
      return lockPrefix + '{' + name + '}';
    }
    return lockPrefix + "{#" + RedisScript.sha1(name).substring(0, 16) + "}:" + name;
  }

  static String waiters(String lockKey) {
    return lockKey + ":waiters";
  }

  static String fence(String lockKey) {
    return lockKey + ":fence";
  }

  // ------------------------------------------------------------------ fair lock
  // <ns>:fair:{<name>} (hash, like the exclusive lock's) with :queue, :places and :fence beside it,
  // under the same hash tag as lock(name), so one slot holds the whole fair lock.

  String fairLock(String name) {
    return lockPrefix.substring(0, lockPrefix.length() - "lock:".length()) + "fair:"
        + lock(name).substring(lockPrefix.length());
  }

  static String fairQueue(String fairLockKey) {
    return fairLockKey + ":queue";
  }

  static String fairPlaces(String fairLockKey) {
    return fairLockKey + ":places";
  }

  static String fairFence(String fairLockKey) {
    return fairLockKey + ":fence";
  }
  // ---------------------------------------------------------------- semaphore

  /**
   * A semaphore's permit count, {@code <ns>:sem:{<name>}}, with the same hash tag as {@link #lock}; the
   * semaphore's other keys add {@code :holders}, {@code :tokens}, {@code :waiters} and {@code :fence}.
   */
  String semaphore(String name) {
    String lock = lock(name);
    return lockPrefix.substring(0, lockPrefix.length() - "lock:".length()) + "sem:"
        + lock.substring(lockPrefix.length());
  }

  static String semaphoreHolders(String semaphoreKey) {
    return semaphoreKey + ":holders";
  }

  static String semaphoreTokens(String semaphoreKey) {
    return semaphoreKey + ":tokens";
  }

  // ---------------------------------------------------------------- channels

  /**
   * The root of another lock kind's keys: {@code <ns>:<kind>:} followed by the same tag (and, for a name
   * with braces, the same digest and name) as {@link #lock(String)}, so every key of one lock built on it
   * lands in the lock's Cluster slot, and kinds never share keys.
   *
   * @param kind the kind's key prefix, e.g. {@code "rw"}
   * @param name the lock name
   */
  String tagged(String kind, String name) {
    String namespaceColon = lockPrefix.substring(0, lockPrefix.length() - "lock:".length());
    return namespaceColon + kind + ":" + lock(name).substring(lockPrefix.length());
  }

  // ---- read-write lock (RedisReadWriteOps): all keys of one lock under tagged("rw", name)

  /**
   * @param name the lock name
   * @return the keys of read-write lock {@code name}, in the order its scripts take them: writer hash,
   *     readers zset, reader holds hash, waiting writers, waiting readers, fence, last woken writer,
   *     waiting readers' tickets, write generation
   */
  String[] readWrite(String name) {
    String root = tagged("rw", name);
    return new String[] {root + ":w", root + ":r", root + ":rh", root + ":wq", root + ":rq",
        root + ":fence", root + ":woken", root + ":rt", root + ":gen"};
  }

  String channelPrefix() {
    return channelPrefix;
  }
}
