package io.locksmith.testkit;

import java.util.Objects;
import java.util.function.Consumer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that runs a {@link RedisServer} for a test class or for each test.
 *
 * <pre>{@code
 * class MyTest {
 *     @RegisterExtension
 *     static final RedisServerExtension REDIS = new RedisServerExtension();   // one server for the class
 *
 *     @Test void works() { client(REDIS.server().uri()); }
 * }
 * }</pre>
 *
 * Registered on a {@code static} field, the server is started in {@code beforeAll} and closed in
 * {@code afterAll} (also for {@code @Nested} classes, which share the outer server). Registered on an instance
 * field, a fresh server is started before and closed after each test. The server is closed even when tests
 * fail; the {@link RedisServer} shutdown hook is the last line of defence.
 *
 * <p>Thread-safety: {@link #server()} may be called from any thread; the callbacks are invoked by JUnit.
 */
public final class RedisServerExtension
        implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

    private final Consumer<RedisServer.Builder> customizer;
    private volatile RedisServer server;
    private volatile String owner; // unique id of the extension context that started the server

    /** Creates an extension starting servers with default settings. */
    public RedisServerExtension() {
        this(builder -> { });
    }

    /**
     * Creates an extension whose servers are configured by {@code customizer}, e.g.
     * {@code new RedisServerExtension(b -> b.persistence(true))}.
     *
     * @param customizer applied to a fresh {@link RedisServer.Builder} before each start
     */
    public RedisServerExtension(Consumer<RedisServer.Builder> customizer) {
        this.customizer = Objects.requireNonNull(customizer, "customizer");
    }

    /**
     * The running server.
     *
     * @return the server for the current class or test
     * @throws IllegalStateException if called outside the extension's lifecycle (e.g. not registered with
     *     {@code @RegisterExtension}, or after the server was closed)
     */
    public RedisServer server() {
        RedisServer s = server;
        if (s == null) {
            throw new IllegalStateException("no Redis server running: register the extension with @RegisterExtension"
                    + " and call server() from a test or a lifecycle method");
        }
        return s;
    }

    /**
     * Starts the server for the class unless one is already running (e.g. for a {@code @Nested} class).
     *
     * @throws IllegalStateException if the server cannot be started
     */
    @Override
    public void beforeAll(ExtensionContext context) {
        startIfNeeded(context);
    }

    /**
     * Closes the server if it was started for this class.
     */
    @Override
    public void afterAll(ExtensionContext context) {
        closeIfOwner(context);
    }

    /**
     * Starts a server for this test if none was started for the class (instance-field registration).
     *
     * @throws IllegalStateException if the server cannot be started
     */
    @Override
    public void beforeEach(ExtensionContext context) {
        startIfNeeded(context);
    }

    /**
     * Closes the server if it was started for this test.
     */
    @Override
    public void afterEach(ExtensionContext context) {
        closeIfOwner(context);
    }

    private synchronized void startIfNeeded(ExtensionContext context) {
        if (server != null) {
            return;
        }
        RedisServer.Builder builder = RedisServer.builder();
        customizer.accept(builder);
        server = builder.start();
        owner = context.getUniqueId();
    }

    private synchronized void closeIfOwner(ExtensionContext context) {
        if (server != null && context.getUniqueId().equals(owner)) {
            try {
                server.close();
            } finally {
                server = null;
                owner = null;
            }
        }
    }
}
