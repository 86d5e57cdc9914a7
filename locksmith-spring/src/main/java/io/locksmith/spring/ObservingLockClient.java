package io.locksmith.spring;

import io.locksmith.AcquireTimeoutException;
import io.locksmith.DistributedLock;
import io.locksmith.DistributedReadWriteLock;
import io.locksmith.DistributedSemaphore;
import io.locksmith.Lease;
import io.locksmith.LeaseSource;
import io.locksmith.LockClient;
import io.locksmith.LockObserver;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@link LockClient} (JDK proxy) that forwards every call to another and tells an {@link AcquisitionHook}
 * when each acquisition of its locks, read-write locks and semaphores starts and ends: {@code acquire},
 * {@code tryAcquire}, their async forms, the {@code Lock} view ({@code lock}, {@code tryLock}) and
 * {@code runLocked}/{@code callLocked}. Re-entries of a hold the thread already has are not acquisitions and
 * are not reported, as in core. Results, exceptions and blocking are the target's, unchanged; the hook's own
 * failures are logged. Thread-safe, as the target is.
 */
final class ObservingLockClient implements InvocationHandler {

  private final LockClient target;
  private final AcquisitionHook hook;

  private ObservingLockClient(LockClient target, AcquisitionHook hook) {
    this.target = target;
    this.hook = hook;
  }

  /** @return {@code target} seen through {@code hook} */
  static LockClient wrap(LockClient target, AcquisitionHook hook) {
    return (LockClient) Proxy.newProxyInstance(ObservingLockClient.class.getClassLoader(),
        new Class<?>[] {LockClient.class}, new ObservingLockClient(target, hook));
  }

  /** @return whether {@code client} is one of these proxies */
  static boolean isObserving(Object client) {
    return client != null && Proxy.isProxyClass(client.getClass())
        && Proxy.getInvocationHandler(client) instanceof ObservingLockClient;
  }

