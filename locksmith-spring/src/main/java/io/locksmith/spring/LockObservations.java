package io.locksmith.spring;

import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockObserver;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * Micrometer observations of lock waits and holds, so that tracing shows them as spans and an observation
 * handler can time them: {@value #WAIT} from the start of an acquisition to its grant or failure (tagged
 * {@code outcome} = {@code granted}/{@code timeout}/{@code failed}, with the error of a failure), and
 * {@value #HOLD} from the grant to the release or loss ({@code end} = {@code released}/{@code lost}). Both
 * carry the low-cardinality tags {@code backend}, {@code client} and {@code kind}; the lock name only for names
 * that match {@code locksmith.metrics.name-tags} (else {@code name} = {@code other}, and no {@code name} tag at
 * all when no pattern is set), as for the meters. The names differ from {@code locksmith-micrometer}'s meters
 * ({@code locksmith.acquire}, {@code locksmith.hold}) so that Boot's meter handler does not register a second
 * meter of the same name with other tags.
 *
 * <p>Thread-safe. The wait observation starts on the acquiring thread (its parent is the observation current
 * there, e.g. the HTTP request's); the hold ends on the client's event thread, when the lease's state changes.
 */
final class LockObservations {

  /** The observation of a wait for a lock. */
  static final String WAIT = "locksmith.lock.wait";
  /** The observation of a lock held. */
  static final String HOLD = "locksmith.lock.hold";

  private final Supplier<ObservationRegistry> registry;
  private final List<Pattern> namePatterns;

  /**
   * @param registry the application's registry, looked up when a client is built (null or no-op: none)
   * @param namePatterns the lock names that may be a tag
   */
  LockObservations(Supplier<ObservationRegistry> registry, List<String> namePatterns) {
    this.registry = registry;
    this.namePatterns = namePatterns.stream().map(Pattern::compile).toList();
  }

  /** @return the hook for one client, or null when there is no registry to report to */
  AcquisitionHook hookFor(String client, String backend) {
    ObservationRegistry r = registry.get();
    if (r == null || r.isNoop()) {
      return null;
    }
    return (name, kind) -> {
      // the hold's parent is the wait's: both belong to the caller's work, wherever the grant is completed
      Observation parent = r.getCurrentObservation();
      Observation wait = tagged(Observation.createNotStarted(WAIT, r), client, backend, kind, name)
          .contextualName("lock wait " + kind).start();
      return new AcquisitionHook.Pending() {
        @Override
        public void granted(Lease lease) {
          wait.lowCardinalityKeyValue("outcome", "granted").stop();
          Observation hold = tagged(Observation.createNotStarted(HOLD, r), client, backend, kind, name)
              .contextualName("lock hold " + kind).parentObservation(parent)
              .start();
          AcquisitionHook.untilEnd(lease, (l, from, to) -> {
            if (to == LeaseState.RELEASED || to == LeaseState.LOST) {
              hold.lowCardinalityKeyValue("end", to.name().toLowerCase(Locale.ROOT)).stop();
            }
          });
        }

        @Override
        public void notGranted(LockObserver.Outcome outcome, Throwable error) {
          wait.lowCardinalityKeyValue("outcome", outcome.name().toLowerCase(Locale.ROOT));
          if (error != null) {
            wait.error(error);
          }
          wait.stop();
        }
      };
    };
  }

  private Observation tagged(Observation o, String client, String backend, String kind, String name) {
    o.lowCardinalityKeyValue("backend", backend).lowCardinalityKeyValue("client", client).lowCardinalityKeyValue("kind", kind);
    if (!namePatterns.isEmpty()) {
      o.lowCardinalityKeyValue("name", namePatterns.stream().anyMatch(p -> p.matcher(name).matches()) ? name : "other");
    }
    return o;
  }
}
