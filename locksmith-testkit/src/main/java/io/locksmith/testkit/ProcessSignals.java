package io.locksmith.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Sends POSIX signals to arbitrary processes by running the {@code kill} command: freeze a process
 * ({@code SIGSTOP}), thaw it ({@code SIGCONT}) or kill it hard ({@code SIGKILL}). Used by {@link RedisServer}
 * and by tests that need to pause client JVMs (simulating GC pauses, VM freezes) or crash them.
 *
 * <p>Every operation is bounded: the {@code kill} command itself must finish within 5 seconds and the follow-up
 * wait for the expected process state (stopped, running again, gone) is bounded too. On Linux the state is
 * verified via {@code /proc/<pid>/stat}; on other Unix systems the methods return once {@code kill} succeeded.
 *
 * <p>Thread-safety: all methods are stateless and may be called concurrently. Only Unix-like systems are
 * supported (the {@code kill} command must be on the {@code PATH}).
 */
public final class ProcessSignals {

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration STATE_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(10);

    private ProcessSignals() {
    }

    /**
     * Freezes the process with {@code SIGSTOP}. The process keeps its sockets open (peers can still connect to
     * its listening sockets and send data into kernel buffers) but executes nothing until {@link #resume(long)}.
     * On Linux this method returns only once the kernel reports the process as stopped.
     *
     * @param pid the process id
     * @throws IllegalStateException if the process does not exist, the signal could not be sent, or the process
     *     was not observed stopped within 5 seconds
     */
    public static void pause(long pid) {
        signal("-STOP", pid);
        awaitState(pid, true);
    }

    /**
     * Thaws a process previously frozen with {@link #pause(long)} by sending {@code SIGCONT}. Resuming a process
     * that is not stopped is harmless. On Linux this method returns only once the process is no longer reported
     * as stopped.
     *
     * @param pid the process id
     * @throws IllegalStateException if the process does not exist, the signal could not be sent, or the process
     *     was still stopped after 5 seconds
     */
    public static void resume(long pid) {
        signal("-CONT", pid);
        awaitState(pid, false);
    }

    /**
     * Kills the process with {@code SIGKILL} (works on stopped processes as well) and waits until it is gone.
     * Killing a process that no longer exists is a no-op.
     *
     * @param pid the process id
     * @throws IllegalStateException if the signal could not be sent or the process was still alive after 10 seconds
     */
    public static void kill9(long pid) {
        if (isGone(pid)) {
            return;
        }
        try {
            signal("-KILL", pid);
        } catch (IllegalStateException e) {
            if (isGone(pid)) {
                return; // it died on its own between the check and the signal
            }
            throw e;
        }
        long deadline = System.nanoTime() + EXIT_TIMEOUT.toNanos();
        while (!isGone(pid)) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("process " + pid + " still alive " + EXIT_TIMEOUT.toSeconds()
                        + " s after SIGKILL");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }

    /**
     * Whether the process no longer exists (or is a zombie waiting to be reaped).
     */
    static boolean isGone(long pid) {
        boolean alive = ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        if (!alive) {
            return true;
        }
        char state = procState(pid);
        return state == 'Z' || state == 'X';
    }

    /**
     * Linux process state letter from {@code /proc/<pid>/stat}, or {@code '?'} if unavailable.
     */
    static char procState(long pid) {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        try {
            String s = Files.readString(stat, StandardCharsets.UTF_8);
            int close = s.lastIndexOf(')'); // the command name may contain spaces and parentheses
            if (close >= 0 && close + 2 < s.length()) {
                return s.charAt(close + 2);
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or the process is gone
        }
        return '?';
    }

    private static void awaitState(long pid, boolean stopped) {
        if (!Files.isDirectory(Path.of("/proc", Long.toString(pid)))) {
            return; // no procfs (e.g. macOS): trust that kill(1) delivered the signal
        }
        long deadline = System.nanoTime() + STATE_TIMEOUT.toNanos();
        while (true) {
            char state = procState(pid);
            boolean isStopped = state == 'T' || state == 't';
            if (state == '?' || isStopped == stopped) {
                return;
            }
            if (state == 'Z' || state == 'X') {
                throw new IllegalStateException("process " + pid + " exited while waiting for it to be "
                        + (stopped ? "stopped" : "resumed"));
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("process " + pid + " was not " + (stopped ? "stopped" : "resumed")
                        + " within " + STATE_TIMEOUT.toSeconds() + " s (state " + state + ")");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    private static void signal(String signal, long pid) {
        if (pid <= 0) {
            throw new IllegalArgumentException("invalid pid " + pid);
        }
        List<String> command = List.of("kill", signal, Long.toString(pid));
        Process kill;
        try {
            kill = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + String.join(" ", command), e);
        }
        try {
            kill.getOutputStream().close();
            if (!kill.waitFor(COMMAND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                kill.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish within "
                        + COMMAND_TIMEOUT.toSeconds() + " s");
            }
            if (kill.exitValue() != 0) {
                String output = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
                throw new IllegalStateException(String.join(" ", command) + " failed with exit code "
                        + kill.exitValue() + (output.isEmpty() ? "" : ": " + output));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill.destroyForcibly();
            throw new IllegalStateException("interrupted while running " + String.join(" ", command), e);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the output of " + String.join(" ", command), e);
        } finally {
            try {
                kill.getInputStream().close();
            } catch (IOException ignored) {
                // best effort
            }
        }
    }
}
