#include "live/exposition.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "live/figure_gauges.h"

namespace roastcoffea {
namespace live {
namespace {

// A label value: backslash, double quote and newline escaped (both formats); other control
// characters become '?' so that hostile run names cannot break a line.
std::string LabelValue(absl::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += '?';
    } else {
      out += c;
    }
  }
  return out;
}

std::string Number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return absl::StrFormat("%.17g", value);
}

class Writer {
 public:
  Writer(ExpositionFormat format, std::string base_labels)
      : open_metrics_(format == ExpositionFormat::kOpenMetrics),
        base_labels_(std::move(base_labels)) {}

  // "# HELP"/"# TYPE" of a family. OpenMetrics names a counter's family without "_total".
  void Family(absl::string_view name, absl::string_view type, absl::string_view help) {
    std::string family(name);
    if (open_metrics_ && type == "counter" && absl::EndsWith(family, "_total")) {
      family.resize(family.size() - 6);
    }
    absl::StrAppend(&out_, "# HELP ", family, " ", help, "\n# TYPE ", family, " ", type, "\n");
  }
  void Sample(absl::string_view name, absl::string_view extra_labels, double value) {
    absl::StrAppend(&out_, name, "{", base_labels_, extra_labels.empty() ? "" : ",", extra_labels,
                    "} ", Number(value), "\n");
  }
  std::string Finish() {
    if (open_metrics_) out_ += "# EOF\n";
    return std::move(out_);
  }

 private:
  const bool open_metrics_;
  const std::string base_labels_;
  std::string out_;
};

// The engine's live series (kept apart from the figures' gauges above): chunks running, and
// the workers now with their cores and memory. Each only when the backend knows it live.
void AppendEngineSeries(const LiveStatus& status, Writer& w) {
  if (status.chunks_running.has_value()) {
    w.Family("roastcoffea_chunks_running", "gauge",
             "Chunks (the processor's tasks) running now, as the engine reports them.");
    w.Sample("roastcoffea_chunks_running", "", static_cast<double>(*status.chunks_running));
  }
  if (status.workers.has_value()) {
    w.Family("roastcoffea_workers", "gauge", "Workers connected now.");
    w.Sample("roastcoffea_workers", "", static_cast<double>(*status.workers));
  }
  if (status.cores.has_value()) {
    w.Family("roastcoffea_worker_cores", "gauge", "Cores (threads) of the workers now, summed.");
    w.Sample("roastcoffea_worker_cores", "", *status.cores);
  }
  if (status.worker_memory_bytes.has_value()) {
    w.Family("roastcoffea_worker_memory_bytes", "gauge",
             "Resident memory of the workers now, summed (in-process: the process's).");
    w.Sample("roastcoffea_worker_memory_bytes", "", *status.worker_memory_bytes);
  }
  if (status.worker_memory_limit_bytes.has_value()) {
    w.Family("roastcoffea_worker_memory_limit_bytes", "gauge",
             "Memory limits of the workers now, summed.");
    w.Sample("roastcoffea_worker_memory_limit_bytes", "", *status.worker_memory_limit_bytes);
  }
}

}  // namespace

ExpositionFormat NegotiateFormat(absl::string_view accept) {
  return absl::StrContains(accept, "application/openmetrics-text")
             ? ExpositionFormat::kOpenMetrics
             : ExpositionFormat::kPrometheusText;
}

const char* ContentType(ExpositionFormat format) {
  return format == ExpositionFormat::kOpenMetrics
             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
             : "text/plain; version=0.0.4; charset=utf-8";
}

namespace {

// The measurement's figures so far, from the metric catalogue.
void WriteFigureGauges(const v1::AggregatedMetrics& so_far, Writer& w) {
  for (const FigureGauge& gauge : FigureGauges(so_far)) {
    w.Family(gauge.name, "gauge", gauge.help);
    w.Sample(gauge.name, "", gauge.value);
  }
}

}  // namespace

