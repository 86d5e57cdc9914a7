package io.locksmith.redis;

import io.locksmith.testkit.RedisServer;
import java.util.HashMap;
import java.util.Map;

/** Per-command call counts from {@code INFO commandstats}: what a server really executed. */
final class CommandStats {
  private CommandStats() {}

  static Map<String, Long> calls(RedisServer server) {
    Map<String, Long> calls = new HashMap<>();
    for (String line : server.command("INFO", "commandstats").split("\\R")) {
      if (line.startsWith("cmdstat_")) {
        String cmd = line.substring("cmdstat_".length(), line.indexOf(':'));
        String n = line.substring(line.indexOf("calls=") + 6, line.indexOf(',', line.indexOf("calls=")));
        calls.put(cmd, Long.parseLong(n));
      }
    }
    return calls;
  }

  static long calls(RedisServer server, String command) {
    return calls(server).getOrDefault(command, 0L);
  }
}
