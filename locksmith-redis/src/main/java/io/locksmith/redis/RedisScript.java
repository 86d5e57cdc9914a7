package io.locksmith.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** A Lua script shipped as a resource, with its SHA-1 digest for {@code EVALSHA}. */
final class RedisScript {
  // the exclusive lock: one string key per lock (lock-value.lua)
  // acquire-fast.lua and release-fast.lua come first: their fast path returns before any prelude function
  // is created (each closure costs the server on every run that reaches it)
  // the acquire script is per client (acquire(...)): its constant settings are in its text, not its arguments
  static final RedisScript RELEASE = loadWith("release.lua", "release-fast.lua", "wake-next.lua", "lock-value.lua");
  static final RedisScript RELEASE_HANDOFF = loadWith("release-handoff.lua", "lock-value.lua", "mint-token.lua");
  static final RedisScript RENEW_LOCK = loadWith("renew-lock.lua", "lock-value.lua");
  static final RedisScript FORCE_UNLOCK =
      loadWith("force-unlock.lua", "wake-next.lua", "evict-notice.lua", "lock-value.lua");
  static final RedisScript PASS_WAKEUP = loadWith("pass-wakeup.lua", "wake-next.lua", "lock-value.lua");
  static final RedisScript INSPECT = loadWith("inspect.lua", "lock-value.lua");
  static final RedisScript RAISE_FENCE = loadWith("raise-fence.lua", "lock-value.lua");
  // a fair lock's or a read-write lock's writer hash (holds.lua)
  static final RedisScript RENEW = load("renew.lua", false);
  // the fair lock's scripts; all but the inspection share the fair-queue.lua prelude
  static final RedisScript FAIR_ACQUIRE = loadWith("fair-acquire.lua", "fair-queue.lua", "holds.lua");
  static final RedisScript FAIR_RELEASE = loadWith("fair-release.lua", "fair-queue.lua", "holds.lua");
  static final RedisScript FAIR_FORCE_UNLOCK = loadWith("fair-force-unlock.lua", "fair-queue.lua", "evict-notice.lua");
  static final RedisScript FAIR_PASS_WAKEUP = fair("fair-pass-wakeup.lua");
  static final RedisScript FAIR_CANCEL = fair("fair-cancel.lua");
  static final RedisScript FAIR_INSPECT = new RedisScript("fair-inspect.lua", read("fair-inspect.lua"));
  // semaphore: each script starts with the wake-up prelude and the semaphore prelude
  static final RedisScript SEM_ACQUIRE = semaphore("sem-acquire.lua");
  static final RedisScript SEM_RELEASE = semaphore("sem-release.lua");
  static final RedisScript SEM_RENEW = semaphore("sem-renew.lua");
  static final RedisScript SEM_SET_PERMITS = semaphore("sem-set-permits.lua");
  static final RedisScript SEM_DESCRIBE = semaphore("sem-describe.lua");
  static final RedisScript SEM_INSPECT = semaphore("sem-inspect.lua");
  static final RedisScript SEM_STATE = semaphore("sem-state.lua");
  static final RedisScript SEM_FORCE_UNLOCK =
      loadWith("sem-force-unlock.lua", "wake-next.lua", "sem-prelude.lua", "evict-notice.lua");
  static final RedisScript SEM_PASS_WAKEUP = semaphore("sem-pass-wakeup.lua");
  // read-write lock (RedisReadWriteOps): each script is rw-prelude.lua + its own text
  static final RedisScript RW_ACQUIRE_READ = loadWith("rw-acquire-read.lua", "rw-prelude.lua");
  static final RedisScript RW_ACQUIRE_WRITE = loadWith("rw-acquire-write.lua", "rw-prelude.lua", "holds.lua");
  static final RedisScript RW_RELEASE_READ = loadWith("rw-release-read.lua", "rw-prelude.lua");
  static final RedisScript RW_RELEASE_WRITE = loadWith("rw-release-write.lua", "rw-prelude.lua", "holds.lua");
  static final RedisScript RW_RENEW_READ = load("rw-renew-read.lua", false);
  static final RedisScript RW_CANCEL_WAIT = loadWith("rw-cancel-wait.lua", "rw-prelude.lua");
  static final RedisScript RW_PASS_WAKEUP = loadWith("rw-pass-wakeup.lua", "rw-prelude.lua");
  static final RedisScript RW_INSPECT = loadWith("rw-inspect.lua", "rw-prelude.lua");
  static final RedisScript RW_FORCE_UNLOCK = loadWith("rw-force-unlock.lua", "rw-prelude.lua", "evict-notice.lua");
  static final RedisScript[] ALL =
      {RELEASE, RELEASE_HANDOFF, RENEW_LOCK, RENEW, FORCE_UNLOCK, PASS_WAKEUP, INSPECT, RAISE_FENCE,
          FAIR_ACQUIRE, FAIR_RELEASE, FAIR_FORCE_UNLOCK, FAIR_PASS_WAKEUP, FAIR_CANCEL, FAIR_INSPECT,
          SEM_ACQUIRE, SEM_RELEASE, SEM_RENEW, SEM_SET_PERMITS, SEM_DESCRIBE, SEM_INSPECT, SEM_STATE, SEM_FORCE_UNLOCK,
          SEM_PASS_WAKEUP,
          RW_ACQUIRE_READ, RW_ACQUIRE_WRITE, RW_RELEASE_READ, RW_RELEASE_WRITE, RW_RENEW_READ,
          RW_CANCEL_WAIT, RW_PASS_WAKEUP, RW_INSPECT, RW_FORCE_UNLOCK};

