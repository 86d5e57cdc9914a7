package io.locksmith.check;

/** How a worker reaches the recorder and the register: directly in the harness, or over a child's pipes. */
interface Channel {
  /** Records an event stamped by the worker. Never throws. */
  void event(Event e);

  /** @throws ChannelClosedException if the harness cannot be reached any more */
  Register.ReadResult read(String client, String lock, long token);

  /**
   * @return true if applied, false if the fence refused it
   * @throws ChannelClosedException if the harness cannot be reached any more
   */
  boolean write(String client, String lock, long token, long readFrom);

  /**
   * A reader's look at the register ({@link Register#peek}).
   *
   * @return the version seen
   * @throws ChannelClosedException if the harness cannot be reached any more
   */
  long peek(String client, String lock, boolean again, long firstVersion);

  /** The harness went away or did not answer in time. */
  final class ChannelClosedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ChannelClosedException(String message) {
      super(message);
    }
  }
}
