package io.locksmith.spring;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;

/**
 * Finds the {@link DistributedLock} methods of every bean as it is created and checks what can be checked
 * before the first call, so that a mistake fails the start-up instead of running unlocked or sharing one
 * lock between keys:
 * <ul>
 *   <li>each name's {@code #variables} are ones the method provides (a class compiled without
 *       {@code -parameters} has no parameter names; see {@link LockNameExpression#validate});
 *   <li>the result type is one the advisor can hold the lock for;
 *   <li>once every singleton exists, each method's client is configured;
 *   <li>methods the proxy cannot intercept ({@code private}, {@code final}, {@code static}, not on the
 *       proxied interfaces, or a bean that was not proxied at all) are logged at WARN.
 * </ul>
 * Self-invocation ({@code this.lockedMethod()}) runs unlocked too; calls in the class's own bytecode are
 * found by {@link SelfInvocations} and logged with the others.
 *
 * <p>Failures are thrown as {@link IllegalStateException} from bean creation or from
 * {@link #afterSingletonsInstantiated()}, which fails the context refresh. Thread-safe (concurrent maps);
 * the findings are kept only until the start-up checks have run.
 */
final class DistributedLockMethods implements BeanPostProcessor, SmartInitializingSingleton {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(DistributedLockMethods.class);

  private final ConfigurableListableBeanFactory beanFactory;
  private final ParameterNameDiscoverer names = new DefaultParameterNameDiscoverer();
  private final Map<Class<?>, Map<Method, DistributedLock>> byClass = new ConcurrentHashMap<>();
  /** Annotated method to the methods of its own class that call it directly. */
  private final Map<Method, List<String>> selfCalls = new ConcurrentHashMap<>();
  /** Bean name to its annotated methods, for the checks after start-up. */
  private final Map<String, Map<Method, DistributedLock>> byBean = new ConcurrentHashMap<>();

  DistributedLockMethods(ConfigurableListableBeanFactory beanFactory) {
    this.beanFactory = beanFactory;
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    Class<?> type = ClassUtils.getUserClass(AopUtils.getTargetClass(bean));
    Map<Method, DistributedLock> methods = byClass.computeIfAbsent(type, this::inspect);
    if (!methods.isEmpty()) {
      byBean.put(beanName, methods);
    }
    return bean;
  }

  /** The class's annotated methods, each checked. */
  private Map<Method, DistributedLock> inspect(Class<?> type) {
    if (!AnnotationUtils.isCandidateClass(type, DistributedLock.class)) {
      return Map.of();
    }
    Map<Method, DistributedLock> found = MethodIntrospector.selectMethods(type,
        (MethodIntrospector.MetadataLookup<DistributedLock>) m -> AnnotatedElementUtils.findMergedAnnotation(m, DistributedLock.class));
    for (Map.Entry<Method, DistributedLock> e : found.entrySet()) {
      LockNameExpression.parse(e.getValue().name(), e.getKey()).validate(names);
      checkResultType(e.getKey());
    }
    selfCalls.putAll(SelfInvocations.find(type, found.keySet()));
    return found.isEmpty() ? Map.of() : new LinkedHashMap<>(found);
  }

  /**
   * Refuses result types whose lock the advisor could not hold for the work's whole duration.
   *
   * @throws IllegalStateException for a {@code CompletionStage} type that a {@code CompletableFuture}
   *     cannot stand in for, or a reactive type other than {@code Mono} and {@code Flux}
   */
  static void checkResultType(Method method) {
    Class<?> type = method.getReturnType();
    if (CompletionStage.class.isAssignableFrom(type) && !type.isAssignableFrom(CompletableFuture.class)) {
      throw new IllegalStateException("@DistributedLock on " + LockNameExpression.describe(method) + ": the result type "
          + type.getName() + " is not supported; declare CompletableFuture or CompletionStage (the caller gets a copy"
          + " that cannot end the lock of the running work)");
    }
    boolean reactor = ClassUtils.isPresent("reactor.core.publisher.Mono", DistributedLockMethods.class.getClassLoader());
    if (reactor && ReactiveLocking.isPublisher(type) && !ReactiveLocking.isMono(type) && !ReactiveLocking.isFlux(type)) {
      throw new IllegalStateException("@DistributedLock on " + LockNameExpression.describe(method) + ": the result type "
          + type.getName() + " is not supported; return Mono or Flux (locked from subscription to termination)");
    }
  }

