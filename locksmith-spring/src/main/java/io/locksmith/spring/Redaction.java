package io.locksmith.spring;

import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Removes credentials from text the starter shows: the user-info part of every URI
 * ({@code redis://:pw@host} becomes {@code redis://***@host}). Applied to every property value and
 * backend message that goes into a start-up failure, a log line, health details or the endpoint, because
 * backend messages may quote the URI they were given. Stateless and thread-safe.
 */
final class Redaction {

  /** scheme://user-info@ — the user-info has no '/', whitespace or '@' of its own. */
  private static final Pattern USER_INFO = Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*://)[^/@\\s\\[\\],']*@");

  private Redaction() {}

  /**
   * The text with the user-info of every URI in it replaced by {@code ***}.
   *
   * @param text any text, or null
   * @return the redacted text, or null for null
   */
  static String redact(String text) {
    return text == null ? null : USER_INFO.matcher(text).replaceAll("$1***@");
  }

  /**
   * Each value redacted.
   *
   * @param values URIs or other text
   * @return a new list
   */
  static List<String> redact(List<String> values) {
    return values.stream().map(Redaction::redact).collect(Collectors.toList());
  }
}
