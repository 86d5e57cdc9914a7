package io.locksmith.zookeeper;

import io.locksmith.LockKind;
import io.locksmith.LockScan.End;
import io.locksmith.LockScan.Found;
import io.locksmith.LockScan.Result;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.zookeeper.KeeperException.Code;

/**
 * For operators: which locks of a {@link ZooKeeperLockClient}'s namespace are held or waited for, found
 * by listing the kind directories ({@code <chroot>/<namespace>/lock}, {@code fair}, {@code rw}, {@code
 * semaphore}) and each lock parent in them. Empty lock parents are container nodes the server deletes
 * after a while, and a semaphore's parent keeps its stored permit count, so a parent without lock nodes
 * is counted as a trace of use, not reported as a lock.
 *
 * <p>Stateless and thread-safe; the listings run on the client's connection, each within its connection
 * timeout.
 */
public final class ZooKeeperLockScan {
  private static final List<Side> DIRECTORIES = List.of(Side.EXCLUSIVE, Side.FAIR, Side.READ, Side.PERMIT);

  private ZooKeeperLockScan() {}

  /**
   * @param client the client whose namespace to walk
   * @param limit the most locks to find, at least 1
   * @param budget the longest the walk may take, positive
   * @return the locks held or waited for, with how the walk ended
   * @throws NullPointerException if {@code client} or {@code budget} is null
   * @throws IllegalArgumentException if {@code limit} is below 1 or {@code budget} is not positive
   * @throws io.locksmith.BackendUnavailableException if the ensemble does not answer a listing in time
   * @throws io.locksmith.BackendConfigurationException if the client may not list the nodes
   */
  public static Result locks(ZooKeeperLockClient client, int limit, Duration budget) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, was " + limit);
    }
    return walk(client, limit, budget, false);
  }

  /**
   * @param client the client whose namespace to walk
   * @param budget the longest the walk may take, positive
   * @return {@link Result#traces()} 1 and {@link End#LIMIT_REACHED} at the first lock parent found, 0 and
   *     {@link End#FINISHED} if there is none
   * @throws NullPointerException if {@code client} or {@code budget} is null
   * @throws IllegalArgumentException if {@code budget} is not positive
   * @throws io.locksmith.BackendUnavailableException as for {@link #locks}
   * @throws io.locksmith.BackendConfigurationException as for {@link #locks}
   */
  public static Result anyKey(ZooKeeperLockClient client, Duration budget) {
    return walk(client, 0, budget, true);
  }

  private static Result walk(ZooKeeperLockClient client, int limit, Duration budget, boolean firstParent) {
    Objects.requireNonNull(client, "client");
    if (budget.isNegative() || budget.isZero()) {
      throw new IllegalArgumentException("budget must be positive, was " + budget);
    }
    ZooKeeperBackend backend = client.backend;
    long deadline = System.nanoTime() + budget.toNanos();
    try {
      backend.sync(backend.kindDirectory(Side.EXCLUSIVE), "sync before listing").get(budget.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      return new Result(List.of(), 0, End.OUT_OF_TIME);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new io.locksmith.BackendUnavailableException("sync before listing: interrupted", e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw Zk.translate("sync before listing", e.getCause());
    }
    List<Found> found = new ArrayList<>();
    long parents = 0;
    for (Side dir : DIRECTORIES) {
      String directory = backend.kindDirectory(dir);
      List<String> names = children(backend, directory, deadline);
      if (names == null) {
        return result(found, parents, End.OUT_OF_TIME);
      }
      names.sort(Comparator.naturalOrder());
      for (String segment : names) {
        parents++;
        if (firstParent) {
          return new Result(List.of(), 1, End.LIMIT_REACHED);
        }
        List<String> nodes = children(backend, directory + "/" + segment, deadline);
        if (nodes == null) {
          return result(found, parents, End.OUT_OF_TIME);
        }
        if (NodeNames.queue(nodes).isEmpty()) {
          continue; // an empty container, or a semaphore's stored count
        }
        if (found.size() == limit) {
          return result(found, parents, End.LIMIT_REACHED);
        }
        try {
          found.add(new Found(kind(dir), NodeNames.decode(segment)));
        } catch (IllegalArgumentException notOurs) {
          // a node someone else put there
        }
      }
    }
    return result(found, parents, End.FINISHED);
  }

  private static Result result(List<Found> found, long parents, End end) {
    return Result.sorted(found, parents, end);
  }

  private static LockKind kind(Side side) {
    switch (side) {
      case FAIR:
        return LockKind.FAIR;
      case READ:
        return LockKind.READ_WRITE;
      case PERMIT:
        return LockKind.SEMAPHORE;
      default:
        return LockKind.EXCLUSIVE;
    }
  }

  /** @return the children, an empty list if the node is gone, or null if the budget ran out */
  private static List<String> children(ZooKeeperBackend backend, String path, long deadline) {
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      return null;
    }
    String what = "list " + path;
    try {
      return new ArrayList<>(backend.zk().call(what, cb -> backend.curator().getChildren().inBackground(cb).forPath(path),
          Code.NONODE).thenApply(e -> e.getChildren() == null ? List.<String>of() : e.getChildren())
          .get(left, TimeUnit.NANOSECONDS));
    } catch (TimeoutException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new io.locksmith.BackendUnavailableException(what + ": interrupted", e);
    } catch (java.util.concurrent.ExecutionException | CompletionException e) {
      throw Zk.translate(what, e.getCause() != null ? e.getCause() : e);
    }
  }
}
