package io.locksmith.spring;

import io.locksmith.AcquireInterruptedException;
import io.locksmith.BackendUnavailableException;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringValueResolver;

/**
 * Takes the lock of a {@link DistributedLock} method around the call. Synchronous methods use the lock's
 * thread-owned view, so nested calls on the same name re-enter; methods returning a {@code CompletionStage}
 * hold a lease until the future the method returned completes (the caller gets a dependent copy, so it
 * cannot end the lock early); a {@code Mono} or {@code Flux} takes the lock per subscription, each through
 * its own pass of the advisors inside this one. Thread-safe: per-method settings are parsed once and cached.
 */
final class DistributedLockInterceptor implements MethodInterceptor {

  private static final boolean REACTOR = org.springframework.util.ClassUtils.isPresent("reactor.core.publisher.Mono",
      DistributedLockInterceptor.class.getClassLoader());

  private final LockClients clients;
  private final BeanFactory beanFactory;
  private final StringValueResolver placeholders;
  private final Duration defaultWait;
  private final LockedCallsInFlight inFlight;
  private final ParameterNameDiscoverer names = new DefaultParameterNameDiscoverer();
  private final Map<Method, Settings> settings = new ConcurrentHashMap<>();

  DistributedLockInterceptor(LockClients clients, BeanFactory beanFactory, StringValueResolver placeholders, Duration defaultWait,
      LockedCallsInFlight inFlight) {
    this.clients = clients;
    this.beanFactory = beanFactory;
    this.placeholders = placeholders;
    this.defaultWait = defaultWait;
    this.inFlight = inFlight;
  }

  /** What one annotated method asks for, parsed once. */
  private static final class Settings {
    final DistributedLock annotation;
    final LockNameExpression name;
    final Duration wait;
    final LockOptions options; // null: the client's default
    final int leaseParameter; // index of a Lease parameter, or -1
    final Method fallback;

    Settings(DistributedLock annotation, LockNameExpression name, Duration wait, LockOptions options, int leaseParameter, Method fallback) {
      this.annotation = annotation;
      this.name = name;
      this.wait = wait;
      this.options = options;
      this.leaseParameter = leaseParameter;
      this.fallback = fallback;
    }
  }

