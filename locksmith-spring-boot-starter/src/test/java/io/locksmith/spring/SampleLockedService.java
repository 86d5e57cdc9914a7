package io.locksmith.spring;

/** A locked method for the tests against real servers: returns the fencing token it ran under. */
public class SampleLockedService {

  /**
   * @param name the lock name
   * @return the call's fencing token
   */
  @DistributedLock(name = "#p0", waitTime = "0")
  public long tokenOf(String name) {
    return LockedCall.fencingToken();
  }
}
