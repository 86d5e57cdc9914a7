package io.locksmith.check;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** Renders the HTML report: inline CSS and SVG only, no scripts, no external resources. */
final class Html {
  private static final String[] COLORS = {"#4e79a7", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f"};
  private static final int WIDTH = 1100;
  private static final int LEFT = 70;

  private Html() {}

  static String jsonString(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    return sb.append('"').toString();
  }

  static String esc(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }

  static String render(CheckReport report, Map<String, Object> fields, Checkers.Findings f, List<Event> events,
      long startNanos) {
    StringBuilder h = new StringBuilder();
    CheckSettings s = report.settings();
    h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>locksmith check: ")
        .append(esc(s.backend().cliName() + " / " + s.fault().cliName())).append("</title>\n<style>")
        .append("body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}")
        .append("table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}")
        .append("td.n{text-align:right;font-variant-numeric:tabular-nums}.bad{color:#c00;font-weight:bold}")
        .append("svg{border:1px solid #ddd;background:#fff}text{font:11px sans-serif}")
        .append("</style></head><body>\n");
    h.append("<h1>locksmith check: ").append(esc(s.toString())).append("</h1>\n<p>")
        .append(esc(String.valueOf(fields.get("deployment")))).append("</p>\n");
    h.append("<p class=\"").append(report.verdict() == CheckReport.Verdict.PASSED ? "" : "bad").append("\">")
        .append(esc(Readings.verdictSentence(report))).append("</p>\n");
    List<String> broken = report.brokenPromises();
    if (!report.checkerSawForcedViolation()) {
      h.append("<p class=\"bad\">Checker broken: holders were paused past their leases without fencing, and no "
          + "violation was seen.</p>\n");
    }
    for (String b : broken) {
      h.append("<p class=\"bad\">Violation: ").append(esc(b)).append("</p>\n");
    }
    h.append("<table><tr><th>measure</th><th>value</th><th>for this fault</th></tr>\n");
    Map<String, Readings.Reading> judged = Readings.of(report);
    judged.forEach((k, r) -> h.append("<tr><td>").append(esc(k)).append("</td><td class=\"n")
        .append(r.mark() == Readings.Mark.NOT_EXPECTED ? " bad" : "").append("\">").append(r.value())
        .append("</td><td>").append(esc(r.text())).append("</td></tr>\n"));
    for (var e : fields.entrySet()) {
      if ((e.getValue() instanceof Number || e.getValue() instanceof Boolean) && !judged.containsKey(e.getKey())) {
        h.append("<tr><td>").append(esc(e.getKey())).append("</td><td class=\"n\">").append(e.getValue())
            .append("</td><td></td></tr>\n");
      }
    }
    h.append("</table>\n");
    timeline(h, f, events, startNanos, report.durationMillis());
    tokens(h, f, startNanos);
    h.append("<h2>Faults</h2><ul>\n");
    for (Object line : (List<?>) fields.get("faultLog")) {
      h.append("<li>").append(esc(String.valueOf(line))).append("</li>\n");
    }
    h.append("</ul>\n<p>Holds are conservative: from the acquisition's completion to the invocation of the "
        + "release, stamped with the machine's monotonic clock (CLOCK_MONOTONIC, shared by all processes).</p>\n");
    return h.append("</body></html>\n").toString();
  }

  private static void timeline(StringBuilder h, Checkers.Findings f, List<Event> events, long startNanos,
      long durationMillis) {
    TreeSet<String> clients = new TreeSet<>();
    f.holds().forEach(x -> clients.add(x.client()));
    Map<String, Integer> row = new LinkedHashMap<>();
    clients.forEach(c -> row.put(c, row.size()));
    Map<String, Integer> lockColor = new LinkedHashMap<>();
    f.holds().forEach(x -> lockColor.putIfAbsent(x.lock(), lockColor.size()));
    Set<Integer> overlapping = new HashSet<>();
    f.overlaps().forEach(o -> {
      overlapping.add(o.first().id());
      overlapping.add(o.second().id());
    });
    long end = durationMillis;
    for (Event e : events) {
      end = Math.max(end, (e.nanos() - startNanos) / 1_000_000);
    }
    double scale = (WIDTH - LEFT - 10) / (double) Math.max(1, end);
    int rowH = 22;
    int height = 30 + rowH * row.size() + 20;
    h.append("<h2>Holds per client</h2>\n<p>Each bar is one hold, coloured by lock name; holds that overlap another "
        + "hold of the same lock are red. Grey bands are fault windows.</p>\n");
    h.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"")
        .append(height).append("\">\n");
    for (Checkers.FaultWindow w : f.faults()) {
      double x = LEFT + Math.max(0, (w.startNanos() - startNanos) / 1e6) * scale;
      double wd = Math.max(2, (w.endNanos() - w.startNanos()) / 1e6 * scale);
      h.append(String.format("<rect x=\"%.1f\" y=\"20\" width=\"%.1f\" height=\"%d\" fill=\"#ddd\"><title>%s</title></rect>%n",
          x, wd, rowH * row.size(), esc(w.detail())));
    }
    for (var r : row.entrySet()) {
      int y = 20 + r.getValue() * rowH;
      h.append("<text x=\"4\" y=\"").append(y + 15).append("\">").append(esc(r.getKey())).append("</text>\n");
    }
    for (Checkers.Hold x : f.holds()) {
      int y = 20 + row.get(x.client()) * rowH + 3;
      double x0 = LEFT + (x.startNanos() - startNanos) / 1e6 * scale;
      double wd = Math.max(1, (x.endNanos() - x.startNanos()) / 1e6 * scale);
      boolean bad = overlapping.contains(x.id());
      h.append(String.format("<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"%s><title>%s %s token %d, %d..%d ms%s</title></rect>%n",
          x0, y, wd, rowH - 6, bad ? "#e15759" : COLORS[lockColor.get(x.lock()) % COLORS.length],
          bad ? " stroke=\"#900\"" : "", esc(x.client()), esc(x.lock()), x.token(),
          (x.startNanos() - startNanos) / 1_000_000, (x.endNanos() - startNanos) / 1_000_000,
          bad ? " (overlaps)" : ""));
    }
    int axisY = 20 + rowH * row.size() + 14;
    for (long t = 0; t <= end; t += Math.max(1000, (end / 10 + 999) / 1000 * 1000)) {
      h.append(String.format("<text x=\"%.1f\" y=\"%d\">%d s</text>%n", LEFT + t * scale, axisY, t / 1000));
    }
    h.append("</svg>\n<p>Legend: ");
    lockColor.forEach((lock, i) -> h.append("<span style=\"color:").append(COLORS[i % COLORS.length])
        .append("\">&#9632; ").append(esc(lock)).append("</span> "));
    h.append("<span style=\"color:#e15759\">&#9632; overlapping</span></p>\n");
  }

