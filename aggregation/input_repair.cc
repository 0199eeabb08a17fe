// RepairForAggregation: values from peers the tool does not control (an engine, the user's
// command) that Aggregate would refuse are taken out with a warning instead of losing the run.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aggregation/aggregate.h"
#include "aggregation/chunk_validation.h"
#include "schema/chunk_table.h"
#include "schema/worker_series_columns.h"

namespace roastcoffea {
namespace {

// Above these a value is not a measurement but a wrapped counter or garbage (a machine with a
// million cores per worker or an exabyte of memory does not exist).
constexpr double kMaxCoresPerWorker = 1e6;
constexpr double kMaxBytes = 1152921504606846976.0;  // 2^60, one EiB
// Warnings name at most this many problems of one kind; the rest are counted.
constexpr int kNamedProblems = 5;

class Problems {
 public:
  Problems(std::string code, std::string what) : code(std::move(code)), what(std::move(what)) {}
  const std::string code;
  const std::string what;  // "tracking samples", "chunk records", ...
  int count = 0;
  std::vector<std::string> named;
  void Add(std::string description) {
    if (++count <= kNamedProblems) named.push_back(std::move(description));
  }
  void AppendTo(std::vector<v1::Warning>* warnings) const {
    if (count == 0) return;
    std::string message = absl::StrCat(count, " ", what, " kept out of the figures: ");
    for (size_t i = 0; i < named.size(); ++i) absl::StrAppend(&message, i ? "; " : "", named[i]);
    if (count > kNamedProblems)
      absl::StrAppend(&message, "; and ", count - kNamedProblems, " more");
    v1::Warning& warning = warnings->emplace_back();
    warning.set_code(code);
    warning.set_message(std::move(message));
  }
};

bool Plausible(double value, double max) {
  return std::isfinite(value) && value >= 0 && value <= max;
}

// Keeps the samples of `column` at the indices where keep[i].
void Compact(google::protobuf::RepeatedField<double>* column, const std::vector<bool>& keep) {
  if (column->empty()) return;
  int out = 0;
  for (int i = 0; i < column->size(); ++i) {
    if (keep[i]) column->Set(out++, column->Get(i));
  }
  column->Truncate(out);
}

// Whether every value of every column is plausible (the cores column against its own bound):
// then RepairSeries drops nothing. Column by column, without a branch per value.
template <size_t kColumns>
bool AllPlausible(google::protobuf::RepeatedField<double>* const (&all)[kColumns],
                  const google::protobuf::RepeatedField<double>* cores) {
  for (const google::protobuf::RepeatedField<double>* column : all) {
    const double max = column == cores ? kMaxCoresPerWorker : kMaxBytes;
    bool plausible = true;
    for (const double value : *column) plausible &= Plausible(value, max);
    if (!plausible) return false;
  }
  return true;
}

void RepairSeries(v1::WorkerSeries& series, int index, Problems* samples, Problems* columns) {
  const int n = series.time_unix_ns_size();
  google::protobuf::RepeatedField<double>* all[] = {series.mutable_memory_bytes(),
                                                    series.mutable_memory_limit_bytes(),
                                                    series.mutable_cores(),
                                                    series.mutable_active_tasks(),
                                                    series.mutable_executing_tasks(),
                                                    series.mutable_managed_bytes(),
                                                    series.mutable_occupancy_seconds(),
                                                    series.mutable_cpu_percent(),
                                                    series.mutable_last_seen_unix_seconds(),
                                                    series.mutable_spilled_bytes(),
                                                    series.mutable_network_read_bytes_per_second(),
                                                    series.mutable_network_write_bytes_per_second(),
                                                    series.mutable_disk_read_bytes_per_second(),
                                                    series.mutable_disk_write_bytes_per_second(),
                                                    series.mutable_disk_limit_bytes()};
  const char* names[] = {"memory_bytes",
                         "memory_limit_bytes",
                         "cores",
                         "active_tasks",
                         "executing_tasks",
                         "managed_bytes",
                         "occupancy_seconds",
                         "cpu_percent",
                         "last_seen_unix_seconds",
                         "spilled_bytes",
                         "network_read_bytes_per_second",
                         "network_write_bytes_per_second",
                         "disk_read_bytes_per_second",
                         "disk_write_bytes_per_second",
                         "disk_limit_bytes"};
  const std::string where =
      absl::StrCat("tracking.workers[", index, "] (\"", series.worker(), "\")");
  // A worker's cores and limits may be stored once for the series (worker_series_columns.h):
  // that value stands at every point.
  bool once[std::size(all)] = {};
  for (size_t c = 0; c < std::size(all); ++c) {
    const bool may_be_once = all[c] == series.mutable_cores() ||
                             all[c] == series.mutable_memory_limit_bytes() ||
                             all[c] == series.mutable_disk_limit_bytes();
    once[c] = may_be_once && StoredOnce(*all[c], n);
    if (!once[c] && !all[c]->empty() && all[c]->size() != n) {
      columns->Add(absl::StrCat(where, ".", names[c], " has ", all[c]->size(), " samples for ", n,
                                " times (column dropped)"));
      all[c]->Clear();
    }
  }
  if (AllPlausible(all, series.mutable_cores())) return;  // the common case: one tight scan
  std::vector<bool> keep(n, true);
  bool any_dropped = false;
  for (int i = 0; i < n; ++i) {
    for (size_t c = 0; c < std::size(all); ++c) {
      if (all[c]->empty()) continue;
      const double value = all[c]->Get(once[c] ? 0 : i);
      const double max = all[c] == series.mutable_cores() ? kMaxCoresPerWorker : kMaxBytes;
      if (!Plausible(value, max)) {
        samples->Add(absl::StrCat(where, ".", names[c], "[", i, "] = ", value));
        keep[i] = false;
        any_dropped = true;
        break;
      }
    }
  }
  if (!any_dropped) return;
  int out = 0;
  for (int i = 0; i < n; ++i) {
    if (keep[i]) series.set_time_unix_ns(out++, series.time_unix_ns(i));
  }
  series.mutable_time_unix_ns()->Truncate(out);
  for (size_t c = 0; c < std::size(all); ++c) {
    if (!once[c]) {
      Compact(all[c], keep);
    } else if (out == 0) {
      all[c]->Clear();  // no point left for the value to stand at
    }
  }
}

// The run's values before the chunk records: the elapsed time and the tracking samples.
void RepairRunValues(v1::Measurement* measurement, std::vector<v1::Warning>* warnings) {
  v1::MeasurementMetadata& metadata = *measurement->mutable_metadata();
  if (!std::isfinite(metadata.elapsed_seconds()) || metadata.elapsed_seconds() < 0) {
    v1::Warning& warning = warnings->emplace_back();
    warning.set_code("invalid_value");
    warning.set_message(absl::StrCat("metadata.elapsed_seconds was ", metadata.elapsed_seconds(),
                                     "; taken as unknown (0)"));
    metadata.set_elapsed_seconds(0);
  }

  Problems samples{"invalid_value", "tracking samples with an impossible value"};
  Problems columns{"invalid_value", "tracking columns of the wrong length"};
  if (measurement->has_tracking()) {
    v1::TrackingData& tracking = *measurement->mutable_tracking();
    if (tracking.worker_count_size() != tracking.worker_count_time_unix_ns_size()) {
      const int n =
          std::min(tracking.worker_count_size(), tracking.worker_count_time_unix_ns_size());
      columns.Add(absl::StrCat("tracking.worker_count has ", tracking.worker_count_size(),
                               " samples for ", tracking.worker_count_time_unix_ns_size(),
                               " times (cut to ", n, ")"));
      tracking.mutable_worker_count()->Truncate(n);
      tracking.mutable_worker_count_time_unix_ns()->Truncate(n);
    }
    for (int i = 0; i < tracking.workers_size(); ++i) {
      RepairSeries(*tracking.mutable_workers(i), i, &samples, &columns);
    }
  }
  columns.AppendTo(warnings);
  samples.AppendTo(warnings);
}

// Chunk records Aggregate would refuse (ValidateChunkRecord) go to rejected_chunks, as received.
Problems InvalidChunkRecords() {
  return Problems{"invalid_chunk_record", "chunk records with an impossible value"};
}

void RejectInvalidRecords(v1::Measurement* measurement, std::vector<v1::Warning>* warnings) {
  Problems chunks = InvalidChunkRecords();
  for (int i = 0; i < measurement->chunks_size(); ++i) {
    const absl::Status valid =
        aggregation_internal::ValidateChunkRecord(measurement->chunks(i), static_cast<size_t>(i));
    if (valid.ok()) continue;
    chunks.Add(std::string(valid.message()));
  }
  if (chunks.count > 0) {
    google::protobuf::RepeatedPtrField<v1::ChunkRecord> kept;
    google::protobuf::RepeatedPtrField<v1::ChunkRecord>* all = measurement->mutable_chunks();
    for (int i = 0; i < all->size(); ++i) {
      v1::ChunkRecord* record = all->Mutable(i);
      if (aggregation_internal::ValidateChunkRecord(*record, static_cast<size_t>(i)).ok()) {
        kept.Add(std::move(*record));
      } else {
        measurement->add_rejected_chunks()->Swap(record);
      }
    }
    all->Swap(&kept);
  }
  chunks.AppendTo(warnings);
}

// The same over a table: each record validated from the columns (ValidateTableRecord, the
// rules of ValidateChunkRecord); a rejected one materialized into rejected_chunks; the table
// rebuilt without the rejected ones only when there are some.
void RejectInvalidRecords(v1::Measurement* measurement, ChunkTable* table,
                          std::vector<v1::Warning>* warnings) {
  Problems chunks = InvalidChunkRecords();
  std::vector<size_t> rejected;
  for (size_t i = 0; i < table->size(); ++i) {
    const absl::Status valid = aggregation_internal::ValidateTableRecord(*table, i);
    if (valid.ok()) continue;
    chunks.Add(std::string(valid.message()));
    rejected.push_back(i);
    table->ReadRecord(i, measurement->add_rejected_chunks());
  }
  if (!rejected.empty()) {
    size_t next = 0;  // into `rejected`, which Filtered's ascending indices walk along
    *table = table->Filtered([&](size_t i) {
      if (next < rejected.size() && rejected[next] == i) {
        ++next;
        return false;
      }
      return true;
    });
  }
  chunks.AppendTo(warnings);
}

void RemoveNonFiniteFineMetrics(v1::Measurement* measurement, std::vector<v1::Warning>* warnings) {
  Problems metrics{"invalid_value", "fine metrics with a non-finite value"};
  for (int s = 0; s < measurement->spans_size(); ++s) {
    v1::Span& span = *measurement->mutable_spans(s);
    google::protobuf::RepeatedPtrField<v1::FineMetric>* all = span.mutable_metrics();
    int out = 0;
    for (int m = 0; m < all->size(); ++m) {
      if (!std::isfinite(all->Get(m).value())) {
        const v1::FineMetric& bad = all->Get(m);
        metrics.Add(absl::StrCat("spans[", s, "] (\"", span.name(), "\") ", bad.task_prefix(), " ",
                                 bad.activity(), " = ", bad.value()));
        continue;
      }
      if (out != m) all->SwapElements(out, m);
      ++out;
    }
    while (all->size() > out) all->RemoveLast();
  }
  metrics.AppendTo(warnings);
}

}  // namespace

std::vector<v1::Warning> RepairForAggregation(v1::Measurement* measurement) {
  std::vector<v1::Warning> warnings;
  RepairRunValues(measurement, &warnings);
  RejectInvalidRecords(measurement, &warnings);
  RemoveNonFiniteFineMetrics(measurement, &warnings);
  return warnings;
}

std::vector<v1::Warning> RepairForAggregation(v1::Measurement* measurement, ChunkTable* chunks) {
  std::vector<v1::Warning> warnings;
  RepairRunValues(measurement, &warnings);
  RejectInvalidRecords(measurement, chunks, &warnings);
  RemoveNonFiniteFineMetrics(measurement, &warnings);
  return warnings;
}

}  // namespace roastcoffea
