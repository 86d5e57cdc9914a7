package io.locksmith.testkit.zookeeper;

import java.util.Objects;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that gives a test class a running ZooKeeper: its own server or ensemble (started
 * before the class, closed after it), or one shared by every class of the test run that asks for a
 * shared one of the same kind (started by the first, closed when the run ends, also when tests fail).
 * Sharing keeps a module's ZooKeeper start-up cost to one server and one ensemble per run; a test that
 * stops, kills or restarts servers needs its own.
 *
 * <pre>{@code
 * class ZooKeeperLockTckTest extends LockClientTck {
 *   @RegisterExtension static final ZooKeeperExtension<ZooKeeperTestServer> ZK = ZooKeeperExtension.sharedServer();
 *   @Override protected LockClient newClient() { return ZooKeeperLockClient.create(ZK.get().uri()); }
 * }
 * }</pre>
 *
 * <p>Register it with {@code @RegisterExtension} on a static field. Thread-safety: {@link #get()} may be
 * called from any thread once {@code beforeAll} ran.
 *
 * @param <T> the server or ensemble type
 */
public final class ZooKeeperExtension<T extends ZooKeeperTarget> implements BeforeAllCallback, AfterAllCallback {
  private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(ZooKeeperExtension.class);

  private final Class<T> type;
  private final Supplier<T> starter;
  private final boolean shared;
  private volatile T target;

  private ZooKeeperExtension(Class<T> type, Supplier<T> starter, boolean shared) {
    this.type = type;
    this.starter = starter;
    this.shared = shared;
  }

  /** @return the single server shared by the run */
  public static ZooKeeperExtension<ZooKeeperTestServer> sharedServer() {
    return new ZooKeeperExtension<>(ZooKeeperTestServer.class, ZooKeeperTestServer::start, true);
  }

  /** @return the 3-member ensemble shared by the run */
  public static ZooKeeperExtension<ZooKeeperEnsemble> sharedEnsemble() {
    return new ZooKeeperExtension<>(ZooKeeperEnsemble.class, ZooKeeperEnsemble::start, true);
  }

  /** @return a single server of this class's own (it may be stopped and restarted) */
  public static ZooKeeperExtension<ZooKeeperTestServer> server() {
    return new ZooKeeperExtension<>(ZooKeeperTestServer.class, ZooKeeperTestServer::start, false);
  }

  /**
   * @param starter starts the server, e.g. with a shorter tick
   * @return a server of this class's own
   */
  public static ZooKeeperExtension<ZooKeeperTestServer> server(Supplier<ZooKeeperTestServer> starter) {
    return new ZooKeeperExtension<>(ZooKeeperTestServer.class, Objects.requireNonNull(starter, "starter"), false);
  }

  /** @return a 3-member ensemble of this class's own (members may be killed and restarted) */
  public static ZooKeeperExtension<ZooKeeperEnsemble> ensemble() {
    return new ZooKeeperExtension<>(ZooKeeperEnsemble.class, ZooKeeperEnsemble::start, false);
  }

  /**
   * @return the running server or ensemble
   * @throws IllegalStateException if called before {@code beforeAll}
   */
  public T get() {
    T t = target;
    if (t == null) {
      throw new IllegalStateException("no " + type.getSimpleName() + " yet: register the extension with "
          + "@RegisterExtension on a static field and call get() from a test or lifecycle method");
    }
    return t;
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    if (shared) {
      Holder holder = context.getRoot().getStore(NAMESPACE)
          .getOrComputeIfAbsent(type, k -> new Holder(starter.get()), Holder.class);
      target = type.cast(holder.target);
    } else {
      target = starter.get();
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (!shared && target != null) {
      target.close();
      target = null;
    }
  }

  /** Closes a shared target at the end of the run (JUnit closes what the root store holds). */
  @SuppressWarnings("deprecation") // CloseableResource for JUnit before 5.13, AutoCloseable for later ones
  private static final class Holder implements ExtensionContext.Store.CloseableResource, AutoCloseable {
    final ZooKeeperTarget target;

    Holder(ZooKeeperTarget target) {
      this.target = target;
    }

    @Override
    public void close() {
      target.close();
    }
  }
}