  @Override
  public Object invoke(MethodInvocation invocation) throws Throwable {
    Class<?> targetClass = invocation.getThis() == null ? invocation.getMethod().getDeclaringClass()
        : AopUtils.getTargetClass(invocation.getThis());
    Method method = AopUtils.getMostSpecificMethod(invocation.getMethod(), targetClass);
    Settings s = settings.computeIfAbsent(method, m -> parse(m, targetClass));
    String lockName = evaluateName(s, method, invocation);
    LockClient client = clients.forCalls(s.annotation.client().isEmpty() ? LockClients.DEFAULT : s.annotation.client());
    io.locksmith.DistributedLock lock = lockOf(client, s, lockName);
    if (CompletionStage.class.isAssignableFrom(method.getReturnType())) {
      return invokeAsync(invocation, s, lock, lockName);
    }
    if (REACTOR && ReactiveLocking.isMono(method.getReturnType())) {
      return invokeReactive(invocation, s, lock, lockName, false);
    }
    if (REACTOR && ReactiveLocking.isFlux(method.getReturnType())) {
      return invokeReactive(invocation, s, lock, lockName, true);
    }
    boolean acquired;
    try {
      acquired = lock.tryLock(s.wait.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException | BackendUnavailableException e) {
      return notObtained(invocation, s, lockName, e);
    }
    if (!acquired) {
      return notObtained(invocation, s, lockName, null);
    }
    Lease lease = lock.currentThreadLease().orElseThrow(() -> new IllegalStateException("lock held without a lease"));
    bindLease(invocation, s, lease);
    LockedCall.push(lease);
    Object call = inFlight.begin(lease, lockName);
    try {
      return invocation.proceed();
    } finally {
      LockedCall.pop();
      // inside a transaction that outlives the call (the caller's, joined), hold the lock until it ends
      Runnable release = () -> {
        unlock(lock, lockName);
        inFlight.end(call);
      };
      if (!TransactionBoundRelease.deferred(release)) {
        release.run();
      }
    }
  }

  /**
   * Releases after the call. As in core's {@code runLocked}, a release that fails (backend unreachable,
   * lease already lost) is logged and not thrown: the method's work is done, and an exception here would
   * report committed work as failed or hide the method's own exception; the server lets the lease expire.
   */
  private static void unlock(io.locksmith.DistributedLock lock, String lockName) {
    try {
      lock.unlock();
    } catch (RuntimeException e) {
      org.slf4j.LoggerFactory.getLogger(DistributedLockInterceptor.class)
          .warn("@DistributedLock: could not release lock '{}' after the call returned (the call's outcome stands): {}", lockName, e.toString());
    }
  }

  private Object invokeAsync(MethodInvocation invocation, Settings s, io.locksmith.DistributedLock lock, String lockName) throws Throwable {
    Optional<Lease> got;
    try {
      got = lock.tryAcquire(s.wait);
    } catch (InterruptedException | BackendUnavailableException e) {
      return notObtained(invocation, s, lockName, e);
    }
    if (got.isEmpty()) {
      return notObtained(invocation, s, lockName, null);
    }
    Lease lease = got.get();
    bindLease(invocation, s, lease);
    LockedCall.push(lease);
    Object call = inFlight.begin(lease, lockName);
    Object result;
    try {
      result = invocation.proceed();
    } catch (Throwable t) {
      lease.close();
      inFlight.end(call);
      throw t;
    } finally {
      LockedCall.pop();
    }
    if (result == null) {
      lease.close();
      inFlight.end(call);
      return null;
    }
    // Released when the method's own future completes, not when it returns. The caller gets a copy: its
    // complete, cancel or orTimeout ends only its wait, never the lock of work that is still running.
    CompletableFuture<Object> callers = new CompletableFuture<>();
    ((CompletionStage<?>) result).whenComplete((v, e) -> {
      lease.close(); // logs, never throws
      inFlight.end(call);
      if (e != null) {
        callers.completeExceptionally(e);
      } else {
        callers.complete(v);
      }
    });
    return callers;
  }

  /**
   * The invocation one subscription proceeds: a fresh clone each time, so a second subscription (retry,
   * repeat, another subscriber) passes through the inner advisors again ({@code @Transactional}) and sees
   * its own lease, instead of re-entering a spent chain with the first subscription's released lease.
   */
  private static MethodInvocation forSubscription(MethodInvocation invocation, Object[] arguments, Settings s, Lease lease) {
    Object[] args = arguments.clone();
    if (s.leaseParameter >= 0 && args[s.leaseParameter] == null) {
      args[s.leaseParameter] = lease;
    }
    if (!(invocation instanceof ProxyMethodInvocation)) {
      throw new IllegalStateException("@DistributedLock on a reactive method needs Spring AOP's ProxyMethodInvocation, got "
          + invocation.getClass().getName());
    }
    return ((ProxyMethodInvocation) invocation).invocableClone(args);
  }

  /**
   * A {@code Mono} or {@code Flux} method: each subscription acquires, proceeds a fresh clone of the
   * invocation under its own lease, and is tracked in flight until its publisher terminates or is cancelled.
   * One body serves both types; only the adaptation to the method's return type differs.
   */
  @SuppressWarnings("unchecked")
  private Object invokeReactive(MethodInvocation invocation, Settings s, io.locksmith.DistributedLock lock,
      String lockName, boolean many) {
    Object[] arguments = invocation.getArguments().clone();
    java.util.function.Function<Lease, org.reactivestreams.Publisher<Object>> body = lease -> {
      Object call = inFlight.begin(lease, lockName);
      org.reactivestreams.Publisher<Object> result;
      try {
        Object r = forSubscription(invocation, arguments, s, lease).proceed();
        result = r == null ? reactor.core.publisher.Mono.empty() : (org.reactivestreams.Publisher<Object>) r;
      } catch (Throwable t) {
        inFlight.end(call);
        return reactor.core.publisher.Mono.error(t);
      }
      return many ? reactor.core.publisher.Flux.from(result).doFinally(signal -> inFlight.end(call))
          : reactor.core.publisher.Mono.from(result).doFinally(signal -> inFlight.end(call));
    };
    java.util.function.Function<Throwable, org.reactivestreams.Publisher<Object>> failed = failure -> {
      try {
        Object r = notObtained(invocation, s, lockName, failure);
        return r == null ? reactor.core.publisher.Mono.empty() : (org.reactivestreams.Publisher<Object>) r;
      } catch (Throwable t) {
        return reactor.core.publisher.Mono.error(t);
      }
    };
    // Flux.from / Mono.from hand a Flux / Mono back as it is, so the method's own publisher is not wrapped
    return many
        ? ReactiveLocking.lockAroundMany(() -> lock.tryAcquireAsync(s.wait),
            lease -> reactor.core.publisher.Flux.from(body.apply(lease)),
            failure -> reactor.core.publisher.Flux.from(failed.apply(failure)))
        : ReactiveLocking.lockAround(() -> lock.tryAcquireAsync(s.wait),
            lease -> reactor.core.publisher.Mono.from(body.apply(lease)),
            failure -> reactor.core.publisher.Mono.from(failed.apply(failure)));
  }

  private static void bindLease(MethodInvocation invocation, Settings s, Lease lease) {
    if (s.leaseParameter >= 0 && invocation.getArguments()[s.leaseParameter] == null) {
      invocation.getArguments()[s.leaseParameter] = lease;
    }
  }

  /**
   * The {@code onFailure} outcome of an acquisition that did not grant: {@code failure} null when the wait
   * ran out, an {@link InterruptedException} (the thread's flag is set again), or why the backend failed
   * (its message redacted).
   */
  private Object notObtained(MethodInvocation invocation, Settings s, String lockName, Throwable failure) throws Throwable {
    if (failure == null) {
      return notAcquired(invocation, s, lockName, "lock '" + lockName + "' not acquired within " + s.wait, null);
    }
    if (failure instanceof InterruptedException) {
      Thread.currentThread().interrupt();
      return notAcquired(invocation, s, lockName, "interrupted while waiting for lock '" + lockName + "'",
          new AcquireInterruptedException(lockName, (InterruptedException) failure));
    }
    return notAcquired(invocation, s, lockName,
        "lock '" + lockName + "' could not be acquired: " + Redaction.redact(failure.getMessage()), failure);
  }

  private Object notAcquired(MethodInvocation invocation, Settings s, String lockName, String message, Throwable cause) throws Throwable {
    switch (s.annotation.onFailure()) {
      case SKIP:
        return emptyResult(invocation.getMethod().getReturnType());
      case FALLBACK:
        try {
          return s.fallback.invoke(invocation.getThis(), invocation.getArguments());
        } catch (InvocationTargetException e) {
          throw e.getTargetException();
        }
      case THROW:
      default:
        throw new LockNotAcquiredException(lockName, s.wait, message, cause);
    }
  }

  static Object emptyResult(Class<?> type) {
    if (type == boolean.class) {
      return false;
    }
    if (type == char.class) {
      return (char) 0;
    }
    if (type.isPrimitive() && type != void.class) {
      return type == long.class ? 0L : type == double.class ? 0d : type == float.class ? 0f
          : type == int.class ? 0 : type == short.class ? (short) 0 : (byte) 0;
    }
    if (type == Optional.class) {
      return Optional.empty();
    }
    if (CompletionStage.class.isAssignableFrom(type)) {
      return CompletableFuture.completedFuture(null);
    }
    return null;
  }

  private static io.locksmith.DistributedLock lockOf(LockClient client, Settings s, String name) {
    LockOptions o = s.options != null ? s.options : client.options().defaultLockOptions();
    switch (s.annotation.kind()) {
      case FAIR:
        return client.fairLock(name, o);
      case READ:
        return client.readWriteLock(name, o).readLock();
      case WRITE:
        return client.readWriteLock(name, o).writeLock();
      case EXCLUSIVE:
      default:
        return client.lock(name, o);
    }
  }

  private String evaluateName(Settings s, Method method, MethodInvocation invocation) {
    MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(invocation.getThis(), method,
        invocation.getArguments(), names);
    context.setBeanResolver(new BeanFactoryResolver(beanFactory));
    return s.name.evaluate(context);
  }

  private Settings parse(Method method, Class<?> targetClass) {
    DistributedLock a = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
    if (a == null) {
      throw new IllegalStateException("no @DistributedLock on " + method);
    }
    String where = "@DistributedLock on " + method;
    // also checked when the bean is created (DistributedLockMethods); again here for beans it did not see
    LockNameExpression name = LockNameExpression.parse(a.name(), method);
    name.validate(names);
    DistributedLockMethods.checkResultType(method);
    Duration wait = a.waitTime().isEmpty() ? defaultWait : duration(where, "waitTime", a.waitTime());
    if (wait.isNegative()) {
      throw new IllegalArgumentException(where + ": waitTime must not be negative, was " + a.waitTime());
    }
    LockOptions options = null;
    if (!a.leaseTime().isEmpty()) {
      Duration lease = duration(where, "leaseTime", a.leaseTime());
      try {
        options = a.watched() ? LockOptions.watched(lease) : LockOptions.fixed(lease);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(where + ": leaseTime " + e.getMessage(), e);
      }
    } else if (!a.watched()) {
      throw new IllegalArgumentException(where + ": watched = false needs a leaseTime");
    }
    int leaseParameter = -1;
    Class<?>[] types = method.getParameterTypes();
    for (int i = 0; i < types.length; i++) {
      if (types[i] == Lease.class) {
        leaseParameter = i;
      }
    }
    Method fallback = null;
    if (a.onFailure() == DistributedLock.OnFailure.FALLBACK) {
      if (a.fallback().isEmpty()) {
        throw new IllegalArgumentException(where + ": onFailure = FALLBACK needs fallback = \"<method name>\"");
      }
      fallback = ReflectionUtils.findMethod(targetClass, a.fallback(), types);
      if (fallback == null || !method.getReturnType().isAssignableFrom(fallback.getReturnType())
          && !(method.getReturnType().isPrimitive() && fallback.getReturnType() == method.getReturnType())) {
        throw new IllegalArgumentException(where + ": no fallback method " + a.fallback()
            + " with the same parameter types and a compatible return type in " + targetClass.getName());
      }
      ReflectionUtils.makeAccessible(fallback);
    }
    return new Settings(a, name, wait, options, leaseParameter, fallback);
  }

  private Duration duration(String where, String attribute, String text) {
    String resolved = placeholders == null ? text : placeholders.resolveStringValue(text);
    try {
      return "0".equals(resolved.trim()) ? Duration.ZERO : DurationStyle.detectAndParse(resolved.trim());
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new IllegalArgumentException(where + ": " + attribute + " '" + text + "' is not a duration (e.g. 2s, 500ms, PT1S)", e);
    }
  }
}
