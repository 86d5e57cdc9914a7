package io.locksmith.cli;

import io.locksmith.cli.OperatorTargets.Scan;
import io.locksmith.cli.OperatorTargets.Target;

import io.locksmith.ClientOptions;
import io.locksmith.DistributedLock;
import io.locksmith.DistributedReadWriteLock;
import io.locksmith.LockClient;
import io.locksmith.LockInfo;
import io.locksmith.LockKind;
import io.locksmith.LockScan.End;
import io.locksmith.LockScan.Found;
import io.locksmith.PermitHolder;
import io.locksmith.SemaphoreState;
import io.locksmith.jdbc.JdbcLockClient;
import io.locksmith.jdbc.JdbcLockMode;
import io.locksmith.zookeeper.ZooKeeperLockClient;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * {@code locksmith inspect}, {@code list} and {@code unlock}: who holds a lock of any kind, which locks
 * are held, and the operator's force-unlock, on a Redis server, Sentinel group or Cluster, a ZooKeeper
 * ensemble ({@code --uri zookeeper://…}), or the exclusive
 * locks of a Redlock ({@code --nodes}: the holder a majority of nodes agrees on; unlock deletes it on every
 * node).
 *
 * <p>An answer must not mislead in an incident: {@code inspect} without {@code --kind} looks the name up
 * as every kind; a lookup that finds nothing checks whether the namespace has any Locksmith key at all
 * (a mistyped {@code --namespace} or server otherwise reads as "free"); {@code unlock} names whom it
 * evicted and what that holder will see.
 */
final class OperatorCommand {
  /** The {@code --kind} values, in the order the usage lists them. */
  static final List<String> KINDS = List.of("lock", "fair", "read-write", "semaphore");
  /**
   * Exit code when what was asked about is not there: the namespace has no Locksmith key on the server,
   * or {@code unlock} removed nothing while another kind of lock holds the name.
   */
  static final int NOT_THERE = 4;
  /**
   * Exit code when the answer cannot be known or the unlock cannot be done from here: a JDBC row lock held
   * on MariaDB or H2 (no statement ends another client's transaction), advisory locks whose names cannot be
   * read back, a held lock whose holding session cannot be identified.
   */
  static final int CANNOT_TELL = 5;
  /** How long a lookup that found nothing may walk the keyspace to tell an empty namespace. */
  static final Duration PROBE_BUDGET = Duration.ofSeconds(5);
  /** How long {@code list} may walk the keyspace. */
  static final Duration LIST_BUDGET = Duration.ofSeconds(30);
  static final int DEFAULT_LIST_LIMIT = 1000;

  private OperatorCommand() {}

  static int run(String command, Args args, PrintStream out) {
    String uri = args.get("uri", null);
    String nodes = args.get("nodes", null);
    String jdbcUrl = args.get("jdbc-url", null);
    boolean list = command.equals("list");
    if ((uri != null ? 1 : 0) + (nodes != null ? 1 : 0) + (jdbcUrl != null ? 1 : 0) != 1) {
      throw new Args.UsageException(command + " needs one of --uri, --nodes (Redlock) or --jdbc-url");
    }
    String mode = args.get("mode", null);
    if (jdbcUrl == null && (args.get("table", null) != null || args.get("jdbc-user", null) != null || mode != null)) {
      throw new Args.UsageException("--table, --jdbc-user and --mode apply to --jdbc-url only");
    }
    if (list ? !args.positional().isEmpty() : args.positional().size() != 1) {
      throw new Args.UsageException(list ? "list takes no lock name (--kind narrows it to one kind)"
          : command + " needs exactly one lock NAME");
    }
    String kind = args.get("kind", null);
    if (kind != null && !KINDS.contains(kind)) {
      throw new Args.UsageException("--kind must be one of " + String.join(", ", KINDS) + ", was '" + kind + "'");
    }
    if (nodes != null && kind != null && !kind.equals("lock")) {
      throw new Args.UsageException("Redlock (--nodes) has the exclusive lock only, not --kind " + kind);
    }
    String side = args.get("side", null);
    boolean sided = command.equals("unlock") && "read-write".equals(kind);
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
    int limit = args.intValue("limit", DEFAULT_LIST_LIMIT, 1, 100_000);
    if (!list && args.get("limit", null) != null) {
      throw new Args.UsageException("--limit applies to list only");
    }
    ClientOptions options;
    Target connected;
    try {
      options = ClientOptions.builder().namespace(args.get("namespace", ClientOptions.DEFAULT_NAMESPACE)).build();
      connected = nodes != null ? Target.redlock(Arrays.stream(nodes.split(",")).map(String::trim).toList(), options)
          : jdbcUrl != null ? Target.jdbc(jdbcUrl, args.get("jdbc-user", null), args.get("table", null), options)
          : uri.startsWith("zookeeper://") ? Target.zookeeper(uri, options) : Target.redis(uri, options);
    } catch (IllegalArgumentException e) { // a malformed --namespace, --uri or --nodes
      throw new Args.UsageException(e.getMessage());
    }
    try (Target target = connected) {
      if (kind != null && !target.kinds().contains(kind)) {
        // a usage error, not a tool failure: the backend has no such kind (the JDBC backend had a stack trace)
        throw new Args.UsageException("this backend has no --kind " + kind + "; its kinds are "
            + String.join(", ", target.kinds()));
      }
      if (target.client instanceof JdbcLockClient jdbc) { // the row-lock and advisory modes as well
        target.mode = mode;
        target.pinned = JdbcPinned.modes(jdbc, mode, kind);
        if (mode != null && !mode.equals("lease")) {
          return JdbcPinned.run(command, jdbc, target.pinned.get(0), list ? null : args.positional().get(0), limit,
              out);
        }
      }
      switch (command) {
        case "list":
          return list(target, kind, limit, out);
        case "unlock":
          return unlock(target, kind == null ? "lock" : kind, side, args.positional().get(0), out);
        default:
          return inspect(target, kind, args.positional().get(0), out);
      }
    }
  }

  // ------------------------------------------------------------------ inspect

  private static int inspect(Target target, String kind, String name, PrintStream out) {
    JdbcPinned.OperatorLook pinned = target.client instanceof JdbcLockClient jdbc
        ? JdbcPinned.look(jdbc, target.pinned, name) : new JdbcPinned.OperatorLook(false, "");
    if (kind != null) {
      Look look = look(target.client, kind, name);
      if (look.present() || !pinned.held()) {
        out.print(look.text());
      }
      out.print(pinned.text());
      if (look.present() || pinned.held()) {
        return 0;
      }
      List<String> elsewhere = otherKindsPresent(target, kind, name);
      elsewhere.addAll(pinnedElsewhere(target, name));
      if (!elsewhere.isEmpty()) {
        out.printf("note: '%s' is held as %s: inspect without --kind%s shows every kind%n", name,
            String.join(" and as ", elsewhere), target.mode != null ? " and --mode" : "");
        return 0;
      }
      return namespaceCheck(target, out);
    }
    boolean any = false;
    for (String k : target.kinds()) {
      Look look = look(target.client, k, name);
      if (look.present()) {
        out.print(look.text());
        any = true;
      }
    }
    out.print(pinned.text());
    if (any || pinned.held()) {
      return 0;
    }
    List<String> names = new ArrayList<>(target.kinds().stream().map(OperatorCommand::kindName).toList());
    names.addAll(JdbcPinned.names(target.pinned));
    String kinds = names.size() == 1 ? names.get(0)
        : String.join(", ", names.subList(0, names.size() - 1)) + " or " + names.get(names.size() - 1);
    out.printf("'%s' is free: no %s of that name is held under namespace '%s'%n", name, kinds, target.namespace);
    List<String> elsewhere = pinnedElsewhere(target, name);
    if (!elsewhere.isEmpty()) {
      out.printf("note: '%s' is held as %s: inspect without --mode shows every mode%n", name,
          String.join(" and as ", elsewhere));
      return 0;
    }
    if (target.pinned.contains(JdbcLockMode.ADVISORY)) {
      out.println("(an advisory lock keeps no row: a --namespace or database that is not the application's cannot "
          + "be told from a free advisory lock)");
    }
    return namespaceCheck(target, out);
  }

  /** What one kind of lock under a name shows: the text to print, and whether it is held (or stored). */
  private record Look(boolean present, String text) {}

  private static Look look(LockClient client, String kind, String name) {
    switch (kind) {
      case "fair":
        return holder(client, "fair lock", name, client.fairLock(name).inspect(), false);
      case "read-write": {
        DistributedReadWriteLock rw = client.readWriteLock(name);
        Look writer = holder(client, "writer of", name, rw.writeLock().inspect(), false);
        Look readers = holder(client, "readers of", name, rw.readLock().inspect(), true);
        return new Look(writer.present() || readers.present(), writer.text() + readers.text());
      }
      case "semaphore": {
        // read as stored, declaring no count: a declared count would be compared with the stored one and
        // logged as a mismatch, with advice that would cut the application's permits if followed
        SemaphoreState state = client.inspectSemaphore(name);
        OptionalInt stored = state.storedPermits();
        StringBuilder text = new StringBuilder(String.format(
            "semaphore %s%npermits   %s%ntaken     %d%navailable %s%nwaiters   %d%n", state.name(),
            stored.isPresent() ? Integer.toString(stored.getAsInt())
                : "none stored yet (the first acquisition stores its count)",
            state.taken(),
            stored.isPresent() ? Integer.toString(Math.max(0, stored.getAsInt() - state.taken())) : "-",
            state.waiters()));
        for (PermitHolder h : state.holders()) {
          text.append(String.format("holder    %s, token %d, %s %d ms%n", h.owner(), h.fencingToken(),
              sessionBound(client) ? "ends within" : "ttl", h.remainingTtl().toMillis()));
        }
        return new Look(!state.isEmpty(), text.toString());
      }
      default:
        return holder(client, "lock", name, client.lock(name).inspect(), false);
    }
  }

  /** @param readers the read side: the owner shown is one of the readers, the holds are all readers' */
  private static Look holder(LockClient client, String what, String name, Optional<LockInfo> info,
      boolean readers) {
    if (info.isEmpty()) {
      return new Look(false, what + " '" + name + "' is free" + System.lineSeparator());
    }
    LockInfo i = info.get();
    String time = sessionBound(client)
        ? "ends in   at most %d ms if its holder stops renewing (its lease, bounded by its ZooKeeper session timeout)"
        : "ttl       %d ms";
    return new Look(true, String.format(
        "%s '%s'%nowner     %s%s%nholds     %d%s%n" + time + "%ntoken     %d%nwaiters   %d%n", what,
        i.name(), i.owner(), readers ? " (one of the readers)" : "", i.holdCount(),
        readers ? " (all readers)" : "", i.remainingTtl().toMillis(), i.fencingToken(), i.waiters()));
  }

  /**
   * Whether holds end with the holder's session rather than by a stored time to live: on ZooKeeper a node
   * lives while its holder's session does and its lease is renewed, so the time shown is a bound, not a TTL.
   */
  private static boolean sessionBound(LockClient client) {
    return client instanceof ZooKeeperLockClient;
  }

  /** @return how the other kinds the backend offers hold {@code name}, e.g. "a fair lock" */
  private static List<String> otherKindsPresent(Target target, String kind, String name) {
    List<String> present = new ArrayList<>();
    for (String k : target.kinds()) {
      if (!k.equals(kind) && look(target.client, k, name).present()) {
        present.add("a " + kindName(k) + " (--kind " + k + ")");
      }
    }
    return present;
  }

  /** JDBC: how the pinned modes not looked at (--mode lease, or a --kind they lack) hold {@code name}. */
  private static List<String> pinnedElsewhere(Target target, String name) {
    if (!(target.client instanceof JdbcLockClient jdbc)) {
      return List.of();
    }
    List<JdbcLockMode> others = new ArrayList<>(JdbcPinned.modes(jdbc, null, null));
    others.removeAll(target.pinned);
    return JdbcPinned.heldAs(jdbc, others, name);
  }

  private static String kindName(String kind) {
    switch (kind) {
      case "fair":
        return "fair lock";
      case "read-write":
        return "read-write lock";
      case "semaphore":
        return "semaphore";
      default:
        return "lock";
    }
  }

  /**
   * After a lookup found nothing: says whether the namespace has any Locksmith key on the server.
   *
   * @return {@link #NOT_THERE} if it has none, else 0
   */
  private static int namespaceCheck(Target target, PrintStream out) {
    Scan probe = target.scan(0, PROBE_BUDGET, true);
    probe.notes().forEach(out::println);
    if (probe.lockKeys() > 0) {
      return 0;
    }
    if (!probe.allWalked()) {
      out.printf("(not every node was walked: cannot tell whether namespace '%s' has any Locksmith key)%n",
          target.namespace);
      return 0;
    }
    if (probe.end() == End.OUT_OF_TIME) {
      out.printf("(could not tell within %d s whether namespace '%s' has any Locksmith key: the key walk did "
          + "not finish)%n", PROBE_BUDGET.toSeconds(), target.namespace);
      return 0;
    }
    out.printf("no Locksmith keys under namespace '%s' on %s: nothing was locked there recently (retained "
        + "fencing tokens would show), or --namespace or the server is not the application's (its "
        + "ClientOptions namespace, default '%s')%n", target.namespace, target.description,
        ClientOptions.DEFAULT_NAMESPACE);
    return NOT_THERE;
  }

  // ------------------------------------------------------------------ list

  private static int list(Target target, String kind, int limit, PrintStream out) {
    Scan scan = target.scan(limit, LIST_BUDGET, false);
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"KIND", "NAME", "OWNER", "HOLDS", sessionBound(target.client) ? "ENDS WITHIN" : "TTL",
        "TOKEN", "WAITERS"});
    for (Found f : scan.locks()) {
      String k = cliKind(f.kind());
      if (kind == null || kind.equals(k)) {
        rows.addAll(rows(target.client, f));
      }
    }
    JdbcPinned.Listing pinned = target.client instanceof JdbcLockClient jdbc && !target.pinned.isEmpty()
        ? JdbcPinned.list(jdbc, target.pinned, limit) : JdbcPinned.Listing.NONE;
    rows.addAll(pinned.rows());
    scan.notes().forEach(out::println);
    int held = rows.size() - 1;
    if (held > 0) {
      int[] width = new int[rows.get(0).length];
      for (String[] r : rows) {
        for (int c = 0; c < r.length; c++) {
          width[c] = Math.max(width[c], r[c].length());
        }
      }
      for (String[] r : rows) {
        StringBuilder line = new StringBuilder();
        for (int c = 0; c < r.length; c++) {
          line.append(c == r.length - 1 ? r[c] : String.format("%-" + (width[c] + 2) + "s", r[c]));
        }
        out.println(line.toString().stripTrailing());
      }
    }
    String where = " under namespace '" + target.namespace + "' on " + target.description
        + (target.isRedlock() ? " (names found on any node; holders as a majority of nodes agrees)" : "");
    String how;
    switch (scan.end()) {
      case LIMIT_REACHED:
        how = "; the key walk stopped at --limit " + limit + " locks: more are held";
        break;
      case OUT_OF_TIME:
        how = "; the key walk stopped after " + LIST_BUDGET.toSeconds() + " s: the list may be incomplete";
        break;
      default:
        how = "";
    }
    if (!scan.allWalked()) {
      how += "; not every node was walked: the list may be incomplete";
    }
    how += pinned.end() == End.FINISHED ? "" : "; the row-lock probing stopped early: the list may be incomplete";
    pinned.notes().forEach(out::println);
    if (held == 0 && pinned.advisoryHeld() > 0) {
      out.println("no lock, semaphore or row lock held" + where + how + "; whether one of the advisory locks is "
          + "this namespace's cannot be told");
      return CANNOT_TELL;
    }
    if (held == 0 && scan.lockKeys() == 0 && scan.end() == End.FINISHED && scan.allWalked()) {
      out.printf("no Locksmith keys under namespace '%s' on %s: nothing was locked there recently, or "
          + "--namespace or the server is not the application's (its ClientOptions namespace, default '%s')%n",
          target.namespace, target.description, ClientOptions.DEFAULT_NAMESPACE);
      return NOT_THERE;
    }
    out.println((held == 0 ? "nothing held" : held + (held == 1 ? " hold" : " holds")) + where + how);
    return 0;
  }

  private static String cliKind(LockKind kind) {
    switch (kind) {
      case FAIR:
        return "fair";
      case READ_WRITE:
        return "read-write";
      case SEMAPHORE:
        return "semaphore";
      default:
        return "lock";
    }
  }

  /** The rows of one found lock that is still held (none if it was freed since the walk saw it). */
  private static List<String[]> rows(LockClient client, Found f) {
    List<String[]> rows = new ArrayList<>();
    switch (f.kind()) {
      case FAIR:
        client.fairLock(f.name()).inspect().ifPresent(i -> rows.add(row("fair", i, "")));
        break;
      case READ_WRITE: {
        DistributedReadWriteLock rw = client.readWriteLock(f.name());
        rw.writeLock().inspect().ifPresent(i -> rows.add(row("read-write:writer", i, "")));
        rw.readLock().inspect().ifPresent(i -> rows.add(row("read-write:readers", i, " (one of the readers)")));
        break;
      }
      case SEMAPHORE: {
        SemaphoreState s = client.inspectSemaphore(f.name());
        String permits = s.storedPermits().isPresent() ? Integer.toString(s.storedPermits().getAsInt()) : "?";
        String holds = "1 (" + s.taken() + "/" + permits + " permits taken)";
        for (PermitHolder h : s.holders()) { // one row per permit holder, longest lease left first
          rows.add(new String[] {"semaphore", f.name(), h.owner(), holds, h.remainingTtl().toMillis() + " ms",
              Long.toString(h.fencingToken()), Integer.toString(s.waiters())});
        }
        if (s.holders().isEmpty() && s.waiters() > 0) {
          rows.add(new String[] {"semaphore", f.name(), "-", "0 (0/" + permits + " permits taken)", "-", "-",
              Integer.toString(s.waiters())});
        }
        break;
      }
      default:
        client.lock(f.name()).inspect().ifPresent(i -> rows.add(row("lock", i, "")));
    }
    return rows;
  }

  private static String[] row(String kind, LockInfo i, String ownerNote) {
    return new String[] {kind, i.name(), i.owner() + ownerNote, Integer.toString(i.holdCount()),
        i.remainingTtl().toMillis() + " ms", Long.toString(i.fencingToken()), Integer.toString(i.waiters())};
  }

  // ------------------------------------------------------------------ unlock

  private static int unlock(Target target, String kind, String side, String name, PrintStream out) {
    LockClient client = target.client;
    String what = kind.equals("read-write") ? (side.equals("write") ? "writer of" : "readers of") : kind;
    if (kind.equals("semaphore")) {
      // read just before the drop, declaring no count (a permit granted in between is evicted unnamed);
      // the force-unlock keeps the stored count, so the count declared for it is never used
      SemaphoreState before = client.inspectSemaphore(name);
      if (client.semaphore(name, 1).forceUnlock()) {
        out.printf("unlocked semaphore '%s'%nevicted   %d permit%s%n", name, before.taken(),
            before.taken() == 1 ? "" : "s");
        for (PermitHolder h : before.holders()) {
          out.printf("          %s, token %d, %d ms %s%n", h.owner(), h.fencingToken(),
              h.remainingTtl().toMillis(), sessionBound(client)
                  ? "at most left unrenewed (lease and ZooKeeper session timeout)" : "of its lease left");
        }
        explainEviction(out, "each evicted permit holder", Optional.empty(), true, sessionBound(client),
            client.capabilities().waitsByNotification());
        SemaphoreState now = client.inspectSemaphore(name);
        out.println(now.taken() == 0 ? "now       no permit held"
            : String.format("now       %d permit%s held (granted after the unlock)", now.taken(),
                now.taken() == 1 ? "" : "s"));
        return 0;
      }
    } else {
      DistributedLock lock = kind.equals("fair") ? client.fairLock(name)
          : kind.equals("read-write") ? (side.equals("write") ? client.readWriteLock(name).writeLock()
              : client.readWriteLock(name).readLock())
          : client.lock(name);
      // read just before the delete (a separate command: a holder granted in between is evicted unnamed)
      Optional<LockInfo> before = lock.inspect();
      boolean readers = side != null && side.equals("read");
      if (lock.forceUnlock()) {
        out.println("unlocked " + what + " '" + name + "'");
        if (before.isPresent()) {
          LockInfo i = before.get();
          // a reader's token is the last write's: shown, but it fences nothing
          out.printf("evicted   %s%s, %d hold%s%s, token %d, %d ms %s%n", i.owner(),
              readers ? " (the reader whose lease ends last)" : "", i.holdCount(), i.holdCount() == 1 ? "" : "s",
              readers ? " of all readers" : "", i.fencingToken(), i.remainingTtl().toMillis(),
              sessionBound(client) ? "at most left unrenewed (lease and ZooKeeper session timeout)"
                  : "of its lease left");
        }
        explainEviction(out, readers ? "each evicted reader" : "the evicted holder", before, !readers,
            sessionBound(client), client.capabilities().waitsByNotification());
        Optional<LockInfo> now = lock.inspect();
        out.println(now.map(i -> String.format("now       held by %s, token %d (granted after the unlock)",
            i.owner(), i.fencingToken())).orElse("now       free"));
        return 0;
      }
    }
    List<String> elsewhere = otherKindsPresent(target, kind, name);
    if (target.client instanceof JdbcLockClient jdbc && kind.equals("lock")) {
      // every pinned mode, also under --mode lease: a row lock or advisory lock of that name is held as well
      elsewhere.addAll(JdbcPinned.heldAs(jdbc, JdbcPinned.modes(jdbc, null, null), name));
    }
    if (!elsewhere.isEmpty()) { // never a bare "was not held" for a name that is held
      out.printf("nothing was unlocked: no %s '%s' is held, but '%s' is held as %s%n",
          kind.equals("read-write") ? what.replace(" of", "") + " side of read-write lock" : kindName(kind), name,
          name, String.join(" and as ", elsewhere));
      return NOT_THERE;
    }
    out.println(what + " '" + name + "' was not held");
    return namespaceCheck(target, out);
  }

  /**
   * What a force-unlocked holder goes through, so an operator knows what the process will do next. Where
   * the backend notifies (Redis, ZooKeeper, PostgreSQL) the unlock tells each evicted holder's client at
   * once; a client that is not connected then learns it when it reconnects (its leases are verified) or
   * when its lease runs out. Where it does not (MariaDB, H2), the holder learns it at its next renewal.
   *
   * @param writes whether the holder's token fences writes (not a reader's: it carries the last write's)
   * @param session whether holds end with the holder's ZooKeeper session (the time left is a bound)
   * @param notifies whether the backend tells another client at once
   */
  private static void explainEviction(PrintStream out, String who, Optional<LockInfo> before, boolean writes,
      boolean session, boolean notifies) {
    String left = before.map(i -> "in about " + i.remainingTtl().toMillis() + " ms" + (session
        ? " (the lease it had left, bounded by its ZooKeeper session timeout)" : " (the lease it had left)"))
        .orElse("when its lease would have run out");
    if (notifies) {
      out.printf("%s is told now: a notice to its client makes its lease LOST within milliseconds (onLost "
          + "listeners run, release() returns false)%n"
          + "  - a client not connected at this moment learns it when it reconnects (it verifies every lease "
          + "then), at the latest %s%n", who, left);
    } else {
      out.printf("%s is not told now (this database sends no notifications): its client finds its lease LOST "
          + "at its next renewal (a watched lease renews every third of its lease; onLost listeners run, "
          + "release() returns false), at the latest %s%n", who, left);
    }
    if (writes) {
      out.printf("work already running under the lease does not stop by itself: a resource that checks fencing "
          + "tokens refuses its writes%s once it has accepted a write with a newer holder's token (every later "
          + "grant's token is larger)%n", before.map(i -> " (token " + i.fencingToken() + ")").orElse(""));
    } else {
      out.println("a read already running under the lease does not stop by itself, while a writer may be "
          + "granted now");
    }
  }
}
