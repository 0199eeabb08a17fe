#include "export/worker_tables.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

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

std::string Into(int64_t ns, int64_t start_ns) {
  return FormatDuration(1e-9 * static_cast<double>(ns - start_ns));
}

}  // namespace

std::vector<SummaryTable> BuildWorkerTables(const v1::Measurement& measurement) {
  if (!measurement.has_tracking()) return {};
  const std::vector<DeadWorker> dead = aggregation_internal::DeadWorkers(measurement.tracking());
  if (dead.empty()) return {};
  const int64_t start = TimelineStart(measurement.tracking());
  absl::flat_hash_map<std::string, double> lost;
  for (const v1::ActivityTotal& t : measurement.metrics().fine().by_worker()) {
    if (t.activity() == "lost-task-seconds" && !t.worker().empty()) lost[t.worker()] += t.value();
  }
  SummaryTable table;
  table.title = "Workers That Left";
  table.header = {"Worker", "Host", "Left", "Running", "Silent since", "Lost work"};
  table.right_aligned = {false, false, true, true, true, true};
  for (const DeadWorker& w : dead) {
    if (table.rows.size() == kMaxWorkerRows) {
      table.rows.push_back({absl::StrCat("(", dead.size() - kMaxWorkerRows, " more)")});
      break;
    }
    std::string silent = "N/A (no last-message times)";
    if (DiedSilently(measurement, w.worker)) {
      silent = absl::StrCat(Into(w.end_ns, start), " (never declared lost)");
    } else if (w.last_seen_unix_seconds > 0) {
      silent = w.QuietSeconds() >= aggregation_internal::kSilentMinSeconds
                   ? Into(static_cast<int64_t>(w.last_seen_unix_seconds * 1e9), start)
                   : "no";
    }
    const auto found = lost.find(w.worker);
    table.rows.push_back({w.worker, w.host.empty() ? "N/A" : w.host, Into(w.end_ns, start),
                          absl::StrCat(static_cast<int64_t>(w.executing_at_end)), silent,
                          found == lost.end() ? "N/A" : FormatDuration(found->second)});
  }
  return {table};
}

}  // namespace roastcoffea
