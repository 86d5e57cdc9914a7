package io.locksmith.cli;

import io.locksmith.ClientOptions;
import io.locksmith.DistributedLock;
import io.locksmith.DistributedReadWriteLock;
import io.locksmith.LockClient;
import io.locksmith.LockInfo;
import io.locksmith.SemaphoreInfo;
import io.locksmith.redis.RedisLockClient;
import java.io.PrintStream;
import java.util.List;
import java.util.Optional;

/**
 * {@code locksmith inspect} and {@code locksmith unlock}: who holds a lock of any kind, and the
 * operator's force-unlock, on a Redis server, Sentinel group or Cluster.
 */
final class OperatorCommand {
  /** The {@code --kind} values, in the order the usage lists them. */
  static final List<String> KINDS = List.of("lock", "fair", "read-write", "semaphore");

  private OperatorCommand() {}

  static int run(String command, Args args, PrintStream out) {
    String uri = args.get("uri", null);
    if (uri == null || args.positional().size() != 1) {
      throw new Args.UsageException(command + " needs --uri and exactly one lock NAME");
    }
    String kind = args.get("kind", "lock");
    if (!KINDS.contains(kind)) {
      throw new Args.UsageException("--kind must be one of " + String.join(", ", KINDS) + ", was '" + kind + "'");
    }
    String name = args.positional().get(0);
    ClientOptions options = ClientOptions.builder()
        .namespace(args.get("namespace", ClientOptions.DEFAULT_NAMESPACE)).build();
    try (LockClient client = RedisLockClient.builder().uri(uri).options(options).build()) {
      if (command.equals("unlock")) {
        unlock(client, kind, name, out);
      } else {
        inspect(client, kind, name, out);
      }
      return 0;
    }
  }

  private static void unlock(LockClient client, String kind, String name, PrintStream out) {
    boolean deleted = switch (kind) {
      case "fair" -> client.fairLock(name).forceUnlock();
      case "read-write" -> {
        DistributedReadWriteLock rw = client.readWriteLock(name);
        // both sides: a reader and a writer never hold together, so at most one of these finds holds
        boolean writer = rw.writeLock().forceUnlock();
        boolean readers = rw.readLock().forceUnlock();
        yield writer || readers;
      }
      // the count declared here is never stored: force-unlock keeps the stored count
      case "semaphore" -> client.semaphore(name, 1).forceUnlock();
      default -> client.lock(name).forceUnlock();
    };
    out.println(deleted ? "unlocked " + kind + " '" + name + "'" : kind + " '" + name + "' was not held");
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
        // describe() reports the stored count, or the declared one (here 1) when none is stored yet
        SemaphoreInfo info = client.semaphore(name, 1).describe();
        out.printf("semaphore %s%npermits   %d (1 if no count is stored yet)%ntaken     %d%n"
            + "available %d%nwaiters   %d%n", info.name(), info.permits(), info.taken(), info.available(),
            info.waiters());
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
