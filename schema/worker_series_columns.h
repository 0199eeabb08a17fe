// The one way to read a WorkerSeries column that may be stored once for the whole series
// (measurement.proto, WorkerSeries: cores, memory_limit_bytes and disk_limit_bytes): a column
// of one value in a series of several points holds that value at every point. Files written
// before #25 (a value per point) read the same.
#ifndef ROASTCOFFEA_SCHEMA_WORKER_SERIES_COLUMNS_H_
#define ROASTCOFFEA_SCHEMA_WORKER_SERIES_COLUMNS_H_

#include <vector>

#include "absl/types/span.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/repeated_field.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// Whether `column` gives a value at each of `points` points: one per point, or one for all.
inline bool CoversPoints(const google::protobuf::RepeatedField<double>& column, int points) {
  return points > 0 && (column.size() == points || column.size() == 1);
}

// Its value at point `i` (< the series' points); `column` must cover them (CoversPoints).
inline double ValueAt(const google::protobuf::RepeatedField<double>& column, int i) {
  return column.size() == 1 ? column.Get(0) : column.Get(i);
}

// Its value at each of `points` points (a column stored once repeated), for readers that need
// the values as one array; empty when it does not cover them.
inline std::vector<double> ValuesAtPoints(const google::protobuf::RepeatedField<double>& column,
                                          int points) {
  if (!CoversPoints(column, points)) return {};
  if (column.size() == 1) return std::vector<double>(static_cast<size_t>(points), column.Get(0));
  return std::vector<double>(column.begin(), column.end());
}

// Whether `field` (of v1::WorkerSeries) is one of the columns that may be stored once: cores,
// memory_limit_bytes, disk_limit_bytes.
inline bool IsStoredOnceColumn(const google::protobuf::FieldDescriptor* field) {
  return field->containing_type() == v1::WorkerSeries::descriptor() &&
         (field->number() == v1::WorkerSeries::kCoresFieldNumber ||
          field->number() == v1::WorkerSeries::kMemoryLimitBytesFieldNumber ||
          field->number() == v1::WorkerSeries::kDiskLimitBytesFieldNumber);
}

// Its values at `points` points as one array: the column's own, or (stored once) `storage`
// filled with its value; cheap when not stored once.
inline absl::Span<const double> PerPointValues(
    const google::protobuf::RepeatedField<double>& column, int points,
    std::vector<double>* storage) {
  if (!(points > 1 && column.size() == 1)) return absl::MakeConstSpan(column.data(), column.size());
  storage->assign(static_cast<size_t>(points), column.Get(0));
  return *storage;
}

// Whether `column` is stored once for a series of more than one point.
inline bool StoredOnce(const google::protobuf::RepeatedField<double>& column, int points) {
  return points > 1 && column.size() == 1;
}

// Rewrites every column stored once as one value per point (for writers that append or cut
// rows: store/tracking_segments.h, aggregation/series_reduction.h).
inline void ExpandColumnsStoredOnce(v1::WorkerSeries* series) {
  const int points = series->time_unix_ns_size();
  for (google::protobuf::RepeatedField<double>* column :
       {series->mutable_cores(), series->mutable_memory_limit_bytes(),
        series->mutable_disk_limit_bytes()}) {
    if (!StoredOnce(*column, points)) continue;
    const double value = column->Get(0);
    column->Reserve(points);
    for (int i = 1; i < points; ++i) column->AddAlreadyReserved(value);
  }
}

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_SCHEMA_WORKER_SERIES_COLUMNS_H_
