package io.locksmith.check;

/**
 * One entry of a history, Jepsen style: an operation's invocation and its completion are separate
 * events. Immutable.
 *
 * @param nanos the stamp, {@link System#nanoTime()} of the process that observed the event (on Linux
 *     CLOCK_MONOTONIC, one clock for every process on the machine)
 * @param client the client (worker) id, e.g. {@code p1-t0}; {@code nemesis} for faults
 * @param op what was done
 * @param type invoke, or how it ended
 * @param lock the lock name (= register name), or {@code ""}; for a {@code FAULT} invoke that picked a
 *     victim, the victim's lock (its detail then ends with {@code Checkers.victimTag(client)})
 * @param token the fencing token involved, or 0
 * @param value for read/write completions the register version (write id) read or written, else 0
 * @param readFrom for writes the version the writer had read, else 0
 * @param detail free text (fault description, exception), never null, no line breaks
 */
record Event(long nanos, String client, Op op, Type type, String lock, long token, long value, long readFrom,
    String detail) {

  /** Operations. */
  /**
   * {@code LOST}: a client's lease reported itself lost ({@code onLost} ran), with the lease's token.
   * {@code SHARED_ACQUIRE} / {@code SHARED_RELEASE}: a reader of a read-write lock taking / releasing the
   * read side (shared: never counted as holds of the exclusive checkers). {@code PEEK}: such a reader's
   * look at the register (value: the version seen; the second look of a hold has detail {@link
   * Register#AGAIN} and readFrom = the version of the first).
   */
  enum Op { ACQUIRE, RELEASE, READ, WRITE, FAULT, PROCESS, LOST, SHARED_ACQUIRE, SHARED_RELEASE, PEEK }

  /**
   * Outcomes. {@code INFO} is Jepsen's "indeterminate": the operation may or may not have taken effect
   * (e.g. an acquisition that failed with a timeout the server may still have granted).
   */
  enum Type { INVOKE, OK, FAIL, INFO }

  Event {
    detail = detail == null ? "" : detail.replace('\n', ' ').replace('\r', ' ');
    lock = lock == null ? "" : lock;
  }

  static Event of(long nanos, String client, Op op, Type type, String lock, long token) {
    return new Event(nanos, client, op, type, lock, token, 0, 0, "");
  }
}
