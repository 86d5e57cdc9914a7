package io.locksmith.jdbc;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.Calendar;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TimeZone;
import java.util.concurrent.ConcurrentHashMap;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * A Java agent for {@link JdbcClientWallClockTest}'s child JVM that puts the wall clock of every class
 * outside the JDK off by the number of milliseconds given as the agent argument: the locksmith code,
 * the JDBC driver, the pool and the test's own classes. It rewrites, as each class is loaded, the call
 * sites of {@code System.currentTimeMillis()}, {@code Instant.now()}, {@code Clock.systemUTC()/
 * systemDefaultZone()/system(zone)}, {@code new Date()}, {@code Calendar.getInstance(..)} and the
 * {@code now()}/{@code now(zone)} of {@code LocalDate, LocalTime, LocalDateTime, OffsetDateTime,
 * ZonedDateTime} into the static methods of this class, which return the real value shifted.
 *
 * <p>Not shifted: reads inside the JDK itself (classes of the boot and platform class loaders, e.g.
 * certificate validity checks), {@code new GregorianCalendar()}, and reads through reflection or
 * method handles. {@code System.nanoTime()} is left alone on purpose: it is no wall clock. Classes
 * loaded before the agent starts (only JDK ones) are not rewritten. A class that cannot be rewritten
 * is loaded unchanged and reported by {@link #failures()}.
 *
 * <p>Thread-safe. Public only because rewritten classes of other packages call it.
 */
public final class ShiftedWallClock {
  private static final String SELF = ShiftedWallClock.class.getName().replace('.', '/');
  /** "owner.name descriptor" of a static wall-clock read → the method of this class with that descriptor. */
  private static final Map<String, String> STATIC_READS = Map.ofEntries(
      Map.entry("java/lang/System.currentTimeMillis()J", "currentTimeMillis"),
      Map.entry("java/time/Instant.now()Ljava/time/Instant;", "instantNow"),
      Map.entry("java/time/Clock.systemUTC()Ljava/time/Clock;", "systemUTC"),
      Map.entry("java/time/Clock.systemDefaultZone()Ljava/time/Clock;", "systemDefaultZone"),
      Map.entry("java/time/Clock.system(Ljava/time/ZoneId;)Ljava/time/Clock;", "system"),
      Map.entry("java/time/LocalDate.now()Ljava/time/LocalDate;", "localDateNow"),
      Map.entry("java/time/LocalDate.now(Ljava/time/ZoneId;)Ljava/time/LocalDate;", "localDateNow"),
      Map.entry("java/time/LocalTime.now()Ljava/time/LocalTime;", "localTimeNow"),
      Map.entry("java/time/LocalTime.now(Ljava/time/ZoneId;)Ljava/time/LocalTime;", "localTimeNow"),
      Map.entry("java/time/LocalDateTime.now()Ljava/time/LocalDateTime;", "localDateTimeNow"),
      Map.entry("java/time/LocalDateTime.now(Ljava/time/ZoneId;)Ljava/time/LocalDateTime;", "localDateTimeNow"),
      Map.entry("java/time/OffsetDateTime.now()Ljava/time/OffsetDateTime;", "offsetDateTimeNow"),
      Map.entry("java/time/OffsetDateTime.now(Ljava/time/ZoneId;)Ljava/time/OffsetDateTime;", "offsetDateTimeNow"),
      Map.entry("java/time/ZonedDateTime.now()Ljava/time/ZonedDateTime;", "zonedDateTimeNow"),
      Map.entry("java/time/ZonedDateTime.now(Ljava/time/ZoneId;)Ljava/time/ZonedDateTime;", "zonedDateTimeNow"),
      Map.entry("java/util/Calendar.getInstance()Ljava/util/Calendar;", "calendar"),
      Map.entry("java/util/Calendar.getInstance(Ljava/util/TimeZone;)Ljava/util/Calendar;", "calendar"),
      Map.entry("java/util/Calendar.getInstance(Ljava/util/Locale;)Ljava/util/Calendar;", "calendar"),
      Map.entry("java/util/Calendar.getInstance(Ljava/util/TimeZone;Ljava/util/Locale;)Ljava/util/Calendar;",
          "calendar"));

  private static volatile long offsetMillis;
  private static final Set<String> REWRITTEN = ConcurrentHashMap.newKeySet();
  private static final Set<String> FAILED = ConcurrentHashMap.newKeySet();

  private ShiftedWallClock() {}

  /**
   * The agent's entry point.
   *
   * @param args the offset in milliseconds, e.g. {@code 86400000} or {@code -86400000}
   * @param instrumentation the JVM's instrumentation
   * @throws NumberFormatException if {@code args} is not a number
   */
  public static void premain(String args, Instrumentation instrumentation) {
    offsetMillis = Long.parseLong(args.trim());
    instrumentation.addTransformer(new Rewriter());
  }

  /** @return the internal names of the classes whose wall-clock reads were rewritten so far */
  public static Set<String> rewritten() {
    return Set.copyOf(REWRITTEN);
  }

  /** @return the classes the agent failed to rewrite (loaded unchanged), with the reason */
  public static Set<String> failures() {
    return Set.copyOf(FAILED);
  }

  public static long currentTimeMillis() {
    return System.currentTimeMillis() + offsetMillis;
  }

  public static Clock systemUTC() {
    return Clock.offset(Clock.systemUTC(), Duration.ofMillis(offsetMillis));
  }

  public static Clock systemDefaultZone() {
    return Clock.offset(Clock.systemDefaultZone(), Duration.ofMillis(offsetMillis));
  }

  public static Clock system(ZoneId zone) {
    return Clock.offset(Clock.system(zone), Duration.ofMillis(offsetMillis));
  }

  public static Instant instantNow() {
    return systemUTC().instant();
  }

  public static LocalDate localDateNow() {
    return LocalDate.now(systemDefaultZone());
  }

  public static LocalDate localDateNow(ZoneId zone) {
    return LocalDate.now(system(zone));
  }

  public static LocalTime localTimeNow() {
    return LocalTime.now(systemDefaultZone());
  }

  public static LocalTime localTimeNow(ZoneId zone) {
    return LocalTime.now(system(zone));
  }

  public static LocalDateTime localDateTimeNow() {
    return LocalDateTime.now(systemDefaultZone());
  }

  public static LocalDateTime localDateTimeNow(ZoneId zone) {
    return LocalDateTime.now(system(zone));
  }

  public static OffsetDateTime offsetDateTimeNow() {
    return OffsetDateTime.now(systemDefaultZone());
  }

  public static OffsetDateTime offsetDateTimeNow(ZoneId zone) {
    return OffsetDateTime.now(system(zone));
  }

  public static ZonedDateTime zonedDateTimeNow() {
    return ZonedDateTime.now(systemDefaultZone());
  }

  public static ZonedDateTime zonedDateTimeNow(ZoneId zone) {
    return ZonedDateTime.now(system(zone));
  }

  public static Calendar calendar() {
    return shifted(Calendar.getInstance());
  }

  public static Calendar calendar(TimeZone zone) {
    return shifted(Calendar.getInstance(zone));
  }

  public static Calendar calendar(Locale locale) {
    return shifted(Calendar.getInstance(locale));
  }

  public static Calendar calendar(TimeZone zone, Locale locale) {
    return shifted(Calendar.getInstance(zone, locale));
  }

  private static Calendar shifted(Calendar calendar) {
    calendar.setTimeInMillis(currentTimeMillis());
    return calendar;
  }

  private static final class Rewriter implements ClassFileTransformer {
    @Override
    public byte[] transform(ClassLoader loader, String className, Class<?> redefined, ProtectionDomain domain,
        byte[] bytes) {
      // JDK classes (boot and platform loaders) keep the true clock: rewriting them would also shift
      // this class's own reads. ASM and this class are skipped for the same reason.
      if (loader == null || loader == ClassLoader.getPlatformClassLoader() || className == null
          || className.startsWith(SELF) || className.startsWith("org/objectweb/asm/")) {
        return null;
      }
      try {
        ClassReader reader = new ClassReader(bytes);
        // COMPUTE_MAXS suffices: the rewrite adds no branch, and the long it pushes for new Date(long)
        // is consumed by the very next instruction, so no stack map frame changes.
        ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
        boolean[] changed = {false};
        reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
          @Override
          public MethodVisitor visitMethod(int access, String name, String desc, String signature,
              String[] exceptions) {
            return new MethodVisitor(Opcodes.ASM9, super.visitMethod(access, name, desc, signature, exceptions)) {
              @Override
              public void visitMethodInsn(int opcode, String owner, String method, String methodDesc,
                  boolean isInterface) {
                String replacement = opcode == Opcodes.INVOKESTATIC
                    ? STATIC_READS.get(owner + "." + method + methodDesc) : null;
                if (replacement != null) {
                  changed[0] = true;
                  super.visitMethodInsn(Opcodes.INVOKESTATIC, SELF, replacement, methodDesc, false);
                } else if (opcode == Opcodes.INVOKESPECIAL && owner.equals("java/util/Date")
                    && method.equals("<init>") && methodDesc.equals("()V")) {
                  // new Date() (or super() of a subclass) becomes new Date(shifted millis)
                  changed[0] = true;
                  super.visitMethodInsn(Opcodes.INVOKESTATIC, SELF, "currentTimeMillis", "()J", false);
                  super.visitMethodInsn(Opcodes.INVOKESPECIAL, owner, method, "(J)V", false);
                } else {
                  super.visitMethodInsn(opcode, owner, method, methodDesc, isInterface);
                }
              }
            };
          }
        }, 0);
        if (!changed[0]) {
          return null;
        }
        REWRITTEN.add(className);
        return writer.toByteArray();
      } catch (RuntimeException | Error e) {
        FAILED.add(className + ": " + e);
        return null;
      }
    }
  }
}
