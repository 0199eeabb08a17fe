#include "export/worker_tables.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "aggregation/capacity.h"
#include "aggregation/findings_capacity.h"

namespace roastcoffea {
namespace {

using aggregation_internal::DeadWorker;

// The instant "seconds into the run" counts from: the capacity timeline's start (the first
// instant a slot existed), as the findings count; else the first tracking instant.
int64_t TimelineStart(const v1::TrackingData& tracking) {
  const std::optional<aggregation_internal::CapacityTimeline> t =
      aggregation_internal::AnalyseCapacity(tracking);
  if (t.has_value()) return t->start_ns;
  int64_t first = INT64_MAX;
  for (const v1::WorkerSeries& w : tracking.workers()) {
    if (w.time_unix_ns_size() > 0) first = std::min(first, w.time_unix_ns(0));
  }
  return first == INT64_MAX ? 0 : first;
}

// Whether the backend found `worker` dead without the engine noticing (no DISCONNECTION: its
// series ends at its last record, which is then when it went silent).
bool DiedSilently(const v1::Measurement& m, const std::string& worker) {
  for (const v1::Warning& w : m.warnings()) {
    if (w.code() == "taskvine_worker_silent_death" &&
        absl::StrContains(w.message(), absl::StrCat("worker ", worker, " "))) {
      return true;
    }
  }
  return false;
}

// One worker that left with tasks on it, as the table and the flat rows show it.
struct LeftWorker {
  const DeadWorker* worker = nullptr;
  double left_seconds = 0;  // into the task timeline
  enum class Silent { kUnknown, kNo, kSince, kNeverDeclared } silent = Silent::kUnknown;
  double silent_since_seconds = 0;  // for kSince and kNeverDeclared
  std::optional<double> lost_seconds;
};

std::vector<LeftWorker> WorkersThatLeft(const v1::Measurement& measurement,
                                        const std::vector<DeadWorker>& dead) {
  const int64_t start = TimelineStart(measurement.tracking());
  const auto into = [start](int64_t ns) { return 1e-9 * static_cast<double>(ns - start); };
  absl::flat_hash_map<std::string, double> lost;
  for (const v1::ActivityTotal& t : measurement.metrics().fine().by_worker()) {
    if (t.activity() == "lost-task-seconds" && !t.worker().empty()) lost[t.worker()] += t.value();
  }
  std::vector<LeftWorker> out;
  for (const DeadWorker& w : dead) {
    LeftWorker row;
    row.worker = &w;
    row.left_seconds = into(w.end_ns);
    if (DiedSilently(measurement, w.worker)) {
      row.silent = LeftWorker::Silent::kNeverDeclared;
      row.silent_since_seconds = row.left_seconds;
    } else if (w.last_seen_unix_seconds > 0) {
      const bool silent = w.QuietSeconds() >= aggregation_internal::kSilentMinSeconds;
      row.silent = silent ? LeftWorker::Silent::kSince : LeftWorker::Silent::kNo;
      row.silent_since_seconds = into(static_cast<int64_t>(w.last_seen_unix_seconds * 1e9));
    }
    if (const auto found = lost.find(w.worker); found != lost.end()) {
      row.lost_seconds = found->second;
    }
    out.push_back(row);
  }
  return out;
}

std::string SilentText(const LeftWorker& row) {
  switch (row.silent) {
    case LeftWorker::Silent::kNeverDeclared:
      return absl::StrCat(FormatDuration(row.silent_since_seconds), " (never declared lost)");
    case LeftWorker::Silent::kSince:
      return FormatDuration(row.silent_since_seconds);
    case LeftWorker::Silent::kNo:
      return "no";
    case LeftWorker::Silent::kUnknown:
      break;
  }
  return "N/A (no last-message times)";
}

}  // namespace

std::vector<SummaryTable> BuildWorkerTables(const v1::Measurement& measurement) {
  if (!measurement.has_tracking()) return {};
  const std::vector<DeadWorker> dead = aggregation_internal::DeadWorkers(measurement.tracking());
  if (dead.empty()) return {};
  SummaryTable table;
  table.title = "Workers That Left";
  table.header = {"Worker", "Host", "Left", "Running", "Silent since", "Lost work"};
  table.right_aligned = {false, false, true, true, true, true};
  for (const LeftWorker& row : WorkersThatLeft(measurement, dead)) {
    if (table.rows.size() == kMaxWorkerRows) {
      table.rows.push_back({absl::StrCat("(", dead.size() - kMaxWorkerRows, " more)")});
      break;
    }
    const DeadWorker& w = *row.worker;
    table.rows.push_back(
        {w.worker, w.host.empty() ? "N/A" : w.host, FormatDuration(row.left_seconds),
         absl::StrCat(static_cast<int64_t>(w.executing_at_end)), SilentText(row),
         row.lost_seconds.has_value() ? FormatDuration(*row.lost_seconds) : "N/A"});
  }
  return {table};
}

std::vector<FlatMetric> WorkerFlatMetrics(const v1::Measurement& measurement) {
  if (!measurement.has_tracking()) return {};
  const std::vector<DeadWorker> dead = aggregation_internal::DeadWorkers(measurement.tracking());
  if (dead.empty()) return {};
  std::vector<FlatMetric> out;
  out.push_back({"workers_left", static_cast<double>(dead.size()), "workers"});
  size_t listed = 0;
  for (const LeftWorker& row : WorkersThatLeft(measurement, dead)) {
    if (listed++ == kMaxWorkerRows) break;
    const std::string key = absl::StrCat("worker_left.", row.worker->worker, ".");
    out.push_back({key + "left_seconds", row.left_seconds, "s"});
    out.push_back({key + "running_tasks", row.worker->executing_at_end, "tasks"});
    if (row.silent != LeftWorker::Silent::kNo) {
      out.push_back({key + "silent_since_seconds",
                     row.silent == LeftWorker::Silent::kUnknown
                         ? std::nullopt
                         : std::optional<double>(row.silent_since_seconds),
                     "s"});
    }
    out.push_back({key + "lost_work_seconds", row.lost_seconds, "s"});
  }
  if (dead.size() > kMaxWorkerRows) {
    out.push_back(
        {"workers_left_not_listed", static_cast<double>(dead.size() - kMaxWorkerRows), "workers"});
  }
  return out;
}

}  // namespace roastcoffea