  @Override
  public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
    Object object = objectMethod(proxy, method, args, target);
    if (object != null) {
      return object;
    }
    // a default method (fairLock(name), semaphore(name, permits), multiLock) runs on the proxy, so what it
    // calls is observed too
    Object result = method.isDefault() ? InvocationHandler.invokeDefault(proxy, method, args) : forward(target, method, args);
    return wrapResult(result, kindOf(method.getName()));
  }

  private static String kindOf(String factory) {
    return switch (factory) {
      case "fairLock" -> "fair";
      case "semaphore" -> "semaphore";
      default -> "exclusive";
    };
  }

  private Object wrapResult(Object result, String kind) {
    if (result != null && Proxy.isProxyClass(result.getClass()) && Proxy.getInvocationHandler(result) instanceof Locks) {
      return result; // from a default method that called the proxy (fairLock(name), readWriteLock(name)): observed once
    }
    if (result instanceof DistributedLock || result instanceof DistributedSemaphore || result instanceof DistributedReadWriteLock) {
      Class<?> type = result instanceof DistributedLock ? DistributedLock.class
          : result instanceof DistributedSemaphore ? DistributedSemaphore.class : DistributedReadWriteLock.class;
      return Proxy.newProxyInstance(ObservingLockClient.class.getClassLoader(), new Class<?>[] {type},
          new Locks(result, kind));
    }
    return result;
  }

  /** The methods of a lock, read-write lock or semaphore. */
  private final class Locks implements InvocationHandler {
    private final Object target;
    private final String kind;

    Locks(Object target, String kind) {
      this.target = target;
      this.kind = kind;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      Object object = objectMethod(proxy, method, args, target);
      if (object != null) {
        return object;
      }
      String m = method.getName();
      if (target instanceof DistributedReadWriteLock) {
        Object r = forward(target, method, args);
        return "readLock".equals(m) ? wrapResult(r, "read") : "writeLock".equals(m) ? wrapResult(r, "write") : r;
      }
      DistributedLock lock = target instanceof DistributedLock l ? l : null;
      switch (m) {
        case "acquire", "tryAcquire", "lock", "lockInterruptibly", "tryLock":
          return acquisition(proxy, lock, method, args);
        case "acquireAsync", "tryAcquireAsync":
          return asyncAcquisition(method, args);
        case "runLocked", "callLocked":
          if (lock == null) {
            // the interface's default acquires through the proxy (observed) and releases
            return method.isDefault() ? InvocationHandler.invokeDefault(proxy, method, args) : forward(target, method, args);
          }
          return lockedTask(lock, method, args);
        default:
          return forward(target, method, args);
      }
    }

    private Object acquisition(Object proxy, DistributedLock lock, Method method, Object[] args) throws Throwable {
      if (lock != null && lock.isHeldByCurrentThread()) {
        return forward(target, method, args); // a re-entry
      }
      String name = ((LeaseSource) target).name();
      AcquisitionHook.Pending pending = started(name);
      Object r;
      try {
        r = forward(target, method, args);
      } catch (Throwable e) {
        ended(pending, null, e);
        throw e;
      }
      Lease lease = null;
      if (r instanceof Lease l) {
        lease = l;
      } else if (r instanceof Optional<?> o) {
        lease = (Lease) o.orElse(null);
      } else if (r == null || Boolean.TRUE.equals(r)) { // lock(), lockInterruptibly(), tryLock() == true
        lease = lock == null ? null : lock.currentThreadLease().orElse(null);
      }
      ended(pending, lease, null);
      return r;
    }

    private Object asyncAcquisition(Method method, Object[] args) throws Throwable {
      AcquisitionHook.Pending pending = started(((LeaseSource) target).name());
      CompletionStage<?> stage;
      try {
        stage = (CompletionStage<?>) forward(target, method, args);
      } catch (Throwable e) {
        ended(pending, null, e);
        throw e;
      }
      // observed on the side: the caller keeps the target's own stage (its cancellation reaches the acquisition)
      stage.whenComplete((r, e) -> ended(pending,
          r instanceof Lease l ? l : r instanceof Optional<?> o ? (Lease) o.orElse(null) : null,
          e instanceof CompletionException && e.getCause() != null ? e.getCause() : e));
      return stage;
    }

    /** The task runs once the lock is held: that is the grant; failing before it ran is not. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private Object lockedTask(DistributedLock lock, Method method, Object[] args) throws Throwable {
      if (lock.isHeldByCurrentThread() || args == null || args.length != 2 || args[1] == null) {
        return forward(target, method, args);
      }
      AcquisitionHook.Pending pending = started(lock.name());
      AtomicBoolean ran = new AtomicBoolean();
      Runnable grant = () -> {
        if (ran.compareAndSet(false, true)) {
          ended(pending, lock.currentThreadLease().orElse(null), null);
        }
      };
      Object[] wrapped = {args[0], null};
      if (args[1] instanceof LeaseSource.LockedRunnable task) {
        wrapped[1] = (LeaseSource.LockedRunnable) () -> {
          grant.run();
          task.run();
        };
      } else {
        LeaseSource.LockedCallable task = (LeaseSource.LockedCallable) args[1];
        wrapped[1] = (LeaseSource.LockedCallable) () -> {
          grant.run();
          return task.call();
        };
      }
      try {
        return forward(target, method, wrapped);
      } catch (Throwable e) {
        if (ran.compareAndSet(false, true)) {
          ended(pending, null, e);
        }
        throw e;
      }
    }

    private AcquisitionHook.Pending started(String name) {
      try {
        return hook.started(name, kind);
      } catch (RuntimeException e) {
        org.slf4j.LoggerFactory.getLogger(ObservingLockClient.class).warn("lock observer failed: {}", e.toString());
        return NONE;
      }
    }
  }

  private static final AcquisitionHook.Pending NONE = new AcquisitionHook.Pending() {
    @Override
    public void granted(Lease lease) {}

    @Override
    public void notGranted(LockObserver.Outcome outcome, Throwable error) {}
  };

  private static void ended(AcquisitionHook.Pending pending, Lease lease, Throwable error) {
    AcquisitionHook.safely(() -> {
      if (lease != null) {
        pending.granted(lease);
      } else if (error == null || error instanceof AcquireTimeoutException) {
        pending.notGranted(LockObserver.Outcome.TIMEOUT, error);
      } else {
        pending.notGranted(LockObserver.Outcome.FAILED, error);
      }
    });
  }

  private static Object forward(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /** equals, hashCode, toString of a proxy; null for any other method. */
  private static Object objectMethod(Object proxy, Method method, Object[] args, Object target) {
    if (method.getDeclaringClass() != Object.class) {
      return null;
    }
    return switch (method.getName()) {
      case "equals" -> proxy == args[0];
      case "hashCode" -> System.identityHashCode(proxy);
      case "toString" -> "observed " + target;
      default -> null;
    };
  }
}
