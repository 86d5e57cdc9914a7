package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.Lease;
import io.locksmith.LockClient;
import java.io.IOException;
import java.io.StringWriter;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Lock names are never shared by accident: a name variable the method cannot provide fails the start-up
 * (above all when the class was compiled without {@code -parameters}), and a null or blank part is refused
 * at the call.
 */
@Tag("unit")
class DistributedLockNameTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LocksmithAutoConfiguration.class))
      .withPropertyValues("locksmith.backend=in-jvm");

  /** Names with parts that may be null or blank. */
  public static class Orders {
    @DistributedLock(name = "order-#{#p0}")
    public String order(String id) {
      return LockedCall.currentLease().orElseThrow().lockName();
    }

    @DistributedLock(name = "#p0")
    public String whole(String id) {
      return LockedCall.currentLease().orElseThrow().lockName();
    }
  }

  /** A misspelt variable (this module compiles with -parameters, so the names are known). */
  public static class Misspelt {
    @DistributedLock(name = "stock:#{#skew}")
    public String reserve(String sku) {
      return sku;
    }
  }

  /** The same source as {@code Stock} below, compiled with the module (so with -parameters). */
  public static class WithNames {
    @DistributedLock(name = "stock:#{#sku}")
    public String reserve(String sku) {
      return LockedCall.currentLease().orElseThrow().lockName();
    }
  }

  private static final String STOCK = "package fixture;\n"
      + "public class Stock {\n"
      + "  @io.locksmith.spring.DistributedLock(name = \"stock:#{#sku}\")\n"
      + "  public String reserve(String sku) {\n"
      + "    return io.locksmith.spring.LockedCall.currentLease().orElseThrow().lockName();\n"
      + "  }\n"
      + "}\n";

  /** Compiles {@link #STOCK} as a build without {@code -parameters} would (javac's default). */
  private static Class<?> stockWithoutParameterNames(Path dir) throws IOException, ClassNotFoundException {
    Path source = dir.resolve("fixture/Stock.java");
    Files.createDirectories(source.getParent());
    Files.writeString(source, STOCK);
    String classpath = String.join(java.io.File.pathSeparator, location(DistributedLock.class), location(Lease.class));
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    StringWriter out = new StringWriter();
    int rc = javac.getTask(out, null, null, List.of("-classpath", classpath, "-d", dir.toString()), null,
        javac.getStandardFileManager(null, null, null).getJavaFileObjects(source.toFile())).call() ? 0 : 1;
    assertThat(rc).as("javac: %s", out).isZero();
    URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()}, DistributedLockNameTest.class.getClassLoader());
    return loader.loadClass("fixture.Stock");
  }

  private static String location(Class<?> type) {
    try {
      return Paths.get(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void withoutParameterNamesTheStartUpFailsNamingTheMethodTheVariableAndTheFixes(@TempDir Path dir) throws Exception {
    Class<?> stock = stockWithoutParameterNames(dir);
    Method reserve = stock.getMethod("reserve", String.class);
    assertThat(reserve.getParameters()[0].isNamePresent()).as("the fixture has no parameter names").isFalse();
    runner.withClassLoader(stock.getClassLoader()).withBean("stock", Object.class, () -> newInstance(stock)).run(ctx -> {
      if (ctx.getStartupFailure() == null) {
        Object bean = ctx.getBean("stock");
        Method m = bean.getClass().getMethod("reserve", String.class);
        // what an application without -parameters got: one lock for every SKU
        assertThat(ctx).as("started, and SKU A locked '%s', SKU B '%s'", m.invoke(bean, "A"), m.invoke(bean, "B")).hasFailed();
      }
      assertThat(messages(ctx.getStartupFailure())).contains("fixture.Stock.reserve", "#sku", "-parameters", "#p0", "#a0");
    });
  }

  @Test
  void withParameterNamesTheSameNameLocksEachSku() {
    runner.withBean(WithNames.class, WithNames::new).run(ctx -> {
      WithNames s = ctx.getBean(WithNames.class);
      assertThat(s.reserve("A")).isEqualTo("stock:A");
      assertThat(s.reserve("B")).isEqualTo("stock:B");
    });
  }

  @Test
  void aVariableTheMethodDoesNotHaveFailsTheStartUp() {
    runner.withBean(Misspelt.class, Misspelt::new).run(ctx -> {
      assertThat(ctx).hasFailed();
      assertThat(messages(ctx.getStartupFailure())).contains("Misspelt.reserve", "#skew", "sku");
    });
  }

  @Test
  void aNullOrBlankPartIsRefusedAtTheCallAndNothingIsLocked() {
    runner.withBean(Orders.class, Orders::new).run(ctx -> {
      Orders o = ctx.getBean(Orders.class);
      LockClient client = ctx.getBean(LockClient.class);
      assertThatThrownBy(() -> o.order(null)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("order-#{#p0}").hasMessageContaining("#p0").hasMessageContaining("null");
      assertThatThrownBy(() -> o.order("  ")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("blank");
      assertThatThrownBy(() -> o.whole(null)).isInstanceOf(IllegalArgumentException.class);
      assertThat(client.inspect("order-")).isEmpty();
      assertThat(o.order("7")).isEqualTo("order-7");
    });
  }

  private static Object newInstance(Class<?> type) {
    try {
      return type.getDeclaredConstructor().newInstance();
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Every message of a failure and its causes. */
  static String messages(Throwable t) {
    StringBuilder b = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      b.append(c).append('\n');
    }
    return b.toString();
  }
}
