#include "live/live_page.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "export/html_report.h"

namespace roastcoffea {
namespace live {
namespace {

std::string Seconds(double s) {
  if (!std::isfinite(s) || s < 0) return "N/A";
  if (s < 60) return absl::StrFormat("%.1f s", s);
  const int64_t whole = static_cast<int64_t>(s);
  if (whole < 3600) return absl::StrFormat("%dm %02ds", whole / 60, whole % 60);
  return absl::StrFormat("%dh %02dm", whole / 3600, (whole % 3600) / 60);
}

std::string Count(int64_t n) {
  std::string digits = absl::StrCat(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string Card(absl::string_view label, absl::string_view value) {
  return absl::StrCat("<div class=\"kpi\"><div class=\"label\">", label,
                      "</div><div class=\"value\">", value, "</div></div>\n");
}

// The head, the title and the state line.
std::string PageHead(const LiveStatus& s) {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n",
      s.finished ? "" : "<meta http-equiv=\"refresh\" content=\"2\">\n",
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>roastcoffea live: ",
      HtmlEscape(s.name),
      "</title>\n<style>\n"
      "body{font-family:sans-serif;margin:1.2em auto;max-width:1300px;padding:0 1em;color:#222}\n"
      "h1{font-size:1.4em;margin:.2em 0}.sub{color:#555;margin-bottom:1em}\n"
      ".kpis{display:grid;grid-template-columns:repeat(auto-fill,minmax(11em,1fr));gap:.6em}\n"
      ".kpi{border:1px solid #d6dde3;border-radius:4px;padding:.4em .7em;background:#fbfcfd}\n"
      ".label{font-size:.8em;color:#555}.value{font-size:1.2em;font-weight:bold}\n"
      ".bar{height:1.2em;background:#e6ebef;border-radius:3px;overflow:hidden;margin:1em 0}\n"
      ".fill{height:100%;background:#3b7dd8}\n"
      "table{border-collapse:collapse;margin:.6em 0;width:100%}td,th{padding:.15em .6em;"
      "text-align:right;white-space:nowrap}th{font-weight:normal;color:#444;width:9em}\n"
      ".count{width:6em}.barcell{width:100%;text-align:left}"
      ".hbar{height:.9em;background:#3b7dd8;min-width:1px}\n"
      ".finding{border-left:4px solid #c98a00;padding:.3em .7em;margin:.5em 0;background:#fffaf0}"
      "\n.critical{border-color:#c0392b;background:#fff3f2}.info{border-color:#3b7dd8;"
      "background:#f2f7ff}\n.muted{color:#666;font-size:.9em}\n"
      "</style></head><body>\n<h1>roastcoffea live: ",
      HtmlEscape(s.name), "</h1>\n<div class=\"sub\">", HtmlEscape(s.backend), " run, ",
      s.finished      ? "finished"
      : s.interrupted ? "stopping after a signal"
                      : "running",
      "; page refreshed ", absl::FormatTime("%H:%M:%S UTC", absl::Now(), absl::UTCTimeZone()),
      "</div>\n");
}

// The progress bar (when the total is known) and the key figures.
void AppendProgress(const LiveStatus& s, std::string& out) {
  const int64_t done = s.chunks_ok + s.chunks_failed;
  const double elapsed = s.elapsed_seconds;
  // Progress.
  std::string progress = absl::StrCat(Count(done), " chunks");
  if (s.chunks_total > 0) {
    const double fraction = std::min(1.0, static_cast<double>(done) / s.chunks_total);
    progress = absl::StrFormat("%s of %s chunks (%.0f%%)", Count(done), Count(s.chunks_total),
                               100 * fraction);
    absl::StrAppend(&out, "<div class=\"bar\" id=\"progress\"><div class=\"fill\" style=\"width:",
                    absl::StrFormat("%.1f", 100 * fraction), "%\"></div></div>\n");
  }
  std::string eta = "N/A";
  if (s.chunks_total > 0 && done > 0 && !s.finished) {
    eta = Seconds(elapsed * static_cast<double>(s.chunks_total - done) / done);
  } else if (s.finished) {
    eta = "done";
  }
  absl::StrAppend(
      &out, "<div class=\"kpis\">\n", Card("Progress", progress), Card("Elapsed", Seconds(elapsed)),
      Card("ETA", eta),
      Card("Events", s.chunks_from_engine_tasks ? "N/A until the end" : Count(s.events)),
      Card("Event rate", elapsed > 0 && !s.chunks_from_engine_tasks
                             ? absl::StrFormat("%.1f kHz", s.events / elapsed / 1e3)
                             : "N/A"),
      Card("Read rate", elapsed > 0 && s.compressed_bytes_read > 0
                            ? absl::StrFormat("%.1f MB/s", s.compressed_bytes_read / elapsed / 1e6)
                            : "N/A"),
      s.chunks_running.has_value() ? Card("Running chunks", Count(*s.chunks_running)) : "",
      Card("Failed chunks", Count(s.chunks_failed)),
      s.worker_threads > 0 ? Card("Worker threads", absl::StrCat(s.worker_threads)) : "",
      "</div>\n");
}

// The workers now and over time (an inline SVG: no script), when the backend knows them live.
void AppendWorkers(const LiveStatus& s, std::string& out) {
  if (!s.workers.has_value()) return;
  absl::StrAppend(
      &out, "<h2>Workers</h2>\n<div class=\"kpis\">\n", Card("Workers now", Count(*s.workers)),
      s.cores.has_value() ? Card("Cores now", absl::StrFormat("%.0f", *s.cores)) : "",
      s.worker_memory_bytes.has_value()
          ? Card("Memory now", absl::StrFormat("%.2f GB", *s.worker_memory_bytes / 1e9))
          : "",
      s.worker_memory_limit_bytes.has_value()
          ? Card("Memory limits", absl::StrFormat("%.2f GB", *s.worker_memory_limit_bytes / 1e9))
          : "",
      "</div>\n");
  const std::vector<LiveStatus::WorkerPoint>& points = s.worker_timeline;
  if (points.size() < 2) return;
  const double t0 = points.front().elapsed_seconds;
  const double span = std::max(1e-9, points.back().elapsed_seconds - t0);
  double top = 1;
  for (const LiveStatus::WorkerPoint& p : points) top = std::max({top, 1.0 * p.workers, p.cores});
  // x in [0, 1000], y in [0, 150] (150 at 0): the viewBox scales to the page's width.
  std::string workers, cores;
  for (const LiveStatus::WorkerPoint& p : points) {
    const double x = 1000 * (p.elapsed_seconds - t0) / span;
    absl::StrAppend(&workers, absl::StrFormat("%.1f,%.1f ", x, 150 - 140 * p.workers / top));
    absl::StrAppend(&cores, absl::StrFormat("%.1f,%.1f ", x, 150 - 140 * p.cores / top));
  }
  absl::StrAppend(
      &out,
      "<svg id=\"workers-over-time\" viewBox=\"0 0 1000 160\" preserveAspectRatio=\"none\" "
      "style=\"width:100%;height:10em;border:1px solid #d6dde3\" role=\"img\" "
      "aria-label=\"workers and cores over time\">\n<polyline fill=\"none\" stroke=\"#3b7dd8\" "
      "stroke-width=\"2\" points=\"",
      workers,
      "\"/>\n<polyline fill=\"none\" stroke=\"#c98a00\" stroke-width=\"2\" "
      "stroke-dasharray=\"6 4\" points=\"",
      cores,
      "\"/>\n</svg>\n<p class=\"muted\">Workers (solid) "
      "and cores (dashed) over the last ",
      Seconds(span), "; top of the scale ", absl::StrFormat("%.0f", top), ".</p>\n");
}

// One bar per duration bucket, and the CPU / run-queue shares of chunk time.
void AppendDurations(const LiveStatus& s, std::string& out) {
  const int64_t done = s.chunks_ok + s.chunks_failed;
  // Chunk durations: one bar per bucket, from the first to the last bucket that has chunks.
  absl::StrAppend(&out, "<h2>Chunk durations</h2>\n<table id=\"durations\">\n");
  size_t first = s.duration_buckets.size(), last = 0;
  int64_t most = 0;
  for (size_t i = 0; i < s.duration_buckets.size(); ++i) {
    if (s.duration_buckets[i] == 0) continue;
    first = std::min(first, i);
    last = i;
    most = std::max(most, s.duration_buckets[i]);
  }
  for (size_t i = first; i <= last && i < s.duration_buckets.size(); ++i) {
    const std::string label =
        i < kLiveDurationBuckets.size()
            ? absl::StrCat(
                  i == 0 ? "&le; " : absl::StrCat(kLiveDurationBuckets[i - 1], " &ndash; "),
                  kLiveDurationBuckets[i], " s")
            : absl::StrCat("&gt; ", kLiveDurationBuckets.back(), " s");
    absl::StrAppend(
        &out, "<tr><th>", label, "</th><td class=\"count\">", Count(s.duration_buckets[i]),
        "</td><td class=\"barcell\"><div class=\"hbar\" style=\"width:",
        absl::StrFormat("%.1f", 100.0 * s.duration_buckets[i] / most), "%\"></div></td></tr>\n");
  }
  if (first == s.duration_buckets.size()) {
    absl::StrAppend(&out, "<tr><td>no chunk has finished yet</td></tr>\n");
  }
  absl::StrAppend(&out, "</table>\n");
  if (done > 0) {
    absl::StrAppend(&out, "<p class=\"muted\">Mean chunk ", Seconds(s.chunk_seconds / done),
                    s.chunk_cpu_seconds > 0
                        ? absl::StrFormat("; on CPU %.0f%% of chunk time",
                                          100 * s.chunk_cpu_seconds / s.chunk_seconds)
                        : "",
                    s.chunk_run_queue_wait_seconds > 0
                        ? absl::StrFormat("; waiting for a CPU %.0f%%",
                                          100 * s.chunk_run_queue_wait_seconds / s.chunk_seconds)
                        : "",
                    "</p>\n");
  }
}

// The findings of the chunks so far, and the rules not evaluated yet.
void AppendFindings(const LiveStatus& s, std::string& out) {
  // Findings of the chunks so far.
  absl::StrAppend(&out, "<h2>Findings so far</h2>\n<div id=\"findings\">\n");
  if (s.so_far == nullptr) {
    absl::StrAppend(&out, "<p class=\"muted\">Not evaluated yet: no chunk has finished.</p>\n");
  } else {
    for (const v1::Finding& f : s.so_far->findings()) {
      const char* kind = f.severity() == v1::Finding::SEVERITY_CRITICAL ? " critical"
                         : f.severity() == v1::Finding::SEVERITY_INFO   ? " info"
                                                                        : "";
      absl::StrAppend(&out, "<div class=\"finding", kind, "\"><b>", HtmlEscape(f.title()),
                      "</b><br>", HtmlEscape(f.evidence()),
                      "<br><i>Try: ", HtmlEscape(f.suggestion()), "</i></div>\n");
    }
    if (s.so_far->findings().empty()) {
      absl::StrAppend(&out, "<p>None of the rules checked so far fired.</p>\n");
    }
    std::vector<std::string> pending;
    for (const v1::RuleEvaluation& rule : s.so_far->rule_evaluations()) {
      if (!rule.evaluated()) {
        pending.push_back(
            absl::StrCat(HtmlEscape(rule.code()), " (", HtmlEscape(rule.reason()), ")"));
      }
    }
    if (!pending.empty()) {
      absl::StrAppend(&out, "<p class=\"muted\">Not evaluated yet: ", absl::StrJoin(pending, ", "),
                      ".</p>\n");
    }
    absl::StrAppend(&out,
                    "<p class=\"muted\">From the chunks so far; the figures of the tracking "
                    "series (capacity, memory per worker) join at the end, in the saved "
                    "measurement.</p>\n");
  }
}

}  // namespace

std::string RenderLivePage(const LiveStatus& s) {
  std::string out = PageHead(s);
  AppendProgress(s, out);
  AppendWorkers(s, out);
  AppendDurations(s, out);
  AppendFindings(s, out);
  absl::StrAppend(&out,
                  "</div>\n<p class=\"muted\">Prometheus metrics: <a href=\"/metrics\">"
                  "/metrics</a></p>\n</body></html>\n");
  return out;
}

}  // namespace live
}  // namespace roastcoffea
