package io.locksmith.spring;

import java.time.Duration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * Answers a {@link LockNotAcquiredException} that reaches Spring MVC or WebFlux with an RFC 9457
 * {@link ProblemDetail}: {@code locksmith.web.status} (409 Conflict by default, or 423 Locked) when the
 * lock was busy, with {@code Retry-After} when {@code locksmith.web.retry-after} is set; 503 Service
 * Unavailable when the backend could not be reached. The lock's name is not in the response (lock names
 * are often business identifiers); it is in the exception, for the application's own logs. Ordered last,
 * so the application's own handlers win. Immutable and thread-safe.
 */
@ControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class LockNotAcquiredProblemHandler {

  private final HttpStatus busyStatus;
  private final Duration retryAfter;

  /**
   * @param busyStatus the status when the lock was busy (a 4xx)
   * @param retryAfter the {@code Retry-After} to send with it, or null for none
   * @throws IllegalArgumentException if the status is not a 4xx one or retryAfter is negative
   */
  public LockNotAcquiredProblemHandler(HttpStatus busyStatus, Duration retryAfter) {
    if (busyStatus == null || !busyStatus.is4xxClientError()) {
      throw new IllegalArgumentException("locksmith.web.status must be a 4xx status (409, 423), was " + busyStatus);
    }
    if (retryAfter != null && retryAfter.isNegative()) {
      throw new IllegalArgumentException("locksmith.web.retry-after must not be negative, was " + retryAfter);
    }
    this.busyStatus = busyStatus;
    this.retryAfter = retryAfter;
  }

  /**
   * The response for a lock not obtained.
   *
   * @param e the exception
   * @return a problem-detail response
   */
  @ExceptionHandler(LockNotAcquiredException.class)
  public ResponseEntity<ProblemDetail> lockNotAcquired(LockNotAcquiredException e) {
    boolean busy = e.getCause() == null; // a plain timeout; a cause means the backend failed or the wait was interrupted
    HttpStatus status = busy ? busyStatus : HttpStatus.SERVICE_UNAVAILABLE;
    ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, busy
        ? "The resource is in use by another request; retry later."
        : "The lock service could not be reached; retry later.");
    problem.setTitle("Lock not acquired");
    ResponseEntity.BodyBuilder response = ResponseEntity.status(status);
    if (busy && retryAfter != null) {
      // whole seconds, rounded up (RFC 9110 delay-seconds)
      long seconds = retryAfter.getSeconds() + (retryAfter.getNano() > 0 ? 1 : 0);
      response.header(HttpHeaders.RETRY_AFTER, Long.toString(seconds));
    }
    return response.contentType(org.springframework.http.MediaType.APPLICATION_PROBLEM_JSON).body(problem);
  }
}
