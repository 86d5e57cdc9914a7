package io.locksmith.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** A Lua script shipped as a resource, with its SHA-1 digest for {@code EVALSHA}. */
final class RedisScript {
  static final RedisScript ACQUIRE = load("acquire.lua", false);
  static final RedisScript RELEASE = load("release.lua", true);
  static final RedisScript RENEW = load("renew.lua", false);
  static final RedisScript FORCE_UNLOCK = load("force-unlock.lua", true);
  static final RedisScript PASS_WAKEUP = load("pass-wakeup.lua", true);
  static final RedisScript INSPECT = load("inspect.lua", false);
  static final RedisScript RAISE_FENCE = load("raise-fence.lua", false);
  // read-write lock (RedisReadWriteOps): each script is rw-prelude.lua + its own text
  static final RedisScript RW_ACQUIRE_READ = loadWith("rw-prelude.lua", "rw-acquire-read.lua");
  static final RedisScript RW_ACQUIRE_WRITE = loadWith("rw-prelude.lua", "rw-acquire-write.lua");
  static final RedisScript RW_RELEASE_READ = loadWith("rw-prelude.lua", "rw-release-read.lua");
  static final RedisScript RW_RELEASE_WRITE = loadWith("rw-prelude.lua", "rw-release-write.lua");
  static final RedisScript RW_RENEW_READ = load("rw-renew-read.lua", false);
  static final RedisScript RW_CANCEL_WAIT = loadWith("rw-prelude.lua", "rw-cancel-wait.lua");
  static final RedisScript RW_PASS_WAKEUP = loadWith("rw-prelude.lua", "rw-pass-wakeup.lua");
  static final RedisScript RW_INSPECT = loadWith("rw-prelude.lua", "rw-inspect.lua");
  static final RedisScript RW_FORCE_UNLOCK = loadWith("rw-prelude.lua", "rw-force-unlock.lua");
  static final RedisScript[] ALL =
      {ACQUIRE, RELEASE, RENEW, FORCE_UNLOCK, PASS_WAKEUP, INSPECT, RAISE_FENCE,
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

  /** A script with a prelude of shared functions prepended. */
  private static RedisScript loadWith(String prelude, String resource) {
    return new RedisScript(resource, read(prelude) + "\n" + read(resource));
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