  @Override
  public void afterSingletonsInstantiated() {
    try {
      checkClients();
      reportUnadvised();
    } finally {
      byClass.clear();
      selfCalls.clear();
    }
  }

  private void checkClients() {
    LockClients clients = beanFactory.getBeanProvider(LockClients.class).getIfAvailable();
    Set<String> configured = clients == null ? Set.of() : clients.all().keySet();
    List<String> missing = new ArrayList<>();
    byBean.values().forEach(methods -> methods.forEach((method, a) -> {
      String client = a.client().isEmpty() ? LockClients.DEFAULT : a.client();
      if (!configured.contains(client)) {
        missing.add(LockNameExpression.describe(method) + " needs " + (client.equals(LockClients.DEFAULT)
            ? "the primary lock client: set locksmith.backend (in-jvm, redis, redlock, zookeeper, jdbc) or a backend's"
                + " address (locksmith.redis.uri, locksmith.redlock.nodes, locksmith.zookeeper.connect-string), or define a"
                + " LockClient bean"
            : "lock client '" + client + "': set locksmith.clients." + client + ".backend or a backend's address under"
                + " locksmith.clients." + client));
      }
    }));
    if (!missing.isEmpty()) {
      throw new IllegalStateException("@DistributedLock methods without their lock client (configured: " + configured
          + "):\n  " + String.join("\n  ", missing));
    }
  }

  private void reportUnadvised() {
    List<String> unadvised = new ArrayList<>();
    List<String> selfCalled = new ArrayList<>();
    byBean.forEach((beanName, methods) -> {
      if (!beanFactory.containsSingleton(beanName)) {
        return; // prototype or scoped: created per use, proxied the same way as a singleton would be
      }
      Object bean = beanFactory.getSingleton(beanName);
      methods.keySet().forEach(method -> {
        String why = whyNotAdvised(bean, method);
        if (why != null) {
          unadvised.add(LockNameExpression.describe(method) + " (bean '" + beanName + "'): " + why);
        } else if (selfCalls.containsKey(method)) {
          selfCalled.add(LockNameExpression.describe(method) + " (bean '" + beanName + "'): called directly by "
              + String.join(", ", selfCalls.get(method)) + " of the same class");
        }
      });
    });
    byBean.clear();
    if (!unadvised.isEmpty()) {
      LOG.warn("@DistributedLock: these methods (or these calls of them) run WITHOUT their lock, as Spring's proxy cannot"
          + " intercept them:\n  {}",
          String.join("\n  ", unadvised));
    }
    if (!selfCalled.isEmpty()) {
      // the bytecode shows the call, not its receiver: an injected self-reference (the proxy) is fine
      LOG.warn("@DistributedLock: these methods are called from their own class; a call on 'this' bypasses Spring's"
          + " proxy and runs WITHOUT the lock (calls through an injected reference to the bean are locked; call"
          + " through the bean or use LockTemplate):\n  {}", String.join("\n  ", selfCalled));
    }
  }

  /** Why the proxy cannot intercept calls to the method from other beans, or null when it can. */
  private static String whyNotAdvised(Object bean, Method method) {
    int mod = method.getModifiers();
    if (Modifier.isStatic(mod)) {
      return "static methods are never advised";
    }
    if (Modifier.isPrivate(mod)) {
      return "private methods are never advised; make it public (and call it through the bean, not this)";
    }
    if (!AopUtils.isAopProxy(bean)) {
      return "the bean is not proxied (it was created before the auto-proxy creator, e.g. as a dependency of a"
          + " BeanPostProcessor)";
    }
    if (AopUtils.isJdkDynamicProxy(bean)) {
      for (Class<?> i : bean.getClass().getInterfaces()) {
        if (ClassUtils.hasMethod(i, method.getName(), method.getParameterTypes())) {
          return null;
        }
      }
      return "the bean is proxied by its interfaces, and this method is on none of them (declare it there, or set"
          + " spring.aop.proxy-target-class=true)";
    }
    if (Modifier.isFinal(mod)) {
      return "final methods cannot be overridden by the class-based proxy; remove final";
    }
    return null;
  }
}
