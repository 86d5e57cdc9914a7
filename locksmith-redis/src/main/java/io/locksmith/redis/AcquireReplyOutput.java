package io.locksmith.redis;

import io.lettuce.core.output.CommandOutput;
import io.locksmith.spi.AcquireReply;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Reads the reply of the exclusive and fair acquire scripts ({@code {1, token, holds}} granted, {@code {0,
 * retry_ms, last}} busy, {@code {-1}} re-entry whose hold is gone, or the fast path's bare token: granted,
 * one hold) straight into an {@link AcquireReply},
 * as {@link RedisBackend#toAcquireReply} reads it from a generic list. It runs on the connection's
 * event-loop thread, which every grant passes through: it keeps no list, boxes no number and decodes the
 * token from its digits instead of through a string.
 *
 * <p>One instance per command, used by one thread at a time. A reply of another shape (a script of a
 * different version on the server, say) becomes the command's error, as a parse failure of the generic
 * path would; it never throws into the protocol decoder.
 */
final class AcquireReplyOutput extends CommandOutput<String, String, AcquireReply> {
  private int elements;
  private long code;
  private long second;
  private long holds;
  private boolean secondIsToken;
  private boolean array;

  AcquireReplyOutput() {
    super(Utf8Codec.INSTANCE, null);
  }

  @Override
  public void set(long integer) {
    switch (elements++) {
      case 0 -> code = integer;
      case 1 -> second = integer;
      case 2 -> holds = integer;
      default -> unexpected();
    }
  }

  @Override
  public void set(ByteBuffer bytes) {
    switch (elements++) {
      case 0 -> { // not in an array: acquire-fast.lua's grant, the token alone (a smaller reply than {1, token, 1})
        if (array) {
          unexpected();
          return;
        }
        code = 1;
        second = digits(bytes);
        secondIsToken = true;
        holds = 1;
        elements = 3;
      }
      case 1 -> {
        second = digits(bytes);
        secondIsToken = true;
      }
      case 2 -> {
        // the busy reply's last token: not used here (Redlock reads it through the generic path)
      }
      default -> unexpected();
    }
  }

  @Override
  public void multi(int count) {
    // the array header; its elements arrive through set()
    array = true;
  }

  /** @return the decimal number in {@code bytes}, or -1 (and the command's error) if it is not one */
  private long digits(ByteBuffer bytes) {
    if (bytes == null || !bytes.hasRemaining()) {
      unexpected();
      return -1;
    }
    if (bytes.remaining() > 18) { // may not fit a long: as the generic path reads it, or an error
      try {
        // decoded here, not with CommandOutput.decodeString: that arrived in Lettuce 6.5.x, and on an older
        // Lettuce this rare path threw NoSuchMethodError (docs/redis.md, "Lettuce versions")
        byte[] text = new byte[bytes.remaining()];
        bytes.duplicate().get(text);
        return Long.parseLong(new String(text, StandardCharsets.UTF_8));
      } catch (NumberFormatException e) {
        unexpected();
        return -1;
      }
    }
    long value = 0;
    for (int i = bytes.position(); i < bytes.limit(); i++) {
      int d = bytes.get(i) - '0';
      if (d < 0 || d > 9) {
        unexpected();
        return -1;
      }
      value = value * 10 + d;
    }
    return value;
  }

  private void unexpected() {
    if (error == null) {
      setError("unexpected reply from an acquire script (element " + elements + ")");
    }
  }

  /** The whole reply is in (depth 0): a shape that is none of the three becomes the command's error. */
  @Override
  public void complete(int depth) {
    if (depth == 0 && error == null && reply() == null) {
      setError("unexpected reply from an acquire script (" + elements + " element(s), code " + code + ")");
    }
  }

  /** @return the reply, or null if there is an error or the reply has none of the expected shapes */
  @Override
  public AcquireReply get() {
    return error != null ? null : reply();
  }

  private AcquireReply reply() {
    if (code == 1 && secondIsToken && elements == 3) {
      return AcquireReply.granted(second, (int) holds);
    }
    if (code == 0 && !secondIsToken && elements >= 2) {
      return AcquireReply.busy(second);
    }
    if (code == -1 && elements == 1) {
      return AcquireReply.lostHold();
    }
    return null;
  }
}
