package io.locksmith.testkit;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Minimal RESP (REdis Serialization Protocol) client used by the testkit: one command per fresh socket,
 * always with connect and read timeouts. Package-private; not part of the public API.
 */
final class Resp {

    /** An error reply ({@code -ERR ...}), kept as a value so that errors nested in arrays can be rendered. */
    record ErrorReply(String message) {
    }

    private Resp() {
    }

    /**
     * Sends one command and reads one reply.
     *
     * @return {@code String} (simple string, bulk string, double, big number), {@code Long} (integer),
     *     {@code Boolean}, {@code List<Object>} (array, set, map, push), {@link ErrorReply}, or {@code null}
     * @throws IOException on connect/read failure, timeout or protocol violation
     */
    static Object call(String host, int port, Duration timeout, String... args) throws IOException {
        if (args == null || args.length == 0) {
            throw new IllegalArgumentException("a command needs at least one argument");
        }
        int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        try (Socket socket = new Socket()) {
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(millis);
            socket.connect(new InetSocketAddress(host, port), millis);
            OutputStream out = socket.getOutputStream();
            out.write(encode(args));
            out.flush();
            return read(new BufferedInputStream(socket.getInputStream()));
        }
    }

    /** Encodes a command as a RESP array of bulk strings. */
    static byte[] encode(String... args) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        writeAscii(buf, "*" + args.length + "\r\n");
        for (String arg : args) {
            byte[] bytes = (arg == null ? "" : arg).getBytes(StandardCharsets.UTF_8);
            writeAscii(buf, "$" + bytes.length + "\r\n");
            buf.writeBytes(bytes);
            writeAscii(buf, "\r\n");
        }
        return buf.toByteArray();
    }

    private static void writeAscii(ByteArrayOutputStream buf, String s) {
        buf.writeBytes(s.getBytes(StandardCharsets.US_ASCII));
    }

    /** Reads one complete reply (recursively for aggregates). */
    static Object read(InputStream in) throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new EOFException("connection closed by the server before a reply was read");
        }
        String line = readLine(in);
        switch (type) {
            case '+':
            case ',': // RESP3 double
            case '(': // RESP3 big number
                return line;
            case '-':
                return new ErrorReply(line);
            case ':':
                return parseLong(line);
            case '#':
                return "t".equals(line);
            case '_':
                return null;
            case '$':
            case '=': // RESP3 verbatim string: "txt:" prefix
            case '!': { // RESP3 bulk error
                int len = (int) parseLong(line);
                if (len < 0) {
                    return null;
                }
                String s = new String(readExactly(in, len), StandardCharsets.UTF_8);
                expectCrlf(in);
                if (type == '=') {
                    return s.length() >= 4 && s.charAt(3) == ':' ? s.substring(4) : s;
                }
                return type == '!' ? new ErrorReply(s) : s;
            }
            case '*':
            case '~': // RESP3 set
            case '>': // RESP3 push
            case '%': { // RESP3 map: 2n elements
                long n = parseLong(line);
                if (n < 0) {
                    return null;
                }
                long count = type == '%' ? 2 * n : n;
                List<Object> items = new ArrayList<>((int) Math.min(count, 1024));
                for (long i = 0; i < count; i++) {
                    items.add(read(in));
                }
                return items;
            }
            case '|': { // RESP3 attribute: skip it, the real reply follows
                long n = parseLong(line);
                for (long i = 0; i < 2 * n; i++) {
                    read(in);
                }
                return read(in);
            }
            default:
                throw new IOException("unexpected RESP type byte '" + (char) type + "' (line: " + line + ")");
        }
    }

    /**
     * Renders a reply as text: strings as-is, integers as digits, arrays as their (flattened) elements joined
     * by newlines. Nested nulls render as {@code (nil)}, nested errors as {@code (error) message}.
     *
     * @throws IllegalStateException if the top-level reply is an error
     */
    static String render(Object reply) {
        if (reply instanceof ErrorReply e) {
            throw new IllegalStateException(e.message());
        }
        if (reply == null) {
            return null;
        }
        if (reply instanceof List<?> list) {
            List<String> lines = new ArrayList<>();
            flatten(list, lines);
            return String.join("\n", lines);
        }
        return String.valueOf(reply);
    }

    private static void flatten(List<?> list, List<String> lines) {
        for (Object item : list) {
            if (item instanceof List<?> nested) {
                flatten(nested, lines);
            } else if (item instanceof ErrorReply e) {
                lines.add("(error) " + e.message());
            } else if (item == null) {
                lines.add("(nil)");
            } else {
                lines.add(String.valueOf(item));
            }
        }
    }

    private static long parseLong(String s) throws IOException {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new IOException("malformed RESP length/integer: " + s, e);
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream(64);
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("connection closed in the middle of a reply");
            }
            if (b == '\r') {
                int next = in.read();
                if (next == '\n') {
                    return buf.toString(StandardCharsets.UTF_8);
                }
                throw new IOException("malformed RESP line terminator");
            }
            buf.write(b);
        }
    }

    private static byte[] readExactly(InputStream in, int len) throws IOException {
        byte[] data = in.readNBytes(len);
        if (data.length != len) {
            throw new EOFException("connection closed in the middle of a bulk reply");
        }
        return data;
    }

    private static void expectCrlf(InputStream in) throws IOException {
        if (in.read() != '\r' || in.read() != '\n') {
            throw new IOException("malformed RESP bulk terminator");
        }
    }
}