  private static void tokens(StringBuilder h, Checkers.Findings f, long startNanos) {
    h.append("<h2>Fencing tokens</h2>\n<p>Tokens of successive grants per lock, by grant time (y: rank of the "
        + "token among that lock's tokens). A red dot is a grant whose token was not larger than a definitely "
        + "earlier grant's.</p>\n");
    Set<Integer> regressed = new HashSet<>();
    f.regressions().forEach(r -> regressed.add(r.later().id()));
    Map<String, List<Checkers.Hold>> byLock = new LinkedHashMap<>();
    f.holds().forEach(x -> byLock.computeIfAbsent(x.lock(), k -> new ArrayList<>()).add(x));
    int height = 160;
    long end = 1;
    for (Checkers.Hold x : f.holds()) {
      end = Math.max(end, (x.startNanos() - startNanos) / 1_000_000);
    }
    double scale = (WIDTH - LEFT - 10) / (double) end;
    int i = 0;
    for (var e : byLock.entrySet()) {
      List<Checkers.Hold> grants = e.getValue();
      List<Long> sorted = grants.stream().map(Checkers.Hold::token).distinct().sorted().toList();
      h.append("<p>").append(esc(e.getKey())).append(": ").append(grants.size()).append(" grants, tokens ")
          .append(sorted.get(0)).append(" .. ").append(sorted.get(sorted.size() - 1)).append("</p>\n");
      h.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"")
          .append(height).append("\">\n<polyline fill=\"none\" stroke=\"").append(COLORS[i++ % COLORS.length])
          .append("\" points=\"");
      StringBuilder dots = new StringBuilder();
      for (Checkers.Hold x : grants) {
        double px = LEFT + (x.startNanos() - startNanos) / 1e6 * scale;
        int rank = java.util.Collections.binarySearch(sorted, x.token());
        double py = height - 10 - (height - 20) * (sorted.size() == 1 ? 0.5 : rank / (double) (sorted.size() - 1));
        h.append(String.format("%.1f,%.1f ", px, py));
        if (regressed.contains(x.id())) {
          dots.append(String.format("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#c00\"><title>%s token %d</title></circle>%n",
              px, py, esc(x.client()), x.token()));
        }
      }
      h.append("\"/>\n").append(dots).append("</svg>\n");
    }
    if (!f.regressions().isEmpty()) {
      h.append("<table><tr><th>earlier grant</th><th>token</th><th>later grant</th><th>token</th></tr>\n");
      f.regressions().stream().limit(50).forEach(r -> h.append("<tr><td>").append(esc(r.earlier().client()))
          .append("</td><td class=\"n\">").append(r.earlier().token()).append("</td><td>")
          .append(esc(r.later().client())).append("</td><td class=\"n bad\">").append(r.later().token())
          .append("</td></tr>\n"));
      h.append("</table>\n");
    }
  }
}