  final String name;
  final String text;
  final String sha;

  private RedisScript(String name, String text) {
    this.name = name;
    this.text = text;
    this.sha = sha1(text);
  }

  private static RedisScript load(String resource, boolean wakes) {
    String text = read(resource);
    if (wakes) {
      text = read("wake-next.lua") + "\n" + text;
    }
    return new RedisScript(resource, text);
  }

  private static RedisScript fair(String resource) {
    return loadWith(resource, "fair-queue.lua");
  }

  private static RedisScript semaphore(String resource) {
    return loadWith(resource, "wake-next.lua", "sem-prelude.lua");
  }

  /**
   * The exclusive lock's acquire script for one client's settings: a header of constants (the waiter
   * backstop, the fence retention, the token rule) and acquire.lua, so a call carries one key and four
   * arguments rather than three and seven (each costs the server on every call). Clients with equal settings
   * (a Redlock's nodes) get the same text and digest. The fast path (acquire-fast.lua) is included only
   * under the time-floored rule: Redlock's counter rule must not mint a token without a grant.
   */
  static RedisScript acquire(long waiterRecheckMillis, long fenceRetentionMillis, boolean timeFloored) {
    StringBuilder text = new StringBuilder("local RECHECK, RETENTION, RULE = ").append(waiterRecheckMillis)
        .append(", '").append(fenceRetentionMillis).append("', '").append(timeFloored ? 't' : 'c').append("'\n");
    if (timeFloored) {
      text.append(read("acquire-fast.lua")).append('\n');
    }
    text.append(read("lock-value.lua")).append('\n').append(read("mint-token.lua")).append('\n')
        .append(read("acquire.lua"));
    return new RedisScript("acquire.lua", text.toString());
  }

  /** A script with preludes of shared functions prepended, in order. */
  private static RedisScript loadWith(String resource, String... preludes) {
    StringBuilder text = new StringBuilder();
    for (String prelude : preludes) {
      text.append(read(prelude)).append('\n');
    }
    return new RedisScript(resource, text.append(read(resource)).toString());
  }

  private static String read(String resource) {
    try (InputStream in = RedisScript.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("script resource missing: " + resource);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read script resource " + resource, e);
    }
  }

  static String sha1(String text) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-1");
      return HexFormat.of().formatHex(md.digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required of every JVM", e);
    }
  }

  @Override
  public String toString() {
    return name + "@" + sha.substring(0, 8);
  }
}
