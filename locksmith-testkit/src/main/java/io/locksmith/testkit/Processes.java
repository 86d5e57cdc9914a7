package io.locksmith.testkit;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/** Process helpers. Package-private. */
final class Processes {

    private Processes() {
    }

    /**
     * Starts a process, retrying briefly on {@code ETXTBSY} ("Text file busy"), which can happen right after a
     * binary was extracted while another thread of this JVM forked and still held the write descriptor.
     */
    static Process start(ProcessBuilder builder) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                return builder.start();
            } catch (IOException e) {
                String message = String.valueOf(e.getMessage());
                if (attempt >= 20 || !message.contains("Text file busy")) {
                    throw e;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(25));
            }
        }
    }

    /** Waits up to {@code millis} for exit; preserves the interrupt flag. Returns true if the process exited. */
    static boolean awaitExit(Process process, long millis) {
        try {
            return process.waitFor(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !process.isAlive();
        }
    }
}
