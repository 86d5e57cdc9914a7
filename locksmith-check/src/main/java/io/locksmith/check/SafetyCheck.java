package io.locksmith.check;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Entry point of the safety checker ({@code locksmith check}): runs contending clients against a freshly
 * started backend while injecting a fault, records every operation in one history and checks it.
 *
 * <pre>{@code
 * CheckReport report = SafetyCheck.run(CheckSettings.builder(CheckBackend.REDIS, Fault.PAUSE_HOLDER)
 *     .fenced(true).duration(Duration.ofSeconds(30)).build(), System.out);
 * Files.writeString(Path.of("check.json"), report.toJson());
 * }</pre>
 *
 * <p><b>Bounded.</b> A run ends by itself: contention stops after the duration, clients get a bounded
 * drain time and are then killed; a watchdog ends the run by force 150 s after its duration (start-up
 * and shut-down included), and every server, proxy and client JVM is stopped on every exit path.
 *
 * <p><b>Thread-safety.</b> Stateless; runs may be started from any thread, but concurrent runs compete
 * for the same CPU and distort each other's timing.
 */
public final class SafetyCheck {
  private SafetyCheck() {}

  /**
   * Runs one check.
   *
   * @param settings what to run
   * @param log where progress lines go (the report is returned, not printed)
   * @return the report
   * @throws NullPointerException if an argument is null
   * @throws UnsupportedKindException if the backend's clients do not offer the settings' lock kind (told
   *     by their {@code capabilities()} once the backend is up; nothing is run)
   * @throws IllegalStateException if the backend or a client JVM cannot be started, or the run exceeded
   *     its hard deadline
   * @throws UncheckedIOException if the run's temporary directory or a client JVM cannot be created
   * @throws InterruptedException if the calling thread is interrupted; everything started is stopped
   */
  public static CheckReport run(CheckSettings settings, PrintStream log) throws InterruptedException {
    Objects.requireNonNull(settings, "settings");
    Objects.requireNonNull(log, "log");
    try {
      return new Run(settings, log).execute();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the check: " + e.getMessage(), e);
    } catch (InterruptedException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("check failed: " + e, e);
    }
  }

  /**
   * The backend does not offer the lock kind asked for ({@link CheckSettings#kind()}); the message names
   * the kinds it does offer. A usage error, not an infrastructure failure.
   */
  public static final class UnsupportedKindException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    UnsupportedKindException(String message) {
      super(message);
    }
  }

  /**
   * The result of {@link #selfTest(Duration, PrintStream)}. Immutable.
   *
   * @param reports the unfenced and the fenced run
   * @param passed whether the checker saw the forced violations and fencing prevented them
   * @param problems what went wrong if not passed
   */
  public record SelfTest(List<CheckReport> reports, boolean passed, List<String> problems) {
    /** Copies the lists. */
    public SelfTest {
      reports = List.copyOf(reports);
      problems = List.copyOf(problems);
    }
  }

  /** Attempts per run of the self-test; see {@link #selfTest}. */
  static final int SELF_TEST_ATTEMPTS = 3;

  /**
   * Proves the checker can see a violation: single Redis, holders paused past their (watched, 1 s)
   * leases, once unfenced (must report overlaps and lost updates) and once fenced (must report stale
   * writes rejected, none accepted, no lost update).
   *
   * <p>A run whose pause did not play out is run again, up to {@value #SELF_TEST_ATTEMPTS} attempts: one
   * where no other client got the victim's lock during the pause (inconclusive), an unfenced one that
   * did not show both the overlap and the lost update, or a fenced one that rejected no stale write. A
   * checker that cannot see the violation fails every attempt. A fenced run that accepted a stale write
   * or lost an update fails at once: that is a broken promise, not a pause that missed.
   *
   * @param duration each run's duration, at least 6 s
   * @param log progress lines
   * @return the last attempt of each run, and the verdict
   * @throws IllegalArgumentException if {@code duration} is shorter than 6 s
   * @throws IllegalStateException as {@link #run(CheckSettings, PrintStream)}
   * @throws InterruptedException if interrupted
   */
  public static SelfTest selfTest(Duration duration, PrintStream log) throws InterruptedException {
    return selfTest(duration, 0, log);
  }

  /**
   * As {@link #selfTest(Duration, PrintStream)}, each run {@linkplain CheckSettings.Builder#stopEarly ending
   * early} once {@code injections} pauses have played out and a lock was granted after the last one; the
   * duration then only bounds each run. For a short self-test (CI).
   *
   * @param injections pauses per run before it ends, 0 to run the whole duration
   * @throws IllegalArgumentException also if {@code injections} is not in 0..1,000
   */
  public static SelfTest selfTest(Duration duration, int injections, PrintStream log) throws InterruptedException {
    if (duration.compareTo(Duration.ofSeconds(6)) < 0) {
      throw new IllegalArgumentException("the self-test needs at least 6 s per run, was " + duration);
    }
    List<CheckReport> reports = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    for (boolean fenced : new boolean[] {false, true}) {
      String mode = fenced ? "fenced" : "unfenced";
      for (int attempt = 1; ; attempt++) {
        CheckReport r = run(CheckSettings.builder(CheckBackend.REDIS, Fault.PAUSE_HOLDER).fenced(fenced)
            .duration(duration).lease(Duration.ofSeconds(1), true).stopEarly(0, injections).build(), log);
        String problem = selfTestProblem(r);
        boolean brokenPromise = fenced && (r.staleWritesAccepted() > 0 || r.lostUpdates() > 0);
        if (problem == null || brokenPromise || attempt == SELF_TEST_ATTEMPTS) {
          reports.add(r);
          if (problem != null) {
            problems.add(mode + " run" + (brokenPromise ? "" : ", attempt " + attempt + " of "
                + SELF_TEST_ATTEMPTS) + ": " + problem);
          }
          break;
        }
        log.println("self-test: " + mode + " run, attempt " + attempt + ": " + problem + "; running it again");
      }
    }
    return new SelfTest(reports, problems.isEmpty(), problems);
  }

  /** @return what the self-test's run failed to show, or null if it showed what it must */
  static String selfTestProblem(CheckReport r) {
    if (!r.conclusive()) {
      return "inconclusive: " + String.join("; ", r.inconclusiveReasons());
    }
    if (!r.settings().fenced() && !r.checkerSawForcedViolation()) {
      return "holders were paused past their leases, yet the checker saw " + r.overlaps() + " overlaps and "
          + r.lostUpdates() + " lost updates: the checker is broken";
    }
    if (r.settings().fenced() && (r.staleWritesAccepted() > 0 || r.lostUpdates() > 0
        || r.staleWritesRejected() == 0)) {
      return "expected stale writes rejected > 0, accepted = 0, lost updates = 0; saw " + r.staleWritesRejected()
          + ", " + r.staleWritesAccepted() + ", " + r.lostUpdates();
    }
    return null;
  }
}
