package io.locksmith.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A small fault-injecting TCP proxy: listens on a free loopback port and forwards every accepted connection to
 * a fixed target, while tests inject network faults between a client and a server.
 *
 * <ul>
 *   <li>{@link #delay(Duration)}: every chunk forwarded in either direction is held back for the delay, so a
 *       request/response round trip takes at least twice the delay.</li>
 *   <li>{@link #blackhole()}: connections stay open but all bytes are silently dropped in both directions
 *       (EOFs too); new connections are accepted but never get anything. Dropped bytes are lost: after
 *       {@link #heal()} the protocol stream of a connection that lived through a blackhole is usually corrupt,
 *       so clients should reconnect (see {@link #resetAll()}).</li>
 *   <li>{@link #holdReplies(Duration, Duration, int)}: every chunk the target sends back is held for a total time,
 *       trickling out one byte per gap meanwhile, so a reply arrives whole only after the total time while
 *       the client's socket never waits longer than the gap for a byte (a late reply, not a dead link).</li>
 *   <li>{@link #resetAll()}: aborts all current connections with a TCP RST on both sides.</li>
 *   <li>{@link #refuseNew(boolean)}: newly accepted connections are reset immediately.</li>
 * </ul>
 *
 * <p>Implementation: one acceptor thread plus two forwarding threads per connection, all daemon threads named
 * {@code locksmith-proxy-<listenPort>-...}. {@link #close()} stops and joins all of them.
 *
 * <p>Thread-safety: all methods may be called from any thread; fault settings take effect for the next chunk
 * forwarded. Connecting to the target uses a 5 s timeout; when the target is unreachable the client connection
 * is reset.
 */
public final class TcpProxy implements AutoCloseable {

    private static final int CONNECT_TIMEOUT_MILLIS = 5_000;
    private static final long JOIN_TIMEOUT_MILLIS = 5_000;
    private static final int BUFFER_SIZE = 16 * 1024;

    private final String targetHost;
    private final int targetPort;
    private final ServerSocket serverSocket;
    private final String threadPrefix;
    private final Thread acceptor;
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private final AtomicInteger connectionIds = new AtomicInteger();
    private final AtomicLong bytesToTarget = new AtomicLong();
    private final AtomicLong bytesToClient = new AtomicLong();

    private volatile long delayNanos;
    private volatile long holdRepliesNanos;
    private volatile long holdGapNanos;
    private volatile int holdMinBytes;
    private volatile boolean blackhole;
    private volatile boolean refuseNew;
    private volatile boolean closed;

    private TcpProxy(String targetHost, int targetPort, ServerSocket serverSocket) {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.serverSocket = serverSocket;
        this.threadPrefix = "locksmith-proxy-" + serverSocket.getLocalPort();
        this.acceptor = new Thread(this::acceptLoop, threadPrefix + "-accept");
        this.acceptor.setDaemon(true);
    }

    /**
     * Starts a proxy on a free port of {@code 127.0.0.1} forwarding to {@code targetHost:targetPort}. The target
     * does not need to be reachable yet; it is connected per accepted client.
     *
     * @param targetHost the target host
     * @param targetPort the target port (1..65535)
     * @return the running proxy
     * @throws IllegalArgumentException if the port is out of range
     * @throws UncheckedIOException if the listening socket cannot be opened
     */
    public static TcpProxy start(String targetHost, int targetPort) {
        Objects.requireNonNull(targetHost, "targetHost");
        if (targetPort < 1 || targetPort > 65535) {
            throw new IllegalArgumentException("target port out of range: " + targetPort);
        }
        ServerSocket server;
        try {
            server = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the proxy's listening socket", e);
        }
        TcpProxy proxy = new TcpProxy(targetHost, targetPort, server);
        proxy.acceptor.start();
        return proxy;
    }

    /**
     * The host clients should connect to: always {@code 127.0.0.1}.
     *
     * @return the listen host
     */
    public String host() {
        return "127.0.0.1";
    }

    /**
     * The port clients should connect to.
     *
     * @return the listen port
     */
    public int port() {
        return serverSocket.getLocalPort();
    }

    /**
     * Adds latency to every chunk forwarded in both directions; {@link Duration#ZERO} turns it off.
     *
     * @param delay a non-negative duration
     * @throws IllegalArgumentException if negative
     */
    public void delay(Duration delay) {
        if (delay == null || delay.isNegative()) {
            throw new IllegalArgumentException("delay must be non-negative: " + delay);
        }
        delayNanos = delay.toNanos();
    }

    /**
     * Holds back every chunk the target sends to a client from now on: one byte of it is forwarded after
     * {@code gap}, one more after each further gap, and the rest once {@code total} has passed since the
     * chunk was read. A reply thus arrives whole only after {@code total}, while a client whose socket read
     * times out after more than {@code gap} keeps reading it: what a slow link or a stalled commit does to
     * a reply that the server has already produced. Client-to-target bytes are not touched. Chunks behind a
     * held one on the same connection wait for it (the stream keeps its order). {@link #heal()} ends it for
     * chunks read afterwards. Chunks shorter than {@code minBytes} pass at once: they cannot be trickled
     * over the whole time, and the short replies are a pool's validation pings, which have a short
     * timeout of their own (holding them would only make the pool drop its connections).
     *
     * @param total how long each chunk is held in all; positive
     * @param gap the longest time between two bytes forwarded; positive, at most {@code total}
     * @param minBytes the shortest chunk that is held; at least 1
     * @throws IllegalArgumentException if a duration or {@code minBytes} is out of range
     */
    public void holdReplies(Duration total, Duration gap, int minBytes) {
        if (total == null || gap == null || total.isNegative() || total.isZero() || gap.isNegative() || gap.isZero()
                || gap.compareTo(total) > 0 || minBytes < 1) {
            throw new IllegalArgumentException("need 0 < gap <= total and minBytes >= 1, was gap " + gap + ", total "
                    + total + ", minBytes " + minBytes);
        }
        holdGapNanos = gap.toNanos();
        holdMinBytes = minBytes;
        holdRepliesNanos = total.toNanos();
    }

    /**
     * Silently drops all bytes in both directions on current and new connections, keeping them open, until
     * {@link #heal()}.
     */
    public void blackhole() {
        blackhole = true;
    }

    /**
     * Whether {@link #blackhole()} is in effect.
     *
     * @return true while blackholed
     */
    public boolean isBlackholed() {
        return blackhole;
    }

    /**
     * Aborts all current connections: both the client side and the target side get a TCP RST (the client's next
     * read or write fails with an {@link IOException} such as "Connection reset"). New connections are not
     * affected.
     */
    public void resetAll() {
        for (Connection c : connections.toArray(new Connection[0])) {
            c.abort();
        }
    }

    /**
     * When true, newly accepted connections are reset immediately (existing ones are untouched).
     *
     * @param refuse whether to refuse new connections
     */
    public void refuseNew(boolean refuse) {
        refuseNew = refuse;
    }

    /**
     * Removes all faults: delay, blackhole and refusal. Existing connections are kept.
     */
    public void heal() {
        delayNanos = 0;
        holdRepliesNanos = 0;
        blackhole = false;
        refuseNew = false;
    }

    /**
     * The number of proxied connections currently open (a connection counts until both directions are done).
     *
     * @return the number of open connections
     */
    public int activeConnections() {
        return connections.size();
    }

    /**
     * Total bytes forwarded to the target since start (dropped bytes are not counted). A chunk is counted just
     * before it is written, so once the target has seen bytes they are reflected here.
     *
     * @return bytes written to the target
     */
    public long bytesToTarget() {
        return bytesToTarget.get();
    }

    /**
     * Total bytes forwarded back to clients since start (dropped bytes are not counted), counted like
     * {@link #bytesToTarget()}.
     *
     * @return bytes written to clients
     */
    public long bytesToClient() {
        return bytesToClient.get();
    }

    /**
     * Stops accepting, aborts all connections and waits (bounded, 5 s per thread) for all proxy threads to end.
     * Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closeQuietly(serverSocket);
        for (Connection c : connections.toArray(new Connection[0])) {
            c.abort();
        }
        join(acceptor);
        for (Thread t : threads.toArray(new Thread[0])) {
            t.interrupt(); // wakes forwarding threads sleeping in a delay
            join(t);
        }
    }

    @Override
    public String toString() {
        return "TcpProxy[127.0.0.1:" + port() + " -> " + targetHost + ":" + targetPort + ", connections "
                + activeConnections() + (blackhole ? ", blackhole" : "") + (refuseNew ? ", refusing" : "")
                + (delayNanos > 0 ? ", delay " + Duration.ofNanos(delayNanos) : "")
                + (holdRepliesNanos > 0 ? ", replies held " + Duration.ofNanos(holdRepliesNanos) : "") + (closed ? ", closed" : "")
                + "]";
    }

    // ---------------------------------------------------------------------------------------------------------

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = serverSocket.accept();
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                continue;
            }
            if (closed || refuseNew) {
                abortQuietly(client);
                continue;
            }
            Socket target = new Socket();
            try {
                client.setTcpNoDelay(true);
                target.setTcpNoDelay(true);
                target.connect(new InetSocketAddress(targetHost, targetPort), CONNECT_TIMEOUT_MILLIS);
            } catch (IOException e) {
                closeQuietly(target);
                abortQuietly(client);
                continue;
            }
            Connection connection = new Connection(connectionIds.incrementAndGet(), client, target);
            connections.add(connection);
            if (closed) {
                connection.abort();
                connections.remove(connection);
                continue;
            }
            connection.start();
        }
    }

    /**
     * Waits {@code nanos}, to within the scheduler's wake-up latency. Not {@code Thread.sleep}: on JDK 17 it
     * rounds a sub-millisecond sleep up to a whole millisecond, which would turn a 250 µs delay into 1 ms.
     */
    private static void holdBack(long nanos) throws InterruptedException {
        long deadline = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = deadline - System.nanoTime()) {
            LockSupport.parkNanos(left);
            if (Thread.interrupted()) {
                throw new InterruptedException("proxy closed");
            }
        }
    }

    /** Forwards one held chunk: a byte per gap, the rest when {@code hold} has passed. */
    private static void trickle(byte[] buffer, int n, OutputStream out, AtomicLong counter, long hold, long gap)
            throws IOException, InterruptedException {
        long start = System.nanoTime();
        int sent = 0;
        for (long at = gap; at < hold && sent < n - 1; at += gap) {
            holdBack(start + at - System.nanoTime());
            counter.incrementAndGet();
            out.write(buffer, sent++, 1);
            out.flush();
        }
        holdBack(start + hold - System.nanoTime());
        counter.addAndGet(n - sent);
        out.write(buffer, sent, n - sent);
        out.flush();
    }

    private void join(Thread t) {
        if (t == Thread.currentThread()) {
            return;
        }
        try {
            t.join(JOIN_TIMEOUT_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void abortQuietly(Socket socket) {
        try {
            socket.setSoLinger(true, 0);
        } catch (IOException ignored) {
            // closing anyway
        }
        closeQuietly(socket);
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // best effort
        }
    }

    /** One proxied connection with its two forwarding threads. */
    private final class Connection {
        private final Socket client;
        private final Socket target;
        private final Thread up;
        private final Thread down;
        private final AtomicInteger finished = new AtomicInteger();

        Connection(int id, Socket client, Socket target) {
            this.client = client;
            this.target = target;
            this.up = new Thread(() -> pump(client, target, bytesToTarget, false), threadPrefix + "-" + id + "-up");
            this.down = new Thread(() -> pump(target, client, bytesToClient, true), threadPrefix + "-" + id + "-down");
            up.setDaemon(true);
            down.setDaemon(true);
        }

        void start() {
            threads.add(up);
            threads.add(down);
            up.start();
            down.start();
        }

        void abort() {
            abortQuietly(client);
            abortQuietly(target);
            connections.remove(this);
        }

        private void pump(Socket from, Socket to, AtomicLong counter, boolean toClient) {
            byte[] buffer = new byte[BUFFER_SIZE];
            try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                while (true) {
                    int n = in.read(buffer);
                    if (n < 0) {
                        if (!blackhole) {
                            to.shutdownOutput(); // propagate the FIN
                        }
                        break;
                    }
                    long delay = delayNanos;
                    if (delay > 0) {
                        holdBack(delay);
                    }
                    if (blackhole) {
                        continue;
                    }
                    long hold = toClient ? holdRepliesNanos : 0;
                    if (hold > 0 && n >= holdMinBytes) {
                        trickle(buffer, n, out, counter, hold, holdGapNanos);
                        continue;
                    }
                    counter.addAndGet(n); // counted before writing, so a peer's reply never outruns the counter
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                abort(); // a reset or failure on one side aborts the whole connection
            } catch (InterruptedException e) {
                abort();
            } finally {
                threads.remove(Thread.currentThread());
                if (finished.incrementAndGet() == 2) {
                    closeQuietly(client);
                    closeQuietly(target);
                    connections.remove(this);
                }
            }
        }
    }
}
