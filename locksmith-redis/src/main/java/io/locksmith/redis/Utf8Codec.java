package io.locksmith.redis;

import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.codec.ToByteBufEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.ByteBuffer;

/**
 * UTF-8 strings, as Lettuce's {@link StringCodec#UTF8}, but with an exact size estimate, so that Lettuce
 * writes each key and argument straight into the command's buffer.
 *
 * <p>Why: for a codec whose estimate is not exact, Lettuce encodes every key and argument into a temporary
 * pooled buffer first (so that it can write the length header) and then copies it; {@code StringCodec.UTF8}
 * says its estimate is exact only for ASCII. That temporary buffer per argument (allocation, recycling,
 * copy) was the largest single cost on the event-loop thread for our scripts of up to ten keys and
 * arguments (a profile of the many-keys bench put argument encoding at about 40 % of that thread).
 * Netty's {@link ByteBufUtil#utf8Bytes} counts exactly the bytes {@link ByteBufUtil#writeUtf8} writes
 * (an unpaired surrogate as one {@code '?'} in both), so the header and the bytes agree for any string.
 * Decoding is {@code StringCodec.UTF8}'s.
 *
 * <p>Stateless and thread-safe; never throws for a string or null (null encodes as empty, as in
 * {@code StringCodec}).
 */
final class Utf8Codec implements RedisCodec<String, String>, ToByteBufEncoder<String, String> {
  static final Utf8Codec INSTANCE = new Utf8Codec();
  private static final StringCodec DECODE = StringCodec.UTF8;

  private Utf8Codec() {}

  @Override
  public String decodeKey(ByteBuffer bytes) {
    return DECODE.decodeKey(bytes);
  }

  @Override
  public String decodeValue(ByteBuffer bytes) {
    return DECODE.decodeValue(bytes);
  }

  @Override
  public ByteBuffer encodeKey(String key) {
    return DECODE.encodeKey(key);
  }

  @Override
  public ByteBuffer encodeValue(String value) {
    return DECODE.encodeValue(value);
  }

  @Override
  public void encodeKey(String key, ByteBuf target) {
    write(key, target);
  }

  @Override
  public void encodeValue(String value, ByteBuf target) {
    write(value, target);
  }

  private static void write(String s, ByteBuf target) {
    if (s != null) {
      ByteBufUtil.writeUtf8(target, s);
    }
  }

  @Override
  public int estimateSize(Object keyOrValue) {
    return keyOrValue instanceof CharSequence s ? ByteBufUtil.utf8Bytes(s) : 0;
  }

  @Override
  public boolean isEstimateExact() {
    return true;
  }
}
