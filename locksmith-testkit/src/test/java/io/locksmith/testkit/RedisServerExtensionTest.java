package io.locksmith.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisServerExtensionTest {

    @RegisterExtension
    static final RedisServerExtension REDIS = new RedisServerExtension(b -> b.extraArgs("--maxmemory", "8mb"));

    static final Set<Long> CLASS_PIDS = new HashSet<>();

    @Test
    @Order(1)
    void serverIsRunningAndCustomized() {
        assertThat(REDIS.server().command("PING")).isEqualTo("PONG");
        assertThat(REDIS.server().command("CONFIG", "GET", "maxmemory")).isEqualTo("maxmemory\n" + 8 * 1024 * 1024);
        CLASS_PIDS.add(REDIS.server().pid());
    }

    @Test
    @Order(2)
    void sameServerForTheWholeClass() {
        CLASS_PIDS.add(REDIS.server().pid());
        assertThat(CLASS_PIDS).hasSize(1);
    }

    @Nested
    class NestedTests {
        @Test
        void nestedClassSharesTheOuterServer() {
            assertThat(REDIS.server().command("PING")).isEqualTo("PONG");
            assertThat(REDIS.server().isRunning()).isTrue();
        }
    }

    @Nested
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    class PerTest {
        @RegisterExtension
        final RedisServerExtension perTest = new RedisServerExtension();

        @Test
        void freshServerPerTest() {
            assertThat(perTest.server().command("DBSIZE")).isEqualTo("0");
            perTest.server().command("SET", "leftover", "1");
            assertThat(perTest.server().port()).isNotEqualTo(REDIS.server().port());
        }

        @Test
        void anotherFreshServer() {
            assertThat(perTest.server().command("DBSIZE")).isEqualTo("0");
            perTest.server().command("SET", "leftover", "1");
        }
    }
}
