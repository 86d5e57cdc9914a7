package io.locksmith.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class TcpProxyTest {

    @RegisterExtension
    static final RedisServerExtension REDIS = new RedisServerExtension();

    private static final byte[] PING = "*1\r\n$4\r\nPING\r\n".getBytes(StandardCharsets.US_ASCII);

    /** A raw client connection through the proxy. */
    private static Socket connect(TcpProxy proxy, int readTimeoutMillis) throws IOException {
        Socket socket = new Socket();
        socket.setSoTimeout(readTimeoutMillis);
        socket.connect(new InetSocketAddress(proxy.host(), proxy.port()), 2_000);
        return socket;
    }

    private static String ping(Socket socket) throws IOException {
        socket.getOutputStream().write(PING);
        socket.getOutputStream().flush();
        InputStream in = socket.getInputStream();
        byte[] reply = new byte[7];
        int read = 0;
        while (read < reply.length) {
            int n = in.read(reply, read, reply.length - read);
            if (n < 0) {
                throw new IOException("EOF after " + read + " bytes");
            }
            read += n;
        }
        return new String(reply, StandardCharsets.US_ASCII);
    }

    private static void pingOnNewConnection(TcpProxy proxy) throws IOException {
        try (Socket socket = connect(proxy, 2_000)) {
            ping(socket);
        }
    }

    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.onSpinWait();
        }
    }

    private static TcpProxy proxy() {
        return TcpProxy.start(REDIS.server().host(), REDIS.server().port());
    }

    @Test
    void forwardsToRedis() throws IOException {
        try (TcpProxy proxy = proxy()) {
            try (Socket socket = connect(proxy, 2_000)) {
                assertThat(ping(socket)).isEqualTo("+PONG\r\n");
                assertThat(ping(socket)).isEqualTo("+PONG\r\n");
                assertThat(proxy.activeConnections()).isEqualTo(1);
                assertThat(proxy.bytesToTarget()).isEqualTo(2L * PING.length);
                assertThat(proxy.bytesToClient()).isEqualTo(14);
            }
            await("connection to be released", () -> proxy.activeConnections() == 0);
        }
    }

    @Test
    void blackholeDropsBytesAndHealRestoresNewConnections() throws IOException {
        try (TcpProxy proxy = proxy(); Socket existing = connect(proxy, 300)) {
            assertThat(ping(existing)).isEqualTo("+PONG\r\n");
            proxy.blackhole();
            assertThat(proxy.isBlackholed()).isTrue();
            assertThatThrownBy(() -> ping(existing)).isInstanceOf(SocketTimeoutException.class);

            try (Socket fresh = connect(proxy, 300)) { // accepted, but gets nothing
                assertThatThrownBy(() -> ping(fresh)).isInstanceOf(SocketTimeoutException.class);
            }
            long delivered = proxy.bytesToTarget();

            proxy.heal();
            try (Socket healed = connect(proxy, 2_000)) {
                assertThat(ping(healed)).isEqualTo("+PONG\r\n");
            }
            assertThat(proxy.bytesToTarget()).isEqualTo(delivered + PING.length);
        }
    }

    @Test
    void resetAllBreaksCurrentConnections() throws IOException {
        try (TcpProxy proxy = proxy(); Socket socket = connect(proxy, 2_000)) {
            assertThat(ping(socket)).isEqualTo("+PONG\r\n");
            proxy.resetAll();
            assertThatThrownBy(() -> socket.getInputStream().read())
                    .isInstanceOf(IOException.class)
                    .isNotInstanceOf(SocketTimeoutException.class);
            await("connection to be released", () -> proxy.activeConnections() == 0);
            try (Socket next = connect(proxy, 2_000)) {
                assertThat(ping(next)).isEqualTo("+PONG\r\n");
            }
        }
    }

    @Test
    void refuseNewClosesNewConnectionsOnly() throws IOException {
        try (TcpProxy proxy = proxy(); Socket existing = connect(proxy, 2_000)) {
            assertThat(ping(existing)).isEqualTo("+PONG\r\n");
            proxy.refuseNew(true);
            // the reset may already hit the connect (Java's timed connect polls) or else the first read
            assertThatThrownBy(() -> pingOnNewConnection(proxy)).isInstanceOf(IOException.class)
                    .isNotInstanceOf(SocketTimeoutException.class);
            assertThat(ping(existing)).isEqualTo("+PONG\r\n");
            proxy.heal();
            try (Socket accepted = connect(proxy, 2_000)) {
                assertThat(ping(accepted)).isEqualTo("+PONG\r\n");
            }
        }
    }

    @Test
    void delayAddsLatency() throws IOException {
        try (TcpProxy proxy = proxy(); Socket socket = connect(proxy, 5_000)) {
            assertThat(ping(socket)).isEqualTo("+PONG\r\n");
            proxy.delay(Duration.ofMillis(200));
            long start = System.nanoTime();
            assertThat(ping(socket)).isEqualTo("+PONG\r\n");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(200));

            proxy.delay(Duration.ZERO);
            start = System.nanoTime();
            assertThat(ping(socket)).isEqualTo("+PONG\r\n");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(200));
            assertThatThrownBy(() -> proxy.delay(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void unreachableTargetResetsClients() throws IOException {
        int deadPort;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            deadPort = s.getLocalPort();
        }
        try (TcpProxy proxy = TcpProxy.start("127.0.0.1", deadPort)) {
            assertThatThrownBy(() -> pingOnNewConnection(proxy)).isInstanceOf(IOException.class)
                    .isNotInstanceOf(SocketTimeoutException.class);
            assertThat(proxy.activeConnections()).isZero();
        }
    }

    @Test
    void closeStopsAllThreads() throws IOException {
        TcpProxy proxy = proxy();
        String prefix = "locksmith-proxy-" + proxy.port() + "-";
        Socket a = connect(proxy, 2_000);
        Socket b = connect(proxy, 2_000);
        try {
            assertThat(ping(a)).isEqualTo("+PONG\r\n");
            assertThat(ping(b)).isEqualTo("+PONG\r\n");
            proxy.delay(Duration.ofSeconds(30)); // a forwarding thread will be sleeping in the delay
            a.getOutputStream().write(PING);
            assertThat(proxyThreads(prefix)).isGreaterThanOrEqualTo(5);

            proxy.close();
            assertThat(proxyThreads(prefix)).isZero();
            assertThat(proxy.activeConnections()).isZero();
            proxy.close(); // idempotent
            assertThatThrownBy(() -> connect(proxy, 500)).isInstanceOf(IOException.class);
        } finally {
            a.close();
            b.close();
        }
    }

    private static long proxyThreads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .filter(t -> t.getName().startsWith(prefix))
                .count();
    }
}
