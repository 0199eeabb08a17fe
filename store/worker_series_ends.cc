#include "store/worker_series_ends.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "google/protobuf/repeated_field.h"
#include "schema/worker_series_columns.h"

namespace roastcoffea {
namespace {

using google::protobuf::FieldDescriptor;

// The values of `rows` (ascending) of a column, empty when it does not have `n` values; a
// column stored once for the series (schema/worker_series_columns.h) keeps its one value.
template <typename T>
std::vector<T> KeptRows(const v1::WorkerSeries& series, const FieldDescriptor* field,
                        const std::vector<int>& rows, int n) {
  const auto column = series.GetReflection()->GetRepeatedFieldRef<T>(series, field);
  std::vector<T> kept;
  if (column.size() == 1 && n > 1 && IsStoredOnceColumn(field)) return {column.Get(0)};
  if (column.size() != n) return kept;
  kept.reserve(rows.size());
  for (const int row : rows) kept.push_back(column.Get(row));
  return kept;
}

template <typename T>
void AddAll(const std::vector<T>& values, const FieldDescriptor* field, v1::WorkerSeries* to) {
  auto column = to->GetReflection()->GetMutableRepeatedFieldRef<T>(to, field);
  for (const T value : values) column.Add(value);
}

// Whole numbers whose sums over any run's workers stay exact in a double, or NaN (counted as 0):
// the capacity timeline's running sums of them then do not depend on which rows are left out.
bool ExactSummands(const google::protobuf::RepeatedField<double>& column) {
  constexpr double kMaxExact = 2147483648.0;  // 2^31
  for (const double v : column) {
    if (!std::isnan(v) && !(std::fabs(v) <= kMaxExact && v == std::floor(v))) return false;
  }
  return true;
}

// The rows to keep (see the header), unsorted; empty when the series must stay whole.
std::vector<int> RowsToKeep(const v1::WorkerSeries& s) {
  const int n = s.time_unix_ns_size();
  const auto& time = s.time_unix_ns();
  if (!std::is_sorted(time.begin(), time.end())) return {};
  const int last_seen_rows = s.last_seen_unix_seconds_size();
  if (last_seen_rows != 0 && last_seen_rows != n) return {};
  const bool usable_step = s.kind() == v1::SERIES_KIND_STEP && CoversPoints(s.cores(), n) &&
                           s.executing_tasks_size() == n;
  if (usable_step && (!ExactSummands(s.cores()) || !ExactSummands(s.executing_tasks()))) {
    return {};
  }
  // The row that holds from row i's instant on: the last of that instant.
  const auto holding = [&](int i) {
    while (i + 1 < n && time[i + 1] == time[i]) ++i;
    return i;
  };
  const int64_t end = time[n - 1];
  std::vector<int> rows = {0, holding(0), n - 1};
  int before_end = n - 2;
  while (before_end >= 0 && time[before_end] >= end) --before_end;
  if (before_end >= 0) rows.push_back(before_end);
  if (usable_step) {
    int first_slot = -1, last_busy = -1;
    for (int i = 0; i < n && time[i] < end; i = holding(i) + 1) {
      const int h = holding(i);
      if (first_slot < 0 && ValueAt(s.cores(), h) >= 1) first_slot = h;
      if (s.executing_tasks(h) > 0) last_busy = h;
    }
    if (first_slot >= 0) rows.push_back(first_slot);
    if (last_busy >= 0) rows.insert(rows.end(), {last_busy, holding(last_busy + 1)});
  }
  // As DeadWorkers folds it: the row where the running maximum (from 0) last rose.
  double latest = 0;
  int latest_row = -1;
  for (int i = 0; i < last_seen_rows; ++i) {
    const double next = std::max(latest, s.last_seen_unix_seconds(i));
    if (next != latest) latest = next, latest_row = i;
  }
  if (latest_row >= 0) rows.insert(rows.end(), {latest_row, holding(latest_row)});
  return rows;
}

// The cut of `*series` into `*cut` (overwritten), its columns cleared, their allocations kept;
// false, both untouched, when `*series` is kept whole.
bool CutInto(v1::WorkerSeries* series, v1::WorkerSeries* cut) {
  const int n = series->time_unix_ns_size();
  if (n <= 3) return false;
  std::vector<int> rows = RowsToKeep(*series);
  if (rows.empty()) return false;
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  const google::protobuf::Descriptor* descriptor = series->GetDescriptor();
  const google::protobuf::Reflection* reflection = series->GetReflection();
  std::vector<std::pair<const FieldDescriptor*, std::vector<double>>> doubles;
  std::vector<std::pair<const FieldDescriptor*, std::vector<int64_t>>> int64s;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    if (!field->is_repeated()) continue;
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
      doubles.emplace_back(field, KeptRows<double>(*series, field, rows, n));
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_INT64) {
      int64s.emplace_back(field, KeptRows<int64_t>(*series, field, rows, n));
    } else {
      continue;
    }
    reflection->ClearField(series, field);
  }
  *cut = *series;  // the scalars and any other column
  for (const auto& [field, values] : doubles) AddAll(values, field, cut);
  for (const auto& [field, values] : int64s) AddAll(values, field, cut);
  return true;
}

}  // namespace

void CutWorkerSeriesToEnds(v1::WorkerSeries* series) {
  // Kept rows go to a fresh message: a cleared repeated field keeps its allocation.
  v1::WorkerSeries cut;
  if (CutInto(series, &cut)) series->Swap(&cut);
}

void TakeWorkerSeriesEnds(v1::WorkerSeries* series, v1::WorkerSeries* ends) {
  if (!CutInto(series, ends)) *ends = *series;
}

}  // namespace roastcoffea
