package io.locksmith.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class ProcessSignalsTest {

    @Test
    void pauseResumeAndKillAChildProcess() throws Exception {
        Process sleeper = new ProcessBuilder("sleep", "60").start();
        try {
            long pid = sleeper.pid();
            ProcessSignals.pause(pid);
            assertThat(ProcessSignals.procState(pid)).isIn('T', 't', '?');
            ProcessSignals.resume(pid);
            assertThat(ProcessSignals.procState(pid)).isNotIn('T', 't');
            assertThat(sleeper.isAlive()).isTrue();

            ProcessSignals.pause(pid);
            ProcessSignals.kill9(pid); // works on a stopped process
            assertThat(sleeper.waitFor(5, TimeUnit.SECONDS)).isTrue();
            assertThat(sleeper.exitValue()).isEqualTo(128 + 9);
            ProcessSignals.kill9(pid); // already gone: no-op
        } finally {
            sleeper.destroyForcibly();
        }
    }

    @Test
    void signallingAMissingProcessFails() throws Exception {
        Process done = new ProcessBuilder("true").start();
        assertThat(done.waitFor(5, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> ProcessSignals.pause(done.pid())).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> ProcessSignals.pause(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
