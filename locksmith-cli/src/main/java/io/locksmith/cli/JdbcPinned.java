package io.locksmith.cli;

import io.locksmith.ClientOptions;
import io.locksmith.LockScan.End;
import io.locksmith.jdbc.JdbcDialect;
import io.locksmith.jdbc.JdbcLockClient;
import io.locksmith.jdbc.JdbcLockMode;
import io.locksmith.jdbc.JdbcPinnedLocks;
import io.locksmith.jdbc.JdbcPinnedLocks.Hold;
import io.locksmith.jdbc.JdbcPinnedLocks.Session;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code inspect}, {@code list} and {@code unlock} for the JDBC backend's pinned-connection modes (row
 * lock, and advisory lock on PostgreSQL), read through {@link JdbcPinnedLocks}: a hold is shown with what
 * is really known (on PostgreSQL the holding session; on MariaDB and H2 only that another session holds
 * it), never with a made-up owner, token or TTL; what cannot be told or done says so and exits {@link
 * OperatorCommand#CANNOT_TELL}. Stateless.
 */
final class JdbcPinned {
  /** The {@code --mode} values. */
  static final List<String> MODES = List.of("lease", "row-lock", "advisory");
  /** How long {@code list} may probe row-lock rows. */
  private static final Duration LIST_BUDGET = Duration.ofSeconds(30);
  /** How often a pinned client checks its connections (PinnedBackend's watchdog period). */
  private static final int HOLDER_CHECK_MILLIS = 500;

  private JdbcPinned() {}

  /**
   * The pinned modes a command looks at: {@code --mode} narrows to one (or to none, for lease); without it,
   * every pinned mode the database offers, unless {@code --kind} names a kind they lack.
   *
   * @throws Args.UsageException for a mode the database lacks or a kind the pinned modes lack
   */
  static List<JdbcLockMode> modes(JdbcLockClient client, String mode, String kind) {
    List<JdbcLockMode> offered = JdbcPinnedLocks.modes(client.dialect());
    if (mode == null) {
      return kind == null || kind.equals("lock") ? offered : List.of();
    }
    if (!MODES.contains(mode)) {
      throw new Args.UsageException("--mode must be one of " + String.join(", ", MODES) + ", was '" + mode + "'");
    }
    if (mode.equals("lease")) {
      return List.of();
    }
    JdbcLockMode m = mode.equals("advisory") ? JdbcLockMode.ADVISORY : JdbcLockMode.ROW_LOCK;
    if (!offered.contains(m)) {
      List<String> names = new ArrayList<>(List.of("lease"));
      offered.forEach(o -> names.add(modeName(o)));
      throw new Args.UsageException(client.dialect() + " has no --mode " + mode + "; its modes are "
          + String.join(", ", names));
    }
    if (kind != null && !kind.equals("lock")) {
      throw new Args.UsageException("--mode " + mode + " holds exclusive locks only, not --kind " + kind);
    }
    return List.of(m);
  }

  static String modeName(JdbcLockMode mode) {
    return mode.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  private static String what(JdbcLockMode mode) {
    return mode == JdbcLockMode.ADVISORY ? "advisory lock" : "row lock";
  }

  // ------------------------------------------------------------------ inspect

  /** The holds of {@code name} in {@code modes}, each described; an empty text if none is held. */
  static OperatorLook look(JdbcLockClient client, List<JdbcLockMode> modes, String name) {
    StringBuilder text = new StringBuilder();
    boolean held = false;
    for (JdbcLockMode m : modes) {
      Optional<Hold> h = JdbcPinnedLocks.find(client, m, name);
      if (h.isPresent()) {
        held = true;
        text.append(describe(client, h.get()));
      }
    }
    return new OperatorLook(held, text.toString());
  }

  /** What a pinned lookup found: whether anything is held, and the text that shows it. */
  record OperatorLook(boolean held, String text) {}

  private static String describe(JdbcLockClient client, Hold h) {
    String nl = System.lineSeparator();
    StringBuilder s = new StringBuilder(what(h.mode()) + " '" + h.name() + "' (--mode " + modeName(h.mode()) + ")"
        + nl);
    if (h.session().isPresent()) {
      Session x = h.session().get();
      s.append("held by   ").append(session(client.dialect(), x)).append(nl);
      if (h.mode() == JdbcLockMode.ROW_LOCK && x.transactionStart() != null) {
        s.append("since     ").append(x.transactionStart()).append(" (its transaction began: the lock is that "
            + "transaction's first statement)").append(nl);
      } else if (x.sessionStart() != null) {
        s.append("since     some time after its session began at ").append(x.sessionStart()).append(
            h.mode() == JdbcLockMode.ADVISORY ? " (pg_locks does not say when an advisory lock was taken)" : "")
            .append(nl);
      } else {
        s.append("since     not shown to this database user").append(nl);
      }
    } else {
      s.append("held by   another database session, which this database user cannot identify").append(
          client.dialect() == JdbcDialect.MARIADB ? " (reading whom a lock waits for needs the PROCESS privilege)"
              : client.dialect() == JdbcDialect.H2 ? " (reading other sessions needs an admin user)" : "")
          .append(nl);
    }
    s.append(h.mode() == JdbcLockMode.ROW_LOCK
        ? "owner     not visible: the holder writes its owner and fencing token in its open transaction, which"
            + " other sessions see only when it ends" + nl
        : "owner     not stored: an advisory lock has no row; only the holding client knows its owner and"
            + " fencing token" + nl);
    s.append("ttl       not stored: the holder's client ends the ").append(h.mode() == JdbcLockMode.ROW_LOCK
        ? "transaction" : "session").append(" itself when its lease is not renewed in time").append(nl);
    return s.toString();
  }

  private static String session(JdbcDialect dialect, Session x) {
    String id = dialect == JdbcDialect.POSTGRESQL ? "PostgreSQL session pid " : dialect == JdbcDialect.MARIADB
        ? "MariaDB connection id " : "H2 session id ";
    return id + x.id() + ", client " + orUnseen(x.clientAddress()) + (x.applicationName() == null ? ""
        : ", application '" + x.applicationName() + "'") + ", user " + orUnseen(x.user());
  }

  private static String orUnseen(String s) {
    return s != null ? s : "(not shown)";
  }

  /** The names of the pinned modes looked at, for a "free" line: e.g. ", row lock or advisory lock". */
  static List<String> names(List<JdbcLockMode> modes) {
    return modes.stream().map(JdbcPinned::what).toList();
  }

  /** How {@code name} is held in {@code modes}, e.g. "a row lock (--mode row-lock)"; empty if not at all. */
  static List<String> heldAs(JdbcLockClient client, List<JdbcLockMode> modes, String name) {
    List<String> held = new ArrayList<>();
    for (JdbcLockMode m : modes) {
      if (JdbcPinnedLocks.held(client, m, name)) {
        held.add((m == JdbcLockMode.ADVISORY ? "an " : "a ") + what(m) + " (--mode " + modeName(m) + ")");
      }
    }
    return held;
  }

  /** How {@code name} is held in the modes other than {@code mode}: as a lease lock or semaphore, or pinned. */
  private static List<String> heldElsewhere(JdbcLockClient client, JdbcLockMode mode, String name) {
    List<String> elsewhere = new ArrayList<>();
    if (client.lock(name).inspect().isPresent()) {
      elsewhere.add("a lease lock (--mode lease)");
    }
    if (client.inspectSemaphore(name).taken() > 0) { // declares no count: no count warning, nothing stored
      elsewhere.add("a semaphore (--kind semaphore)");
    }
    List<JdbcLockMode> others = new ArrayList<>(JdbcPinnedLocks.modes(client.dialect()));
    others.remove(mode);
    elsewhere.addAll(heldAs(client, others, name));
    return elsewhere;
  }

  // ------------------------------------------------------------------ list

  /** Rows for {@code list}, and notes on what cannot be listed. */
  record Listing(List<String[]> rows, List<String> notes, long advisoryHeld, End end) {
    static final Listing NONE = new Listing(List.of(), List.of(), 0, End.FINISHED);
  }

  static Listing list(JdbcLockClient client, List<JdbcLockMode> modes, int limit) {
    List<String[]> rows = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    End end = End.FINISHED;
    long advisory = 0;
    if (modes.contains(JdbcLockMode.ROW_LOCK)) {
      JdbcPinnedLocks.Listing found = JdbcPinnedLocks.rowLocks(client, limit, LIST_BUDGET);
      for (Hold h : found.holds()) {
        rows.add(new String[] {"row-lock", h.name(), h.session().map(s -> "session pid " + s.id() + " ("
            + orUnseen(s.clientAddress()) + ")").orElse("another session"), "-", "-", "not visible", "-"});
      }
      end = found.end();
      if (!found.holds().isEmpty()) {
        notes.add("(row locks: the owner and token the holder wrote show only when its transaction ends; "
            + "inspect NAME --mode row-lock shows what is known)");
      }
    }
    if (modes.contains(JdbcLockMode.ADVISORY)) {
      advisory = JdbcPinnedLocks.advisoryLocks(client);
      if (advisory > 0) {
        notes.add(String.format("%d advisory lock%s of Locksmith's form %s held in this database, by any namespace "
            + "or application: an advisory lock stores a hash of namespace and name, so its name cannot be read "
            + "back (inspect NAME tells whether one name is held)", advisory, advisory == 1 ? "" : "s",
            advisory == 1 ? "is" : "are"));
      }
    }
    return new Listing(rows, notes, advisory, end);
  }

  // ------------------------------------------------------------------ one pinned mode (--mode)

  /** {@code inspect}, {@code list} or {@code unlock} with {@code --mode row-lock} or {@code --mode advisory}. */
  static int run(String command, JdbcLockClient client, JdbcLockMode mode, String name, int limit, PrintStream out) {
    String namespace = client.options().namespace();
    switch (command) {
      case "list": {
        Listing l = list(client, List.of(mode), limit);
        printTable(l.rows(), out);
        l.notes().forEach(out::println);
        if (mode == JdbcLockMode.ADVISORY) {
          return l.advisoryHeld() > 0 ? OperatorCommand.CANNOT_TELL : nothing(out, "no advisory lock is held in "
              + "this database", 0);
        }
        String how = l.end() == End.LIMIT_REACHED ? "; stopped at --limit " + limit + ": more are held"
            : l.end() == End.OUT_OF_TIME ? "; the probing stopped after " + LIST_BUDGET.toSeconds()
                + " s: the list may be incomplete" : "";
        if (l.rows().isEmpty()) {
          out.println("no row lock held under namespace '" + namespace + "'" + how);
          return namespaceRows(client, out);
        }
        out.println(l.rows().size() + " row lock" + (l.rows().size() == 1 ? "" : "s") + " held under namespace '"
            + namespace + "'" + how);
        return 0;
      }
      case "unlock":
        return unlock(client, mode, name, out);
      default: {
        OperatorLook look = look(client, List.of(mode), name);
        if (look.held()) {
          out.print(look.text());
          return 0;
        }
        out.printf("%s '%s' is free under namespace '%s'%n", what(mode), name, namespace);
        List<String> elsewhere = heldElsewhere(client, mode, name);
        if (!elsewhere.isEmpty()) {
          out.printf("note: '%s' is held as %s: inspect without --mode shows every mode%n", name,
              String.join(" and as ", elsewhere));
          return 0;
        }
        if (mode == JdbcLockMode.ADVISORY) {
          out.println("(an advisory lock keeps no row: a --namespace or database that is not the application's "
              + "cannot be told from a free lock)");
          return 0;
        }
        return namespaceRows(client, out);
      }
    }
  }

  private static void printTable(List<String[]> rows, PrintStream out) {
    if (rows.isEmpty()) {
      return;
    }
    List<String[]> all = new ArrayList<>();
    all.add(new String[] {"KIND", "NAME", "OWNER", "HOLDS", "TTL", "TOKEN", "WAITERS"});
    all.addAll(rows);
    int[] width = new int[all.get(0).length];
    for (String[] r : all) {
      for (int c = 0; c < r.length; c++) {
        width[c] = Math.max(width[c], r[c].length());
      }
    }
    for (String[] r : all) {
      StringBuilder line = new StringBuilder();
      for (int c = 0; c < r.length; c++) {
        line.append(c == r.length - 1 ? r[c] : String.format("%-" + (width[c] + 2) + "s", r[c]));
      }
      out.println(line.toString().stripTrailing());
    }
  }

  private static int nothing(PrintStream out, String text, int code) {
    out.println(text);
    return code;
  }

  /** After a row-lock lookup found nothing: {@link OperatorCommand#NOT_THERE} if the namespace has no row. */
  private static int namespaceRows(JdbcLockClient client, PrintStream out) {
    if (client.namespaceRows() > 0) {
      return 0;
    }
    out.printf("no rows under namespace '%s' in table %s: nothing was locked there since the rows were last "
        + "purged, or --namespace, --table or the database is not the application's (its ClientOptions "
        + "namespace, default '%s')%n", client.options().namespace(), client.table(), ClientOptions.DEFAULT_NAMESPACE);
    return OperatorCommand.NOT_THERE;
  }

  // ------------------------------------------------------------------ unlock

  private static int unlock(JdbcLockClient client, JdbcLockMode mode, String name, PrintStream out) {
    Optional<Hold> before = JdbcPinnedLocks.find(client, mode, name);
    if (before.isEmpty()) {
      List<String> elsewhere = heldElsewhere(client, mode, name);
      if (!elsewhere.isEmpty()) { // never a bare "was not held" for a name that is held
        out.printf("nothing was unlocked: no %s '%s' is held, but '%s' is held as %s%n", what(mode), name, name,
            String.join(" and as ", elsewhere));
        return OperatorCommand.NOT_THERE;
      }
      out.printf("%s '%s' was not held%n", what(mode), name);
      return 0;
    }
    if (client.dialect() != JdbcDialect.POSTGRESQL) {
      out.print(describe(client, before.get()));
      boolean maria = client.dialect() == JdbcDialect.MARIADB;
      String id = before.get().session().map(s -> Long.toString(s.id())).orElse("<id>");
      out.printf("not unlocked: the row lock belongs to the holder's open transaction, which only the holder, "
          + "or the end of its connection, ends; this command does not end another client's connection on %s. "
          + "By hand, as a user allowed to: %s ends that connection, which rolls the transaction back and frees "
          + "the lock; the holder's client then finds its connection broken at its next check (every %d ms) "
          + "and makes the lease LOST%s%n", client.dialect(),
          maria ? "KILL CONNECTION " + id : "CALL ABORT_SESSION(" + id + ")", HOLDER_CHECK_MILLIS,
          before.get().session().isPresent() ? "" : maria
              ? " (the id: the connection whose transaction is old in information_schema.INNODB_TRX, as a user "
                  + "with the PROCESS privilege)" : " (the id: INFORMATION_SCHEMA.SESSIONS, as an admin user)");
      return OperatorCommand.CANNOT_TELL;
    }
    Optional<Session> ended = JdbcPinnedLocks.terminate(client, mode, name);
    if (ended.isEmpty()) {
      boolean still = JdbcPinnedLocks.held(client, mode, name);
      out.printf("%s '%s' %s%n", what(mode), name, still ? "is held, but its holding session could not be "
          + "identified: nothing was unlocked" : "was let go before it could be ended: nothing was unlocked");
      return still ? OperatorCommand.CANNOT_TELL : 0;
    }
    Session s = ended.get();
    out.printf("unlocked %s '%s'%nended     %s%n", what(mode), name, session(client.dialect(), s));
    out.printf("the holder's %s was %s, which freed the lock; its client finds its pinned connection broken at "
        + "its next check (every %d ms, at the latest at its next renewal) and makes the lease LOST (onLost "
        + "listeners run, release() returns false)%n", mode == JdbcLockMode.ROW_LOCK ? "transaction" : "session",
        mode == JdbcLockMode.ROW_LOCK ? "rolled back and its session ended" : "ended", HOLDER_CHECK_MILLIS);
    out.println("work already running under the lease does not stop by itself: a resource that checks fencing "
        + "tokens refuses its writes once it has accepted a write with a newer holder's token (every later "
        + "grant's token is larger)");
    Optional<Hold> now = JdbcPinnedLocks.find(client, mode, name);
    out.println(now.map(h -> "now       held again by " + h.session().map(x -> session(client.dialect(), x)).orElse(
        "another session") + " (granted after the unlock)").orElse("now       free"));
    return 0;
  }
}
