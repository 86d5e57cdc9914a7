package io.locksmith.testkit;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.net.URLConnection;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Locates a {@code redis-server} binary and detects its version. Package-private helper of {@link RedisServer}.
 */
final class RedisBinaries {

    static final String PROPERTY = "locksmith.redis.server";
    static final String ARTIFACT = "com.github.codemonstur:embedded-redis:1.4.4";

    private static final Pattern VERSION = Pattern.compile("v=(\\d+)\\.(\\d+)\\.(\\d+)");
    private static final Map<Path, String> VERSIONS = new ConcurrentHashMap<>();
    private static final Object EXTRACT_LOCK = new Object();
    private static volatile Path extracted;

    private RedisBinaries() {
    }

    static Path resolve() {
        String configured = System.getProperty(PROPERTY);
        if (configured != null && !configured.isBlank()) {
            Path path = Path.of(configured.trim()).toAbsolutePath();
            if (!Files.isRegularFile(path) || !Files.isExecutable(path)) {
                throw new IllegalStateException("-D" + PROPERTY + "=" + configured
                        + " does not point to an executable file");
            }
            return path;
        }
        Path onPath = findOnPath("redis-server");
        if (onPath != null) {
            return onPath;
        }
        return embedded();
    }

    static Path findOnPath(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String entry : path.split(Pattern.quote(File.pathSeparator))) {
            if (entry.isEmpty()) {
                continue;
            }
            try {
                Path candidate = Path.of(entry, name);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return candidate.toAbsolutePath();
                }
            } catch (RuntimeException ignored) {
                // malformed PATH entry
            }
        }
        return null;
    }

    /** Name of the binary inside the embedded-redis jar for the given platform, if there is one. */
    static Optional<String> embeddedName(String osName, String osArch) {
        String os = osName.toLowerCase(Locale.ROOT);
        String arch = osArch.toLowerCase(Locale.ROOT);
        boolean x64 = arch.equals("amd64") || arch.equals("x86_64");
        boolean arm64 = arch.equals("aarch64") || arch.equals("arm64");
        boolean x86 = arch.equals("x86") || arch.equals("i386") || arch.equals("i486") || arch.equals("i586")
                || arch.equals("i686");
        if (os.contains("linux")) {
            if (x64) {
                return Optional.of("redis-server-6.2.6-v5-linux-amd64");
            }
            if (arm64) {
                return Optional.of("redis-server-6.2.7-linux-arm64");
            }
            if (x86) {
                return Optional.of("redis-server-6.2.7-linux-386");
            }
        } else if (os.contains("mac") || os.contains("darwin")) {
            if (x64) {
                return Optional.of("redis-server-6.2.6-v5-darwin-amd64");
            }
            if (arm64) {
                return Optional.of("redis-server-6.2.6-v5-darwin-arm64");
            }
        }
        return Optional.empty();
    }

    private static Path embedded() {
        Path cached = extracted;
        if (cached != null && Files.isExecutable(cached)) {
            return cached;
        }
        synchronized (EXTRACT_LOCK) {
            if (extracted != null && Files.isExecutable(extracted)) {
                return extracted;
            }
            String osName = System.getProperty("os.name", "?");
            String osArch = System.getProperty("os.arch", "?");
            String name = embeddedName(osName, osArch).orElseThrow(() -> new IllegalStateException(
                    "no redis-server available: not on the PATH, -D" + PROPERTY + " not set, and " + ARTIFACT
                            + " has no binary for os.name=" + osName + ", os.arch=" + osArch));
            try {
                extracted = extract(name);
            } catch (IOException e) {
                throw new IllegalStateException("cannot extract " + name + " from " + ARTIFACT, e);
            }
            return extracted;
        }
    }

    private static Path extract(String name) throws IOException {
        ClassLoader loader = RedisBinaries.class.getClassLoader();
        URL url = loader == null ? null : loader.getResource(name);
        if (url == null && Thread.currentThread().getContextClassLoader() != null) {
            loader = Thread.currentThread().getContextClassLoader();
            url = loader.getResource(name);
        }
        if (url == null) {
            throw new IllegalStateException("no redis-server available: not on the PATH, -D" + PROPERTY
                    + " not set, and resource " + name + " not found on the classpath (is " + ARTIFACT
                    + " a dependency?)");
        }
        long expectedSize = contentLength(url);
        Path dir = cacheDir();
        Path target = dir.resolve(name);
        if (Files.isRegularFile(target) && Files.isExecutable(target)) {
            long size = Files.size(target);
            if (expectedSize < 0 ? size > 0 : size == expectedSize) {
                return target;
            }
        }
        Path tmp = Files.createTempFile(dir, name + "-", ".tmp");
        try {
            try (InputStream in = loader.getResourceAsStream(name)) {
                if (in == null) {
                    throw new IOException("resource " + name + " disappeared from the classpath");
                }
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            }
            try {
                Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
            } catch (UnsupportedOperationException e) {
                if (!tmp.toFile().setExecutable(true, false)) {
                    throw new IOException("cannot make " + tmp + " executable", e);
                }
            }
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
            return target;
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private static Path cacheDir() throws IOException {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        Path shared = tmp.resolve("locksmith-redis-bin");
        try {
            Files.createDirectories(shared);
            if (Files.isWritable(shared)) {
                return shared;
            }
        } catch (IOException e) {
            // fall through to a per-user directory (e.g. the shared one belongs to another user)
        }
        Path personal = tmp.resolve("locksmith-redis-bin-" + System.getProperty("user.name", "user"));
        Files.createDirectories(personal);
        return personal;
    }

    private static long contentLength(URL url) {
        try {
            URLConnection connection = url.openConnection();
            connection.setUseCaches(false);
            long length = connection.getContentLengthLong();
            try (InputStream ignored = connection.getInputStream()) {
                return length; // closing the stream releases the jar opened by the connection
            }
        } catch (IOException e) {
            return -1;
        }
    }

    /** Runs {@code <binary> --version} once per binary and returns {@code X.Y.Z}. */
    static String version(Path binary) {
        return VERSIONS.computeIfAbsent(binary, RedisBinaries::detectVersion);
    }

    static int major(String version) {
        return Integer.parseInt(version.substring(0, version.indexOf('.')));
    }

    static String parseVersion(String output) {
        Matcher m = VERSION.matcher(output);
        if (!m.find()) {
            return null;
        }
        return m.group(1) + "." + m.group(2) + "." + m.group(3);
    }

    private static String detectVersion(Path binary) {
        Process process = null;
        try {
            process = Processes.start(new ProcessBuilder(binary.toString(), "--version").redirectErrorStream(true));
            process.getOutputStream().close();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException(binary + " --version did not finish within 10 s");
            }
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            String version = parseVersion(output);
            if (version == null) {
                throw new IllegalStateException("cannot parse the version printed by " + binary + " --version: "
                        + output.trim());
            }
            return version;
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + binary + " --version", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + binary + " --version", e);
        } finally {
            if (process != null) {
                process.destroyForcibly();
            }
        }
    }
}
