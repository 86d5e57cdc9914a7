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

  String channelPrefix() {
    return channelPrefix;
  }
}
