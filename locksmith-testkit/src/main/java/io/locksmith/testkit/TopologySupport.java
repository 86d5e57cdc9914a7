package io.locksmith.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Helpers shared by {@link RedisSentinelGroup} and {@link RedisCluster}: bounded polling, structured replies,
 * {@code INFO} parsing. Package-private; stateless and thread-safe.
 */
final class TopologySupport {

    /** Timeout of the single commands issued while polling; short so that a dead or paused node is noticed. */
    static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);
    private static final long POLL_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private TopologySupport() {
    }

    /** Thrown by a {@link Probe} to say "not yet"; the message explains why and ends up in the timeout message. */
    static final class NotYet extends RuntimeException {
        NotYet(String reason) {
            super(reason, null, false, false);
        }
    }

    /** One observation of a condition: a non-null result ends the wait. */
    @FunctionalInterface
    interface Probe<T> {
        T poll();
    }

    /**
     * Polls {@code probe} every 20 ms until it returns a non-null value or {@code timeout} elapses. A probe that
     * returns {@code null}, throws {@link NotYet}, or fails with a Redis error or a network failure
     * ({@link IllegalStateException}, {@link UncheckedIOException}) is retried; other exceptions propagate.
     *
     * @throws IllegalStateException on timeout (the message names {@code what} and the last reason) or if the
     *     thread is interrupted (the interrupt flag is kept)
     */
    static <T> T await(String what, Duration timeout, Probe<T> probe) {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        String last = "no observation yet";
        while (true) {
            try {
                T result = probe.poll();
                if (result != null) {
                    return result;
                }
                last = "condition not met";
            } catch (NotYet e) {
                last = e.getMessage();
            } catch (IllegalStateException | UncheckedIOException e) {
                last = e.toString();
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("timed out after " + timeout.toMillis() + " ms waiting for " + what
                        + "; last observation: " + last);
            }
            if (Thread.currentThread().isInterrupted()) {
                throw new IllegalStateException("interrupted while waiting for " + what);
            }
            LockSupport.parkNanos(POLL_INTERVAL_NANOS);
        }
    }

    /** The time left until {@code deadlineNanos} (a {@link System#nanoTime()} value), at least 1 ms. */
    static Duration remaining(long deadlineNanos) {
        return Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(1), deadlineNanos - System.nanoTime()));
    }

    /**
     * Sends one command and returns the unrendered reply ({@code String}, {@code Long}, {@code List}, null), so
     * that callers keep the structure of nested arrays and keys containing newlines.
     *
     * @throws IllegalStateException if Redis answers with an error
     * @throws UncheckedIOException on network failure or timeout
     */
    static Object call(RedisServer server, Duration timeout, String... args) {
        Object reply;
        try {
            reply = Resp.call(server.host(), server.port(), timeout, args);
        } catch (IOException e) {
            throw new UncheckedIOException("redis command " + args[0] + " to " + server.host() + ":" + server.port()
                    + " failed: " + e, e);
        }
        if (reply instanceof Resp.ErrorReply error) {
            throw new IllegalStateException(error.message());
        }
        return reply;
    }

    /** A reply that must be an array (a null array counts as empty). */
    static List<?> list(Object reply) {
        if (reply == null) {
            return List.of();
        }
        if (reply instanceof List<?> l) {
            return l;
        }
        throw new IllegalStateException("expected an array reply but got: " + reply);
    }

    /** Parses {@code key:value} lines ({@code INFO}, {@code CLUSTER INFO}); comment lines are skipped. */
    static Map<String, String> parseInfo(String text) {
        Map<String, String> map = new LinkedHashMap<>();
        if (text == null) {
            return map;
        }
        for (String line : text.split("\\R")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                map.put(line.substring(0, colon), line.substring(colon + 1).trim());
            }
        }
        return map;
    }

    /** {@code INFO <section>} of a node, parsed. */
    static Map<String, String> info(RedisServer server, String section) {
        return parseInfo(server.command(PROBE_TIMEOUT, "INFO", section));
    }

    /** The first element of {@code ROLE}: {@code master}, {@code slave} or {@code sentinel}. */
    static String role(RedisServer server) {
        List<?> role = list(call(server, PROBE_TIMEOUT, "ROLE"));
        return role.isEmpty() ? "" : String.valueOf(role.get(0));
    }

    /** A flat key/value array (e.g. {@code SENTINEL MASTER}) as a map. */
    static Map<String, String> pairs(Object reply) {
        List<?> list = list(reply);
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i + 1 < list.size(); i += 2) {
            map.put(String.valueOf(list.get(i)), String.valueOf(list.get(i + 1)));
        }
        return map;
    }

    /**
     * Validates a builder duration: non-null and at least 1 ms (Redis takes milliseconds).
     *
     * @throws IllegalArgumentException otherwise
     */
    static Duration requireMillis(String name, Duration value) {
        if (value == null || value.isNegative() || value.toMillis() < 1) {
            throw new IllegalArgumentException(name + " must be at least 1 ms: " + value);
        }
        return value;
    }

    /** Closes every server, swallowing failures (cleanup is best effort and must reach all of them). */
    static void closeAll(List<RedisServer> servers) {
        for (RedisServer server : servers) {
            try {
                server.close();
            } catch (RuntimeException ignored) {
                // keep closing the others
            }
        }
    }
}
