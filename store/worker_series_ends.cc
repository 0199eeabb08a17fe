#include "store/worker_series_ends.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"

namespace roastcoffea {
namespace {

using google::protobuf::FieldDescriptor;

// The values of `rows` (ascending) of a column, empty when it does not have `n` values.
template <typename T>
std::vector<T> KeptRows(const v1::WorkerSeries& series, const FieldDescriptor* field,
                        const std::vector<int>& rows, int n) {
  const auto column = series.GetReflection()->GetRepeatedFieldRef<T>(series, field);
  std::vector<T> kept;
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

}  // namespace

void CutWorkerSeriesToEnds(v1::WorkerSeries* series) {
  const int n = series->time_unix_ns_size();
  if (n <= 3) return;
  const int64_t end = series->time_unix_ns(n - 1);
  int before_end = -1;
  for (int i = n - 2; i >= 0 && before_end < 0; --i) {
    if (series->time_unix_ns(i) < end) before_end = i;
  }
  std::vector<int> rows = {0};
  if (before_end > 0) rows.push_back(before_end);
  rows.push_back(n - 1);
  // Kept rows go to a fresh message: a cleared repeated field keeps its allocation.
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
  v1::WorkerSeries cut = *series;  // the scalars and any other column
  for (const auto& [field, values] : doubles) AddAll(values, field, &cut);
  for (const auto& [field, values] : int64s) AddAll(values, field, &cut);
  series->Swap(&cut);
}

}  // namespace roastcoffea
