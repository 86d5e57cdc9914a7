package io.locksmith.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.channels.SeekableByteChannel;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A real {@code redis-server} process for tests, running in its own temporary directory on a loopback port.
 *
 * <h2>Binary</h2>
 * The binary is resolved by {@link #binary()}: the system property {@value #BINARY_PROPERTY} if set, else
 * {@code redis-server} on the {@code PATH}, else the Linux/macOS binary bundled in the Maven Central artifact
 * {@code com.github.codemonstur:embedded-redis:1.4.4} (extracted once into
 * {@code ${java.io.tmpdir}/locksmith-redis-bin/} and reused across runs).
 *
 * <h2>Usage</h2>
 * <pre>{@code
 * try (RedisServer redis = RedisServer.start()) {
 *     redis.command("SET", "k", "v");
 *     connectClientTo(redis.uri());
 * }
 * RedisServer durable = RedisServer.builder().persistence(true).start();
 * }</pre>
 * In JUnit 5 tests prefer {@link RedisServerExtension}.
 *
 * <h2>Lifecycle and faults</h2>
 * Besides {@link #stop()} / {@link #restart()} the server can be {@linkplain #kill() killed} ({@code SIGKILL}),
 * {@linkplain #pause() paused} ({@code SIGSTOP}: connections are still accepted by the kernel but nothing is
 * answered) and {@linkplain #resume() resumed}. A restart always reuses the same port and data directory, so
 * with {@linkplain Builder#persistence(boolean) persistence} enabled the data survives a crash.
 *
 * <h2>Cleanup</h2>
 * {@link #close()} kills the process and deletes the data directory. Every server is also registered with a
 * single JVM shutdown hook that closes servers left open (e.g. when a test fails before closing). A JVM killed
 * with {@code SIGKILL} cannot run the hook; its servers must then be killed externally.
 *
 * <h2>Thread-safety</h2>
 * Instances are thread-safe: lifecycle methods are serialized on the instance; {@link #command(String...)} and
 * the accessors may be called concurrently from any thread. Every network operation uses connect and read
 * timeouts, and every wait for a process is bounded, so no method blocks indefinitely.
 *
 * <h2>Failures</h2>
 * Startup failures throw {@link IllegalStateException} whose message contains the tail of the server log.
 * Network failures of {@link #command(String...)} throw {@link UncheckedIOException}; Redis error replies throw
 * {@link IllegalStateException}. Only Unix-like systems are supported.
 */
public final class RedisServer implements AutoCloseable {

    /** System property naming an explicit {@code redis-server} binary. */
    public static final String BINARY_PROPERTY = RedisBinaries.PROPERTY;

    private static final int AUTO_PORT_ATTEMPTS = 5;
    private static final long STOP_TIMEOUT_MILLIS = 10_000;
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration PROBE_TIMEOUT = Duration.ofMillis(500);
    private static final int LOG_TAIL_LINES = 30;
    private static final String LOG_FILE = "redis.log";
    private static final String STDOUT_FILE = "redis-stdout.log";
    static final String SENTINEL_CONFIG_FILE = "sentinel.conf";

    private static final Set<RedisServer> OPEN = ConcurrentHashMap.newKeySet();
    private static final AtomicBoolean HOOK_INSTALLED = new AtomicBoolean();

    private final Path binary;
    private final String version;
    private final String bind;
    private final String host;
    private final int requestedPort;
    private final boolean persistence;
    private final List<String> extraArgs;
    private final Duration startupTimeout;
    private final String sentinelConfig;
    private final Path dir;

    private volatile int port;
    private volatile Process process;
    private volatile boolean paused;
    private volatile boolean closed;

    private RedisServer(Builder builder) {
        this.binary = builder.binary != null ? builder.binary : binary();
        this.version = RedisBinaries.version(this.binary);
        this.bind = builder.bind;
        this.host = connectHost(builder.bind);
        this.requestedPort = builder.port;
        this.persistence = builder.persistence;
        this.extraArgs = List.copyOf(builder.extraArgs);
        this.startupTimeout = builder.startupTimeout;
        this.sentinelConfig = builder.sentinelConfig;
        try {
            this.dir = Files.createTempDirectory("locksmith-redis-").toAbsolutePath();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary directory for redis-server", e);
        }
        register(this);
    }

    /**
     * Resolves the {@code redis-server} binary: the system property {@value #BINARY_PROPERTY} if set, else
     * {@code redis-server} on the {@code PATH}, else the binary for this OS/architecture extracted from
     * {@code com.github.codemonstur:embedded-redis:1.4.4} on the classpath into
     * {@code ${java.io.tmpdir}/locksmith-redis-bin/} (written atomically, reused by later runs).
     *
     * @return absolute path of an executable {@code redis-server}
     * @throws IllegalStateException if the property points to a non-executable file, or no binary fits this
     *     platform, or the embedded artifact is missing from the classpath or cannot be extracted
     */
    public static Path binary() {
        return RedisBinaries.resolve();
    }

    /**
     * Starts a server with default settings: free loopback port, no persistence, 10 s startup timeout.
     *
     * @return the running server (answering {@code PING})
     * @throws IllegalStateException if no binary is available or the server does not come up in time
     *     (the message contains the tail of the server log)
     */
    public static RedisServer start() {
        return builder().start();
    }

    /**
     * Returns a builder for a customized server.
     *
     * @return a new builder with default settings
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The address clients should connect to: the bind address, or {@code 127.0.0.1} for a wildcard bind.
     *
     * @return the host
     */
    public String host() {
        return host;
    }

    /**
     * The TCP port. Stable across {@link #restart()}. Returns {@code 0} for a server built with port {@code 0}
     * that has not been started yet.
     *
     * @return the port
     */
    public int port() {
        return port;
    }

    /**
     * A Redis URI for clients, e.g. {@code redis://127.0.0.1:6379}.
     *
     * @return the URI
     */
    public String uri() {
        String h = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
        return "redis://" + h + ":" + port;
    }

    /**
     * The process id of the current (or, after {@link #kill()} / {@link #stop()}, the last) server process.
     *
     * @return the pid
     * @throws IllegalStateException if the server was never started
     */
    public long pid() {
        Process p = process;
        if (p == null) {
            throw new IllegalStateException("redis-server was never started");
        }
        return p.pid();
    }

    /**
     * The server version reported by {@code redis-server --version}, e.g. {@code 6.2.11}.
     *
     * @return the version {@code X.Y.Z}
     */
    public String version() {
        return version;
    }

    /**
     * Whether the server process is alive. A {@linkplain #pause() paused} process is alive.
     *
     * @return true if the process exists
     */
    public boolean isRunning() {
        Process p = process;
        return p != null && p.isAlive();
    }

    /**
     * Whether the server is currently {@linkplain #pause() paused}.
     *
     * @return true between {@link #pause()} and {@link #resume()}
     */
    public boolean isPaused() {
        return paused && isRunning();
    }

    /**
     * The private data directory ({@code --dir}) holding the RDB/AOF files and the server log. Deleted by
     * {@link #close()}.
     *
     * @return the directory
     */
    public Path dataDir() {
        return dir;
    }

    /**
     * Stops the server gracefully with {@code SIGTERM} (resuming it first if paused) and waits up to 10 s for it
     * to exit, then kills it forcibly. With persistence enabled Redis flushes its AOF/RDB on the way out.
     * No-op if the server is not running.
     *
     * @throws IllegalStateException if the process survives even {@code SIGKILL} for 10 s
     */
    public synchronized void stop() {
        Process p = process;
        if (p == null || !p.isAlive()) {
            paused = false;
            return;
        }
        if (paused) {
            resume();
        }
        p.destroy();
        if (!Processes.awaitExit(p, STOP_TIMEOUT_MILLIS)) {
            kill();
        }
    }

    /**
     * Kills the server with {@code SIGKILL} (a crash: nothing is flushed beyond what Redis already wrote) and
     * waits until the process is gone. Works on paused servers. No-op if the server is not running.
     *
     * @throws IllegalStateException if the process is still alive 10 s after the signal
     */
    public synchronized void kill() {
        Process p = process;
        paused = false;
        if (p == null || !p.isAlive()) {
            return;
        }
        p.destroyForcibly();
        if (!Processes.awaitExit(p, STOP_TIMEOUT_MILLIS)) {
            throw new IllegalStateException("redis-server pid " + p.pid() + " still alive 10 s after SIGKILL");
        }
    }

    /**
     * Freezes the server with {@code SIGSTOP}. Clients can still open TCP connections (the kernel completes the
     * handshake) and send commands, but nothing is answered until {@link #resume()}. Idempotent.
     *
     * @throws IllegalStateException if the server is not running or the signal fails
     */
    public synchronized void pause() {
        ensureOpen();
        if (!isRunning()) {
            throw new IllegalStateException("redis-server is not running");
        }
        if (paused) {
            return;
        }
        ProcessSignals.pause(process.pid());
        paused = true;
    }

    /**
     * Resumes a {@linkplain #pause() paused} server with {@code SIGCONT}. No-op if it is not paused.
     *
     * @throws IllegalStateException if the signal fails
     */
    public synchronized void resume() {
        if (!paused) {
            return;
        }
        paused = false;
        if (isRunning()) {
            ProcessSignals.resume(process.pid());
        }
    }

    /**
     * Starts the server again on the same port and data directory and waits until it answers {@code PING}.
     * A running server is {@linkplain #stop() stopped} first. Also starts a server obtained from
     * {@link Builder#build()} that was never started.
     *
     * @throws IllegalStateException if the server was closed, or does not come up within the startup timeout
     *     (e.g. the port was taken meanwhile); the message contains the tail of the server log
     */
    public synchronized void restart() {
        ensureOpen();
        if (isRunning()) {
            stop();
        }
        launch();
    }

    /**
     * Sends {@code PING} over a fresh connection.
     *
     * @param timeout connect and read timeout
     * @return true if the server answered {@code PONG} within the timeout
     */
    public boolean ping(Duration timeout) {
        return ping(port, timeout);
    }

    /**
     * Sends one command over a fresh connection (5 s connect/read timeout) and renders the reply as text:
     * simple and bulk strings as-is (multi-line bulk strings such as {@code INFO} are preserved), integers as
     * digits, arrays (including nested arrays, e.g. {@code SLOWLOG GET}) as their flattened elements joined
     * by {@code "\n"}, with nested nulls rendered as {@code (nil)}. A top-level null reply returns {@code null}.
     *
     * @param args the command and its arguments, e.g. {@code "CONFIG", "SET", "maxmemory", "10mb"}
     * @return the rendered reply, or {@code null} for a null reply
     * @throws IllegalStateException if Redis answers with an error (the message is the error text)
     * @throws UncheckedIOException if the connection fails or the reply does not arrive in time
     * @throws IllegalArgumentException if no arguments are given
     */
    public String command(String... args) {
        return command(COMMAND_TIMEOUT, args);
    }

    /**
     * Like {@link #command(String...)} with an explicit connect/read timeout, e.g. for {@code DEBUG SLEEP} or for
     * probing a paused server.
     *
     * @param timeout connect and read timeout
     * @param args the command and its arguments
     * @return the rendered reply, or {@code null} for a null reply
     * @throws IllegalStateException if Redis answers with an error
     * @throws UncheckedIOException if the connection fails or the reply does not arrive in time
     * @throws IllegalArgumentException if no arguments are given
     */
    public String command(Duration timeout, String... args) {
        Objects.requireNonNull(timeout, "timeout");
        try {
            return Resp.render(Resp.call(host, port, timeout, args));
        } catch (IOException e) {
            throw new UncheckedIOException("redis command " + (args.length > 0 ? args[0] : "") + " to " + host
                    + ":" + port + " failed: " + e, e);
        }
    }

    /**
     * Kills the server (resuming it first if paused), waits for the process to exit and deletes the data
     * directory. Idempotent; never throws for cleanup problems (they are best effort).
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            try {
                if (paused && isRunning()) {
                    try {
                        ProcessSignals.resume(process.pid());
                    } catch (RuntimeException ignored) {
                        // SIGKILL works on stopped processes anyway
                    }
                }
                paused = false;
                Process p = process;
                if (p != null && p.isAlive()) {
                    p.destroyForcibly();
                    Processes.awaitExit(p, STOP_TIMEOUT_MILLIS);
                }
            } finally {
                deleteRecursively(dir);
                OPEN.remove(this);
            }
        }
    }

    @Override
    public String toString() {
        Process p = process;
        return "RedisServer[" + host + ":" + port + ", v" + version + (sentinelConfig != null ? ", sentinel" : "")
                + (p == null ? "" : ", pid " + p.pid())
                + (closed ? ", closed" : isRunning() ? (paused ? ", paused" : ", running") : ", stopped") + "]";
    }

    // ---------------------------------------------------------------------------------------------------------

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("redis-server was closed: " + this);
        }
    }

    /** Starts the process; picks a port on the first start if none was requested. Caller holds the lock. */
    private void launch() {
        QuickRun.checkServerAllowed("redis-server");
        boolean pickPort = port == 0 && requestedPort == 0;
        int attempts = pickPort ? AUTO_PORT_ATTEMPTS : 1;
        PortInUseException last = null;
        for (int attempt = 0; attempt < attempts; attempt++) {
            int candidate = pickPort ? freePort() : (port != 0 ? port : requestedPort);
            try {
                launchOnce(candidate);
                port = candidate;
                return;
            } catch (PortInUseException e) {
                last = e;
            }
        }
        throw last;
    }

    private void launchOnce(int candidatePort) {
        Path logFile = dir.resolve(LOG_FILE);
        Path stdoutFile = dir.resolve(STDOUT_FILE);
        long logOffset = sizeOf(logFile);
        long stdoutOffset = sizeOf(stdoutFile);
        if (sentinelConfig != null) {
            writeSentinelConfigIfAbsent();
        }
        List<String> cmd = commandLine(candidatePort, logFile);
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(stdoutFile.toFile()));
        Process p;
        try {
            p = Processes.start(pb);
            p.getOutputStream().close();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + String.join(" ", cmd), e);
        }
        long deadline = System.nanoTime() + startupTimeout.toNanos();
        while (true) {
            if (!p.isAlive()) {
                String tail = logTail(logFile, logOffset, stdoutFile, stdoutOffset);
                String message = "redis-server exited with code " + p.exitValue() + " during startup on port "
                        + candidatePort + "\ncommand: " + String.join(" ", cmd) + "\nlog tail:\n" + tail;
                if (tail.contains("Address already in use")) {
                    throw new PortInUseException(message);
                }
                throw new IllegalStateException(message);
            }
            if (ping(candidatePort, PROBE_TIMEOUT) && ownsPort(p, candidatePort)) {
                process = p;
                paused = false;
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                p.destroyForcibly();
                Processes.awaitExit(p, STOP_TIMEOUT_MILLIS);
                throw new IllegalStateException("redis-server did not answer PING on " + host + ":" + candidatePort
                        + " within " + startupTimeout.toMillis() + " ms; killed it\ncommand: " + String.join(" ", cmd)
                        + "\nlog tail:\n" + logTail(logFile, logOffset, stdoutFile, stdoutOffset));
            }
            Processes.awaitExit(p, 10); // poll interval; returns early if the process exits
        }
    }

    private List<String> commandLine(int candidatePort, Path logFile) {
        List<String> cmd = new ArrayList<>();
        cmd.add(binary.toString());
        if (sentinelConfig != null) {
            // Sentinel insists on a writable config file (it persists its state there) given as first argument
            Collections.addAll(cmd, dir.resolve(SENTINEL_CONFIG_FILE).toString(), "--sentinel");
        }
        Collections.addAll(cmd,
                "--port", Integer.toString(candidatePort),
                "--bind");
        Collections.addAll(cmd, bind.split("\\s+")); // one argument per address
        Collections.addAll(cmd,
                "--protected-mode", "no",
                "--daemonize", "no",
                "--dir", dir.toString(),
                "--logfile", logFile.toString());
        if (persistence) {
            Collections.addAll(cmd, "--appendonly", "yes", "--appendfsync", "always");
        } else {
            Collections.addAll(cmd, "--save", "", "--appendonly", "no");
        }
        if (RedisBinaries.major(version) >= 7) {
            Collections.addAll(cmd, "--enable-debug-command", "local");
        }
        cmd.addAll(extraArgs);
        return cmd;
    }

    /**
     * Writes the sentinel configuration on the first launch only: Sentinel rewrites the file with what it learnt
     * (known replicas and sentinels, epochs, the current master), which a restart must not throw away.
     */
    private void writeSentinelConfigIfAbsent() {
        Path file = dir.resolve(SENTINEL_CONFIG_FILE);
        if (Files.exists(file)) {
            return;
        }
        try {
            Files.writeString(file, sentinelConfig, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + file, e);
        }
    }

    private boolean ping(int p, Duration timeout) {
        if (p == 0) {
            return false;
        }
        try {
            return "PONG".equals(Resp.call(host, p, timeout, "PING"));
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** Guards against another process answering on the port we hoped to get. */
    private boolean ownsPort(Process p, int candidatePort) {
        try {
            Object info = Resp.call(host, candidatePort, PROBE_TIMEOUT, "INFO", "server");
            return info instanceof String s && s.contains("process_id:" + p.pid() + "\r");
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(host))) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find a free port on " + host, e);
        }
    }

    static String connectHost(String bind) {
        String first = bind.trim().split("\\s+")[0];
        if (first.startsWith("-")) {
            first = first.substring(1); // Redis 7 "optional" bind address syntax
        }
        if (first.equals("*") || first.equals("0.0.0.0") || first.equals("::") || first.equals("::*")) {
            return "127.0.0.1";
        }
        return first;
    }

    private static long sizeOf(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return 0;
        }
    }

    private static String logTail(Path logFile, long logOffset, Path stdoutFile, long stdoutOffset) {
        StringBuilder out = new StringBuilder();
        String stdout = tail(stdoutFile, stdoutOffset);
        if (!stdout.isBlank()) {
            out.append("[stdout/stderr]\n").append(stdout).append('\n');
        }
        String log = tail(logFile, logOffset);
        if (!log.isBlank()) {
            out.append("[").append(LOG_FILE).append("]\n").append(log).append('\n');
        }
        return out.length() == 0 ? "(empty)" : out.toString();
    }

    private static String tail(Path file, long fromOffset) {
        try (SeekableByteChannel ch = Files.newByteChannel(file)) {
            long size = ch.size();
            long start = Math.max(fromOffset, size - 64 * 1024);
            if (start >= size) {
                return "";
            }
            ByteBuffer buf = ByteBuffer.allocate((int) (size - start));
            ch.position(start);
            while (buf.hasRemaining() && ch.read(buf) > 0) {
                // keep reading
            }
            String text = new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8);
            List<String> lines = Arrays.asList(text.split("\\R"));
            return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
        } catch (NoSuchFileException e) {
            return "";
        } catch (IOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }

    private static void deleteRecursively(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException exc) {
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException ignored) {
            // best effort
        }
    }

    private static void register(RedisServer server) {
        if (HOOK_INSTALLED.compareAndSet(false, true)) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                for (RedisServer open : OPEN.toArray(new RedisServer[0])) {
                    try {
                        open.close();
                    } catch (RuntimeException ignored) {
                        // keep cleaning up the others
                    }
                }
            }, "locksmith-redis-cleanup"));
        }
        OPEN.add(server);
    }

    /** Startup failed because the port was taken; the caller may retry on another port. */
    private static final class PortInUseException extends IllegalStateException {
        PortInUseException(String message) {
            super(message);
        }
    }

    /**
     * Configures and starts a {@link RedisServer}. Not thread-safe; use one builder per server.
     */
    public static final class Builder {
        private int port;
        private String bind = "127.0.0.1";
        private boolean persistence;
        private final List<String> extraArgs = new ArrayList<>();
        private Duration startupTimeout = Duration.ofSeconds(10);
        private Path binary;
        private String sentinelConfig;

        private Builder() {
        }

        /**
         * The TCP port; {@code 0} (the default) picks a free port, retrying on another port if it gets taken
         * between picking and binding.
         *
         * @param port 0..65535
         * @return this builder
         * @throws IllegalArgumentException if out of range
         */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port out of range: " + port);
            }
            this.port = port;
            return this;
        }

        /**
         * The bind address ({@code --bind}), default {@code 127.0.0.1}.
         *
         * @param bind one or more addresses separated by spaces
         * @return this builder
         * @throws IllegalArgumentException if blank
         */
        public Builder bind(String bind) {
            if (bind == null || bind.isBlank()) {
                throw new IllegalArgumentException("bind address must not be blank");
            }
            this.bind = bind.trim();
            return this;
        }

        /**
         * Whether data survives {@link RedisServer#kill()} + {@link RedisServer#restart()}. Off (the default):
         * {@code --save "" --appendonly no}. On: {@code --appendonly yes --appendfsync always}, so every
         * acknowledged write is on disk.
         *
         * @param persistence true to enable the append-only file
         * @return this builder
         */
        public Builder persistence(boolean persistence) {
            this.persistence = persistence;
            return this;
        }

        /**
         * Additional command-line arguments appended after the testkit's own (later options win), e.g.
         * {@code extraArgs("--maxmemory", "10mb")}. May be called repeatedly; arguments accumulate.
         *
         * @param args raw {@code redis-server} arguments
         * @return this builder
         */
        public Builder extraArgs(String... args) {
            for (String arg : args) {
                extraArgs.add(Objects.requireNonNull(arg, "extra argument"));
            }
            return this;
        }

        /**
         * How long {@code start}/{@code restart} wait for the server to answer {@code PING}; default 10 s.
         *
         * @param timeout a positive duration
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder startupTimeout(Duration timeout) {
            if (timeout == null || timeout.isZero() || timeout.isNegative()) {
                throw new IllegalArgumentException("startup timeout must be positive: " + timeout);
            }
            this.startupTimeout = timeout;
            return this;
        }

        /**
         * Uses this binary instead of the one resolved by {@link RedisServer#binary()}.
         *
         * @param binary an executable {@code redis-server}
         * @return this builder
         */
        public Builder binary(Path binary) {
            this.binary = Objects.requireNonNull(binary, "binary");
            return this;
        }

        /**
         * Runs the process as a Redis Sentinel ({@code redis-server <dir>/sentinel.conf --sentinel ...}) whose
         * configuration file initially holds {@code config}. The file is written into the data directory on the
         * first start and left to Sentinel afterwards (it rewrites it with its state), so a restart resumes with
         * what the sentinel knew. Package-private: used by {@link RedisSentinelGroup}.
         *
         * @param config the initial contents of {@code sentinel.conf}, e.g. {@code sentinel monitor ...} lines
         * @return this builder
         */
        Builder sentinelConfig(String config) {
            this.sentinelConfig = Objects.requireNonNull(config, "config");
            return this;
        }

        /**
         * Creates the server (data directory, version detection) without starting it; start it with
         * {@link RedisServer#restart()}. Close it even if it is never started, to delete its directory.
         *
         * @return a configured, not yet running server
         * @throws IllegalStateException if no binary is available or its version cannot be determined
         * @throws UncheckedIOException if the data directory cannot be created
         */
        public RedisServer build() {
            return new RedisServer(this);
        }

        /**
         * Creates and starts the server, waiting until it answers {@code PING}.
         *
         * @return the running server
         * @throws IllegalStateException if no binary is available or the server does not come up within the
         *     startup timeout (the message contains the tail of the server log); the directory is cleaned up
         * @throws UncheckedIOException if the data directory cannot be created
         */
        public RedisServer start() {
            RedisServer server = build();
            try {
                server.restart();
                return server;
            } catch (RuntimeException | Error e) {
                server.close();
                throw e;
            }
        }
    }
}
