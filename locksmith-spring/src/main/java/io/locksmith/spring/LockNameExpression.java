package io.locksmith.spring;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.ParserContext;
import org.springframework.expression.common.CompositeStringExpression;
import org.springframework.expression.common.LiteralExpression;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.FunctionReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ClassUtils;

/**
 * The {@link DistributedLock#name()} of one method, parsed once. It checks, when the bean is created,
 * that every {@code #variable} in it is one the method provides, and refuses, at the call, a name with a
 * null or blank computed part: both would otherwise give one lock name shared by unrelated calls
 * ({@code "stock:"} for every SKU). Immutable and thread-safe.
 */
final class LockNameExpression {

  private static final SpelExpressionParser PARSER = new SpelExpressionParser();

  private final String source;
  private final Method method;
  private final Expression expression;

  private LockNameExpression(String source, Method method, Expression expression) {
    this.source = source;
    this.method = method;
    this.expression = expression;
  }

  /**
   * Parses a name: literal text with {@code #{...}} templates, or one whole expression when it starts
   * with {@code #} or {@code @}.
   *
   * @throws IllegalArgumentException if the name is empty or not valid SpEL (naming the method)
   */
  static LockNameExpression parse(String name, Method method) {
    String raw = name.trim();
    if (raw.isEmpty()) {
      throw new IllegalArgumentException(where(name, method) + ": the name is empty");
    }
    try {
      Expression e = raw.startsWith("#{") || !(raw.startsWith("#") || raw.startsWith("@"))
          ? PARSER.parseExpression(raw, ParserContext.TEMPLATE_EXPRESSION)
          : PARSER.parseExpression(raw);
      return new LockNameExpression(name, method, e);
    } catch (ParseException e) {
      throw new IllegalArgumentException(where(name, method) + ": not a valid expression: " + e.getMessage(), e);
    }
  }

  /**
   * Checks that the method provides every variable the name uses: {@code #p<i>}/{@code #a<i>} for its
   * parameters, {@code #root}/{@code #this}, and the parameters' names when the class was compiled with
   * {@code -parameters}.
   *
   * @param names discovers the method's parameter names
   * @throws IllegalStateException naming the method, each unknown variable and the fixes
   */
  void validate(ParameterNameDiscoverer names) {
    int count = method.getParameterCount();
    String[] discovered = names.getParameterNames(method);
    Set<String> provided = new LinkedHashSet<>(List.of("root", "this"));
    for (int i = 0; i < count; i++) {
      provided.add("p" + i);
      provided.add("a" + i);
      if (discovered != null && discovered[i] != null) {
        provided.add(discovered[i]);
      }
    }
    List<String> unknown = new ArrayList<>();
    for (String v : variables()) {
      if (!provided.contains(v)) {
        unknown.add("#" + v);
      }
    }
    if (unknown.isEmpty()) {
      return;
    }
    StringBuilder m = new StringBuilder(where(source, method)).append(" uses ").append(String.join(", ", unknown))
        .append(", which the method does not provide");
    if (discovered == null && count > 0) {
      m.append(": its parameter names are not in the class file, as ").append(method.getDeclaringClass().getName())
          .append(" was compiled without -parameters. Compile with -parameters (Maven: <parameters>true</parameters> in"
              + " maven-compiler-plugin's configuration; Gradle: options.compilerArgs << '-parameters'), or refer to the"
              + " arguments by position: #p0 or #a0 for the first");
    } else {
      m.append("; the method's variables are ").append(String.join(", ", provided.stream().map(v -> "#" + v).toList()));
    }
    m.append(". Without this check every call would lock the same name.");
    throw new IllegalStateException(m.toString());
  }

  /** Every variable and function name the expression refers to. */
  private Set<String> variables() {
    Set<String> out = new LinkedHashSet<>();
    if (expression instanceof CompositeStringExpression c) {
      for (Expression part : c.getExpressions()) {
        collect(part, out);
      }
    } else {
      collect(expression, out);
    }
    return out;
  }

  private static void collect(Expression e, Set<String> out) {
    if (e instanceof SpelExpression s) {
      walk(s.getAST(), out);
    }
  }

  private static void walk(SpelNode node, Set<String> out) {
    if (node instanceof VariableReference || node instanceof FunctionReference) {
      String text = node.toStringAST(); // "#name" or "#name(args)"
      int end = text.indexOf('(');
      out.add(text.substring(1, end < 0 ? text.length() : end));
    }
    for (int i = 0; i < node.getChildCount(); i++) {
      walk(node.getChild(i), out);
    }
  }

  /**
   * The lock name for one call.
   *
   * @throws IllegalArgumentException if a computed part (or the whole name) is null or blank
   */
  String evaluate(EvaluationContext context) {
    if (expression instanceof CompositeStringExpression c) {
      StringBuilder name = new StringBuilder();
      for (Expression part : c.getExpressions()) {
        name.append(part instanceof LiteralExpression ? part.getValue(String.class) : computed(part, context));
      }
      return name.toString();
    }
    if (expression instanceof LiteralExpression) {
      return expression.getValue(String.class);
    }
    return computed(expression, context);
  }

  private String computed(Expression part, EvaluationContext context) {
    Object value = part.getValue(context);
    if (value == null || value.toString().isBlank()) {
      String shown = expression instanceof CompositeStringExpression ? "#{" + part.getExpressionString() + "}" : part.getExpressionString();
      throw new IllegalArgumentException(where(source, method) + ": " + shown + " is " + (value == null ? "null" : "blank")
          + " for this call; the lock is not taken, as that name would be shared by every such call");
    }
    return value.toString();
  }

  private static String where(String name, Method method) {
    return "@DistributedLock(name = \"" + name + "\") on " + describe(method);
  }

  /** {@code com.example.Stock.reserve(String)}: the method as a reader finds it in the source. */
  static String describe(Method method) {
    StringBuilder b = new StringBuilder(ClassUtils.getUserClass(method.getDeclaringClass()).getName()).append('.')
        .append(method.getName()).append('(');
    Class<?>[] types = method.getParameterTypes();
    for (int i = 0; i < types.length; i++) {
      b.append(i == 0 ? "" : ", ").append(types[i].getSimpleName());
    }
    return b.append(')').toString();
  }
}
