package io.locksmith.cli;

import io.locksmith.ClientOptions;
import io.locksmith.DistributedLock;
import io.locksmith.DistributedReadWriteLock;
import io.locksmith.LockClient;
import io.locksmith.LockInfo;
import io.locksmith.SemaphoreInfo;
import io.locksmith.redis.RedisLockClient;
import io.locksmith.redis.RedlockClient;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * {@code locksmith inspect} and {@code locksmith unlock}: who holds a lock of any kind, and the
 * operator's force-unlock, on a Redis server, Sentinel group or Cluster, or the exclusive lock of a
 * Redlock ({@code --nodes}: the holder a majority of nodes agrees on; unlock deletes it on every node).
 */
final class OperatorCommand {
  /** The {@code --kind} values, in the order the usage lists them. */
  static final List<String> KINDS = List.of("lock", "fair", "read-write", "semaphore");

  private OperatorCommand() {}

  static int run(String command, Args args, PrintStream out) {
    String uri = args.get("uri", null);
    String nodes = args.get("nodes", null);
    if ((uri == null) == (nodes == null) || args.positional().size() != 1) {
      throw new Args.UsageException(command + " needs --uri (or --nodes for Redlock) and exactly one lock NAME");
    }
    String kind = args.get("kind", "lock");
    if (!KINDS.contains(kind)) {
      throw new Args.UsageException("--kind must be one of " + String.join(", ", KINDS) + ", was '" + kind + "'");
    }
    if (nodes != null && !kind.equals("lock")) {
      throw new Args.UsageException("Redlock (--nodes) has the exclusive lock only, not --kind " + kind);
    }
    String side = args.get("side", null);
    boolean sided = command.equals("unlock") && kind.equals("read-write");
    if (sided && side == null) {
      throw new Args.UsageException("unlock --kind read-write needs --side write or --side read: each side "
          + "is removed on its own, since removing one may let a waiter of the other in");
    }
    if (!sided && side != null) {
      throw new Args.UsageException("--side applies to unlock --kind read-write only");
    }
    if (side != null && !side.equals("write") && !side.equals("read")) {
      throw new Args.UsageException("--side must be write or read, was '" + side + "'");
    }
    String name = args.positional().get(0);
    ClientOptions options = ClientOptions.builder()
        .namespace(args.get("namespace", ClientOptions.DEFAULT_NAMESPACE)).build();
    try (LockClient client = nodes != null
        ? RedlockClient.builder().nodes(Arrays.stream(nodes.split(",")).map(String::trim).toList()).options(options)
            .build()
        : RedisLockClient.builder().uri(uri).options(options).build()) {
      if (command.equals("unlock")) {
        unlock(client, kind, side, name, out);
      } else {
        inspect(client, kind, name, out);
      }
      return 0;
    }
  }

  private static void unlock(LockClient client, String kind, String side, String name, PrintStream out) {
    boolean deleted = switch (kind) {
      case "fair" -> client.fairLock(name).forceUnlock();
      // one side per call, each removed atomically; both at once would need one script for both
      case "read-write" -> (side.equals("write") ? client.readWriteLock(name).writeLock()
          : client.readWriteLock(name).readLock()).forceUnlock();
      // the count declared here is never stored: force-unlock keeps the stored count
      case "semaphore" -> client.semaphore(name, 1).forceUnlock();
      default -> client.lock(name).forceUnlock();
    };
    String what = kind.equals("read-write") ? (side.equals("write") ? "writer of" : "readers of") : kind;
    out.println(deleted ? "unlocked " + what + " '" + name + "'" : what + " '" + name + "' was not held");
  }

  private static void inspect(LockClient client, String kind, String name, PrintStream out) {
    switch (kind) {
      case "fair" -> printHolder("fair lock", name, client.fairLock(name), false, out);
      case "read-write" -> {
        DistributedReadWriteLock rw = client.readWriteLock(name);
        printHolder("writer of", name, rw.writeLock(), false, out);
        printHolder("readers of", name, rw.readLock(), true, out);
      }
      case "semaphore" -> {
        // describe() reports the stored count, or the declared one when none is stored: declaring 1 and
        // then 2 tells a stored 1 from none
        SemaphoreInfo info = client.semaphore(name, 1).describe();
        boolean stored = info.permits() != 1 || client.semaphore(name, 2).describe().permits() == 1;
        out.printf("semaphore %s%npermits   %s%ntaken     %d%navailable %s%nwaiters   %d%n", info.name(),
            stored ? Integer.toString(info.permits()) : "none stored yet (the first acquisition stores its count)",
            info.taken(), stored ? Integer.toString(info.available()) : "-", info.waiters());
      }
      default -> printHolder("lock", name, client.lock(name), false, out);
    }
  }

  /** @param readers the read side: the owner shown is one of the readers, the holds are all readers' */
  private static void printHolder(String what, String name, DistributedLock lock, boolean readers,
      PrintStream out) {
    Optional<LockInfo> info = lock.inspect();
    if (info.isEmpty()) {
      out.println(what + " '" + name + "' is free");
      return;
    }
    LockInfo i = info.get();
    out.printf("%s '%s'%nowner     %s%s%nholds     %d%s%nttl       %d ms%ntoken     %d%nwaiters   %d%n", what,
        i.name(), i.owner(), readers ? " (one of the readers)" : "", i.holdCount(),
        readers ? " (all readers)" : "", i.remainingTtl().toMillis(), i.fencingToken(), i.waiters());
  }
}
