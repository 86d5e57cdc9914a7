package io.locksmith.spring;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Each auto-configured client's {@link LeaseTracker}, by client name; filled at start-up. Thread-safe. */
final class LeaseTrackers {
  final Map<String, LeaseTracker> byClient = new ConcurrentHashMap<>();
}
