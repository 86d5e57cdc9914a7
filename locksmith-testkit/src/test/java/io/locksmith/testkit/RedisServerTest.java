package io.locksmith.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RedisServerTest {

    private static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    @Test
    void resolvesAnExecutableBinary() {
        Path binary = RedisServer.binary();
        assertThat(binary).isAbsolute().isRegularFile().isExecutable();
        if (System.getProperty(RedisServer.BINARY_PROPERTY) == null
                && RedisBinaries.findOnPath("redis-server") == null) {
            assertThat(binary.getFileName().toString()).startsWith("redis-server-");
            assertThat(binary.getParent().getFileName().toString()).startsWith("locksmith-redis-bin");
            assertThat(RedisServer.binary()).isEqualTo(binary); // reused, not extracted again
        }
    }

    @Test
    void mapsPlatformsToEmbeddedBinaries() {
        assertThat(RedisBinaries.embeddedName("Linux", "amd64")).contains("redis-server-6.2.6-v5-linux-amd64");
        assertThat(RedisBinaries.embeddedName("Linux", "aarch64")).contains("redis-server-6.2.7-linux-arm64");
        assertThat(RedisBinaries.embeddedName("Mac OS X", "x86_64")).contains("redis-server-6.2.6-v5-darwin-amd64");
        assertThat(RedisBinaries.embeddedName("Mac OS X", "aarch64")).contains("redis-server-6.2.6-v5-darwin-arm64");
        assertThat(RedisBinaries.embeddedName("Windows 11", "amd64")).isEmpty();
        assertThat(RedisBinaries.embeddedName("Linux", "s390x")).isEmpty();
        assertThat(RedisServer.connectHost("0.0.0.0")).isEqualTo("127.0.0.1");
        assertThat(RedisServer.connectHost("127.0.0.1 ::1")).isEqualTo("127.0.0.1");
        assertThat(RedisServer.connectHost("-::1 127.0.0.1")).isEqualTo("::1");
        assertThat(RedisBinaries.parseVersion("Redis server v=6.2.11 sha=00000000:0 malloc=jemalloc-5.1.0"))
                .isEqualTo("6.2.11");
    }

    @Test
    void startsAndAnswersCommands() {
        try (RedisServer redis = RedisServer.start()) {
            assertThat(redis.isRunning()).isTrue();
            assertThat(redis.host()).isEqualTo("127.0.0.1");
            assertThat(redis.port()).isPositive();
            assertThat(redis.uri()).isEqualTo("redis://127.0.0.1:" + redis.port());
            assertThat(redis.version()).matches("[67]\\.\\d+\\.\\d+");
            assertThat(redis.pid()).isPositive();
            assertThat(Files.isDirectory(redis.dataDir())).isTrue();

            assertThat(redis.command("PING")).isEqualTo("PONG");
            assertThat(redis.command("SET", "k", "v")).isEqualTo("OK");
            assertThat(redis.command("GET", "k")).isEqualTo("v");
            assertThat(redis.command("GET", "missing")).isNull();
            assertThat(redis.command("INCR", "n")).isEqualTo("1");
            assertThat(redis.command("SET", "unicode", "zaż\u00f3łć")).isEqualTo("OK");
            assertThat(redis.command("GET", "unicode")).isEqualTo("zaż\u00f3łć");
            assertThat(redis.command("RPUSH", "list", "a", "b", "c")).isEqualTo("3");
            assertThat(redis.command("LRANGE", "list", "0", "-1")).isEqualTo("a\nb\nc");
            assertThat(redis.command("MGET", "k", "missing")).isEqualTo("v\n(nil)");

            String info = redis.command("INFO", "server");
            assertThat(info).contains("redis_version:" + redis.version()).contains("process_id:" + redis.pid());
            assertThat(info.lines().count()).isGreaterThan(5);
            assertThat(redis.command("INFO", "commandstats")).contains("cmdstat_set:calls=");

            assertThat(redis.command("CONFIG", "SET", "slowlog-log-slower-than", "0")).isEqualTo("OK");
            assertThat(redis.command("CONFIG", "GET", "slowlog-log-slower-than"))
                    .isEqualTo("slowlog-log-slower-than\n0");
            assertThat(redis.command("SLOWLOG", "GET")).contains("CONFIG").contains("slowlog-log-slower-than");
            assertThat(redis.command(Duration.ofSeconds(5), "DEBUG", "SLEEP", "0")).isEqualTo("OK");
            assertThat(redis.command("FLUSHALL")).isEqualTo("OK");
            assertThat(redis.command("DBSIZE")).isEqualTo("0");

            assertThatThrownBy(() -> redis.command("NO-SUCH-COMMAND"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("ERR");
            assertThat(redis.ping(Duration.ofSeconds(1))).isTrue();
        }
    }

    @Test
    void pauseMakesPingTimeOutAndResumeBringsItBack() {
        try (RedisServer redis = RedisServer.start()) {
            redis.pause();
            assertThat(redis.isPaused()).isTrue();
            assertThat(redis.isRunning()).isTrue();
            assertThat(ProcessSignals.procState(redis.pid())).isIn('T', 't', '?');
            assertThatThrownBy(() -> redis.command(Duration.ofMillis(300), "PING"))
                    .isInstanceOf(UncheckedIOException.class);
            assertThat(redis.ping(Duration.ofMillis(200))).isFalse();

            redis.resume();
            assertThat(redis.isPaused()).isFalse();
            assertThat(redis.command("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void killThenRestartUsesTheSamePortAndDirectory() {
        try (RedisServer redis = RedisServer.start()) {
            int port = redis.port();
            Path dir = redis.dataDir();
            long firstPid = redis.pid();
            redis.command("SET", "k", "v");

            redis.kill();
            assertThat(redis.isRunning()).isFalse();
            assertThat(alive(firstPid)).isFalse();
            assertThat(redis.ping(Duration.ofMillis(200))).isFalse();
            redis.kill(); // no-op

            redis.restart();
            assertThat(redis.isRunning()).isTrue();
            assertThat(redis.port()).isEqualTo(port);
            assertThat(redis.dataDir()).isEqualTo(dir);
            assertThat(redis.pid()).isNotEqualTo(firstPid);
            assertThat(redis.command("PING")).isEqualTo("PONG");
            assertThat(redis.command("GET", "k")).isNull(); // no persistence by default
        }
    }

    @Test
    void killWhilePausedAndStopGracefully() {
        try (RedisServer redis = RedisServer.start()) {
            redis.pause();
            redis.kill();
            assertThat(redis.isRunning()).isFalse();
            assertThat(redis.isPaused()).isFalse();

            redis.restart();
            long pid = redis.pid();
            redis.pause();
            redis.stop(); // resumes first, then SIGTERM
            assertThat(redis.isRunning()).isFalse();
            assertThat(alive(pid)).isFalse();
            assertThat(redis.dataDir().resolve("redis.log")).content().contains("Received SIGTERM");

            redis.restart();
            redis.restart(); // restart of a running server stops it first
            assertThat(redis.command("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void persistenceKeepsDataAcrossKillAndRestart() {
        try (RedisServer redis = RedisServer.builder().persistence(true).start()) {
            assertThat(redis.command("SET", "durable", "yes")).isEqualTo("OK");
            redis.kill();
            redis.restart();
            assertThat(redis.command("GET", "durable")).isEqualTo("yes");
        }
    }

    @Test
    void closeKillsTheProcessAndDeletesTheDirectory() {
        RedisServer redis = RedisServer.start();
        long pid = redis.pid();
        Path dir = redis.dataDir();
        redis.pause();

        redis.close();
        assertThat(alive(pid)).isFalse();
        assertThat(dir).doesNotExist();
        assertThat(redis.isRunning()).isFalse();
        redis.close(); // idempotent
        assertThatThrownBy(redis::restart).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void builderOptions() {
        RedisServer probe = RedisServer.builder().build();
        int port;
        try {
            assertThat(probe.isRunning()).isFalse();
            assertThat(probe.port()).isZero();
            assertThatThrownBy(probe::pid).isInstanceOf(IllegalStateException.class);
            probe.restart(); // starts a built server
            port = probe.port();
        } finally {
            probe.close();
        }
        try (RedisServer redis = RedisServer.builder()
                .port(port)
                .bind("127.0.0.1")
                .extraArgs("--maxmemory", "12mb")
                .startupTimeout(Duration.ofSeconds(5))
                .start()) {
            assertThat(redis.port()).isEqualTo(port);
            assertThat(redis.host()).isEqualTo("127.0.0.1");
            assertThat(redis.command("CONFIG", "GET", "bind")).isEqualTo("bind\n127.0.0.1");
            assertThat(redis.command("CONFIG", "GET", "maxmemory")).isEqualTo("maxmemory\n" + 12 * 1024 * 1024);
        }
    }

    @Test
    void startupFailureReportsTheLogTailAndCleansUp() {
        assertThatThrownBy(() -> RedisServer.builder().extraArgs("--no-such-directive", "x").start())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("during startup")
                .hasMessageContaining("no-such-directive");
        assertThatThrownBy(() -> RedisServer.builder().port(70000)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void occupiedFixedPortFailsWithClearMessage() {
        try (RedisServer first = RedisServer.start()) {
            assertThatThrownBy(() -> RedisServer.builder().port(first.port()).start())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("Address already in use");
            assertThat(first.command("PING")).isEqualTo("PONG");
        }
    }
}
