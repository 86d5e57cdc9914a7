package io.locksmith.spi;

/**
 * Outcome of {@link HandOffOps#releaseAndHandOff}. Immutable.
 *
 * @param releaserHeld whether the releasing owner still held the lock (false: nothing was changed)
 * @param grant the next owner's grant ({@link AcquireReply#granted()} with its token and one hold), or null
 *     if the lock was not handed over (released plainly, or not held)
 */
public record HandOffReply(boolean releaserHeld, AcquireReply grant) {
  /**
   * @throws IllegalArgumentException if a grant is given although the releaser did not hold the lock, or
   *     a grant that is not granted
   */
  public HandOffReply {
    if (grant != null && (!releaserHeld || !grant.granted())) {
      throw new IllegalArgumentException("a hand-off grants only what its releaser held: releaserHeld=" + releaserHeld
          + ", grant=" + grant);
    }
  }
}
