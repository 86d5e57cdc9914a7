package io.locksmith.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** How {@code INFO commandstats} is read and summed, on replies shaped like Redis 6.2's and 7's. */
@Tag("unit")
class CommandStatsTest {
  private static final String INFO = "# Commandstats\r\n"
      + "cmdstat_set:calls=10,usec=40,usec_per_call=4.00,rejected_calls=0,failed_calls=0\r\n"
      + "cmdstat_get:calls=10,usec=20,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\n"
      + "cmdstat_del:calls=10,usec=30,usec_per_call=3.00,rejected_calls=0,failed_calls=0\r\n"
      + "cmdstat_evalsha:calls=10,usec=150,usec_per_call=15.00,rejected_calls=0,failed_calls=0\r\n"
      + "cmdstat_config:calls=1,usec=24,usec_per_call=24.00,rejected_calls=0,failed_calls=0\r\n"
      + "cmdstat_config|resetstat:calls=1,usec=24,usec_per_call=24.00\r\n";

  @Test
  void innerCommandsAreCountedAsCallsButTheirTimeOnlyInsideTheirScript() {
    Map<String, CommandStats.Stat> stats = CommandStats.parse(INFO);
    assertThat(stats).containsEntry("set", new CommandStats.Stat(10, 40))
        .containsEntry("config|resetstat", new CommandStats.Stat(1, 24));

    // raw's cycle: SET sent by the client, GET and DEL inside the release script (MONITOR saw them there)
    double[] perCycle = CommandStats.perCycle(stats, Map.of("get", 1.0, "del", 1.0), 10);

    // SET 40 + EVALSHA 150 (which already contains GET's 20 and DEL's 30) over 10 cycles; CONFIG left out
    assertThat(perCycle[0]).isCloseTo(19.0, Offset.offset(1e-9));
    assertThat(perCycle[1]).as("SET, EVALSHA, GET, DEL").isCloseTo(4.0, Offset.offset(1e-9));
  }

  @Test
  void aCommandSentBothDirectlyAndFromScriptsKeepsTheDirectShareOfItsTime() {
    // 10 SETs, 4 of them (0.4 per cycle) inside scripts: 6 × 4 µs stay
    double[] perCycle = CommandStats.perCycle(Map.of("set", new CommandStats.Stat(10, 40),
        "evalsha", new CommandStats.Stat(4, 100)), Map.of("set", 0.4), 10);

    assertThat(perCycle[0]).isCloseTo((24 + 100) / 10.0, Offset.offset(1e-9));
    assertThat(perCycle[1]).isCloseTo(1.4, Offset.offset(1e-9));
  }

  @Test
  void monitorLinesNameTheirCommand() {
    assertThat(Monitor.commandName("\"set\" \"k\" \"v\"")).isEqualTo("set");
    assertThat(Monitor.commandName("\"evalsha\"")).isEqualTo("evalsha");
  }
}