std::string FormatExposition(const LiveStatus& status, const ExpositionExtras& extras,
                             ExpositionFormat format) {
  Writer w(format, absl::StrCat("backend=\"", LabelValue(status.backend), "\",run=\"",
                                LabelValue(status.name), "\""));
  w.Family("roastcoffea_info", "gauge", "The measured run: its backend and name, and the tool.");
  w.Sample("roastcoffea_info", absl::StrCat("version=\"", LabelValue(extras.version), "\""), 1);
  w.Family("roastcoffea_elapsed_seconds", "gauge", "Seconds since the run started (monotonic).");
  w.Sample("roastcoffea_elapsed_seconds", "", status.elapsed_seconds);
  w.Family("roastcoffea_run_finished", "gauge", "1 once the run has ended.");
  w.Sample("roastcoffea_run_finished", "", status.finished ? 1 : 0);
  w.Family("roastcoffea_run_interrupted", "gauge", "1 once a signal asked the run to stop.");
  w.Sample("roastcoffea_run_interrupted", "", status.interrupted ? 1 : 0);
  w.Family("roastcoffea_chunks_total", "counter", "Chunks finished, by status.");
  w.Sample("roastcoffea_chunks_total", "status=\"ok\"", static_cast<double>(status.chunks_ok));
  w.Sample("roastcoffea_chunks_total", "status=\"failed\"",
           static_cast<double>(status.chunks_failed));
  if (status.chunks_total > 0) {
    w.Family("roastcoffea_chunks_expected", "gauge", "Chunks the run will process in all.");
    w.Sample("roastcoffea_chunks_expected", "", static_cast<double>(status.chunks_total));
    w.Family("roastcoffea_chunks_pending", "gauge", "Chunks not finished yet: queued or running.");
    w.Sample("roastcoffea_chunks_pending", "",
             static_cast<double>(std::max<int64_t>(
                 0, status.chunks_total - status.chunks_ok - status.chunks_failed)));
  }
  w.Family("roastcoffea_events_total", "counter", "Events of the successful chunks.");
  w.Sample("roastcoffea_events_total", "", static_cast<double>(status.events));
  w.Family("roastcoffea_read_bytes_total", "counter",
           "Compressed bytes the chunks read from storage.");
  w.Sample("roastcoffea_read_bytes_total", "", static_cast<double>(status.compressed_bytes_read));
  w.Family("roastcoffea_chunk_duration_seconds", "histogram", "Wall time of each chunk.");
  int64_t cumulative = 0;
  for (size_t i = 0; i < status.duration_buckets.size(); ++i) {
    cumulative += status.duration_buckets[i];
    const std::string le =
        i < kLiveDurationBuckets.size() ? Number(kLiveDurationBuckets[i]) : "+Inf";
    w.Sample("roastcoffea_chunk_duration_seconds_bucket", absl::StrCat("le=\"", le, "\""),
             static_cast<double>(cumulative));
  }
  w.Sample("roastcoffea_chunk_duration_seconds_sum", "", status.chunk_seconds);
  w.Sample("roastcoffea_chunk_duration_seconds_count", "", static_cast<double>(cumulative));
  w.Family("roastcoffea_chunk_cpu_seconds_total", "counter",
           "CPU seconds of the chunks that measured it.");
  w.Sample("roastcoffea_chunk_cpu_seconds_total", "", status.chunk_cpu_seconds);
  w.Family("roastcoffea_chunk_run_queue_wait_seconds_total", "counter",
           "Seconds the chunks' threads waited for a CPU (run queue), where measured.");
  w.Sample("roastcoffea_chunk_run_queue_wait_seconds_total", "",
           status.chunk_run_queue_wait_seconds);
  if (status.worker_threads > 0) {
    w.Family("roastcoffea_worker_threads", "gauge", "Worker threads of an in-process run.");
    w.Sample("roastcoffea_worker_threads", "", status.worker_threads);
  }
  if (extras.resident_memory_bytes.has_value()) {
    w.Family("roastcoffea_process_resident_memory_bytes", "gauge",
             "Resident memory of the collecting process (the analysis itself when in-process).");
    w.Sample("roastcoffea_process_resident_memory_bytes", "",
             static_cast<double>(*extras.resident_memory_bytes));
  }
  AppendEngineSeries(status, w);
  if (status.so_far != nullptr) {
    w.Family("roastcoffea_finding", "gauge",
             "1 for each finding the chunks so far show (code and severity as labels).");
    for (const v1::Finding& finding : status.so_far->findings()) {
      const std::string severity = absl::AsciiStrToLower(
          v1::Finding::Severity_Name(finding.severity()).substr(sizeof("SEVERITY_") - 1));
      w.Sample(
          "roastcoffea_finding",
          absl::StrCat("code=\"", LabelValue(finding.code()), "\",severity=\"", severity, "\""), 1);
    }
    if (!status.so_far->rule_evaluations().empty()) {
      w.Family("roastcoffea_rule_evaluated", "gauge",
               "1 when a findings rule could be checked on the chunks so far, 0 when not yet.");
      for (const v1::RuleEvaluation& rule : status.so_far->rule_evaluations()) {
        w.Sample("roastcoffea_rule_evaluated",
                 absl::StrCat("code=\"", LabelValue(rule.code()), "\""), rule.evaluated() ? 1 : 0);
      }
    }
    WriteFigureGauges(*status.so_far, w);
  }
  return w.Finish();
}

}  // namespace live
}  // namespace roastcoffea
