package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.spi.AcquireReply;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The two pieces that put script calls on the wire and read their replies without Lettuce's generic
 * paths: {@link Utf8Codec} (its size estimate must be exact, or Lettuce writes a wrong length header and
 * the connection's stream is corrupt) and {@link AcquireReplyOutput}. The lock tests run both against real
 * servers; these pin the edge cases.
 */
@Tag("unit")
class ScriptWireFormatTest {

  @Test
  void theCodecsSizeIsExactlyWhatItWritesForAnyString() {
    String[] samples = {"", "job-1", "locksmith:lock:{stock-é}", "ключ", "日本語", "job-\uD83D\uDE00",
        "unpaired-\uD800", "\uDBFF", "mixed-é\uD83D\uDE00-\uDC00-x"};
    for (String s : samples) {
      ByteBuf buf = Unpooled.buffer();
      Utf8Codec.INSTANCE.encodeValue(s, buf);
      assertThat(Utf8Codec.INSTANCE.estimateSize(s)).as(s).isEqualTo(buf.readableBytes());
      buf.release();
    }
    assertThat(Utf8Codec.INSTANCE.isEstimateExact()).isTrue();
    assertThat(Utf8Codec.INSTANCE.estimateSize(null)).isZero();
  }

  @Test
  void theCodecWritesAndReadsUtf8AsStringCodecDoes() {
    String s = "ключ-é-\uD83D\uDE00";
    ByteBuf buf = Unpooled.buffer();
    Utf8Codec.INSTANCE.encodeKey(s, buf);
    byte[] written = new byte[buf.readableBytes()];
    buf.readBytes(written);
    buf.release();
    assertThat(written).isEqualTo(s.getBytes(StandardCharsets.UTF_8));
    assertThat(Utf8Codec.INSTANCE.decodeValue(ByteBuffer.wrap(written))).isEqualTo(s);
  }

  private static ByteBuffer ascii(String s) {
    return ByteBuffer.wrap(s.getBytes(StandardCharsets.US_ASCII));
  }

  @Test
  void aGrantIsReadWithItsTokenAndHolds() {
    AcquireReplyOutput out = new AcquireReplyOutput();
    out.multi(3);
    out.set(1L);
    out.set(ascii("1795720717813059"));
    out.set(2L);
    out.complete(0);
    assertThat(out.hasError()).isFalse();
    AcquireReply reply = out.get();
    assertThat(reply.granted()).isTrue();
    assertThat(reply.fencingToken()).isEqualTo(1795720717813059L);
    assertThat(reply).isEqualTo(AcquireReply.granted(1795720717813059L, 2));
  }

  @Test
  void theFastPathsBareTokenIsAGrantOfOneHold() {
    AcquireReplyOutput out = new AcquireReplyOutput();
    out.set(ascii("1795720717813059"));
    out.complete(0);
    assertThat(out.hasError()).isFalse();
    assertThat(out.get()).isEqualTo(AcquireReply.granted(1795720717813059L, 1));
    assertThat(RedisBackend.toAcquireReply(java.util.List.of("1795720717813059")))
        .isEqualTo(AcquireReply.granted(1795720717813059L, 1));

    AcquireReplyOutput inAnArray = new AcquireReplyOutput(); // {token}: no script's shape
    inAnArray.multi(1);
    inAnArray.set(ascii("1795720717813059"));
    inAnArray.complete(0);
    assertThat(inAnArray.hasError()).isTrue();
  }

  @Test
  void aRefusalAndALostHoldAreRead() {
    AcquireReplyOutput busy = new AcquireReplyOutput();
    busy.multi(3);
    busy.set(0L);
    busy.set(250L);
    busy.set(ascii("0"));
    busy.complete(0);
    assertThat(busy.hasError()).isFalse();
    assertThat(busy.get()).isEqualTo(AcquireReply.busy(250L));

    AcquireReplyOutput lost = new AcquireReplyOutput();
    lost.multi(1);
    lost.set(-1L);
    lost.complete(0);
    assertThat(lost.hasError()).isFalse();
    assertThat(lost.get()).isEqualTo(AcquireReply.lostHold());
  }

  @Test
  void anyOtherShapeBecomesTheCommandsErrorNotAReply() {
    AcquireReplyOutput notDigits = new AcquireReplyOutput();
    notDigits.multi(3);
    notDigits.set(1L);
    notDigits.set(ascii("1.7e+15"));
    notDigits.set(1L);
    notDigits.complete(0);
    assertThat(notDigits.hasError()).isTrue();
    assertThat(notDigits.get()).isNull();

    AcquireReplyOutput tooLarge = new AcquireReplyOutput();
    tooLarge.multi(3);
    tooLarge.set(1L);
    tooLarge.set(ascii("99999999999999999999"));
    tooLarge.set(1L);
    tooLarge.complete(0);
    assertThat(tooLarge.hasError()).isTrue();

    AcquireReplyOutput nineteenDigits = new AcquireReplyOutput();
    nineteenDigits.multi(3);
    nineteenDigits.set(1L);
    nineteenDigits.set(ascii("1000000000000000000"));
    nineteenDigits.set(1L);
    nineteenDigits.complete(0);
    assertThat(nineteenDigits.get()).isEqualTo(AcquireReply.granted(1_000_000_000_000_000_000L, 1));

    AcquireReplyOutput tooShort = new AcquireReplyOutput();
    tooShort.multi(2);
    tooShort.set(1L);
    tooShort.set(ascii("42"));
    tooShort.complete(0);
    assertThat(tooShort.hasError()).isTrue();

    AcquireReplyOutput unknownCode = new AcquireReplyOutput();
    unknownCode.multi(1);
    unknownCode.set(7L);
    unknownCode.complete(0);
    assertThat(unknownCode.hasError()).isTrue();
    assertThat(unknownCode.getError()).contains("unexpected reply");
  }
}
