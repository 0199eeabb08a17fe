#include "store/record_stream.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "store/segmented_measurement.h"

namespace roastcoffea {
namespace store_internal {
namespace {

using google::protobuf::internal::WireFormatLite;

// One length-delimited message of type T at `coded` (its length next) to `visit`, parsed into
// `message`. False when the bytes do not parse; `visit`'s error in `*visit_status`.
template <typename T>
bool VisitMessage(google::protobuf::io::CodedInputStream& coded, T& message,
                  absl::FunctionRef<absl::Status(const T&)> visit, absl::Status* visit_status) {
  uint32_t size = 0;
  if (!coded.ReadVarint32(&size)) return false;
  const auto limit = coded.PushLimit(static_cast<int>(std::min<uint32_t>(size, INT_MAX)));
  message.Clear();
  const bool parsed = message.MergeFromCodedStream(&coded) && coded.ConsumedEntireMessage() &&
                      coded.BytesUntilLimit() == 0;
  coded.PopLimit(limit);
  if (parsed) *visit_status = visit(message);
  return parsed;
}

// The chunk records' fields of one part (up to `coded`'s limit), each read by `read_record`
// (which finds its length next); the other fields skipped. False when the bytes do not parse;
// stops early (true) once `read_record` left an error of its visit in `*visit_status`.
template <typename ReadRecord>
bool ForEachChunkField(google::protobuf::io::CodedInputStream& coded,
                       const absl::Status* visit_status, ReadRecord read_record) {
  constexpr uint32_t kChunkTag = WireFormatLite::MakeTag(v1::Measurement::kChunksFieldNumber,
                                                         WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  for (uint32_t tag = coded.ReadTag(); tag != 0; tag = coded.ReadTag()) {
    if (tag != kChunkTag) {
      if (!WireFormatLite::SkipField(&coded, tag)) return false;
      continue;
    }
    if (!read_record()) return false;
    if (!visit_status->ok()) return true;
  }
  return coded.ConsumedEntireMessage();
}

// Each chunk record of one part, parsed into `record`, to `visit`.
bool VisitPart(google::protobuf::io::CodedInputStream& coded, v1::ChunkRecord& record,
               absl::FunctionRef<absl::Status(const v1::ChunkRecord&)> visit,
               absl::Status* visit_status) {
  return ForEachChunkField(coded, visit_status, [&] {
    return VisitMessage<v1::ChunkRecord>(coded, record, visit, visit_status);
  });
}

// The same with each chunk record's bytes, in place when the read buffer holds them whole, else
// copied into `copy`.
bool VisitSerializedRecords(google::protobuf::io::CodedInputStream& coded, std::string& copy,
                            absl::FunctionRef<absl::Status(absl::string_view)> visit,
                            absl::Status* visit_status) {
  return ForEachChunkField(coded, visit_status, [&] {
    uint32_t size = 0;
    if (!coded.ReadVarint32(&size) || size > static_cast<uint32_t>(coded.BytesUntilLimit())) {
      return false;
    }
    const void* data = nullptr;
    int buffered = 0;
    if (coded.GetDirectBufferPointer(&data, &buffered) && buffered >= static_cast<int>(size)) {
      *visit_status = visit(absl::string_view(static_cast<const char*>(data), size));
      return coded.Skip(static_cast<int>(size));
    }
    if (!coded.ReadString(&copy, static_cast<int>(size))) return false;
    *visit_status = visit(copy);
    return true;
  });
}

// The repeated double column numbered `number` of `series`, or nullptr.
google::protobuf::RepeatedField<double>* DoubleColumn(v1::WorkerSeries& series, int number) {
  switch (number) {
    case v1::WorkerSeries::kMemoryBytesFieldNumber:
      return series.mutable_memory_bytes();
    case v1::WorkerSeries::kMemoryLimitBytesFieldNumber:
      return series.mutable_memory_limit_bytes();
    case v1::WorkerSeries::kCoresFieldNumber:
      return series.mutable_cores();
    case v1::WorkerSeries::kActiveTasksFieldNumber:
      return series.mutable_active_tasks();
    case v1::WorkerSeries::kExecutingTasksFieldNumber:
      return series.mutable_executing_tasks();
    case v1::WorkerSeries::kManagedBytesFieldNumber:
      return series.mutable_managed_bytes();
    case v1::WorkerSeries::kOccupancySecondsFieldNumber:
      return series.mutable_occupancy_seconds();
    case v1::WorkerSeries::kCpuPercentFieldNumber:
      return series.mutable_cpu_percent();
    case v1::WorkerSeries::kLastSeenUnixSecondsFieldNumber:
      return series.mutable_last_seen_unix_seconds();
    case v1::WorkerSeries::kSpilledBytesFieldNumber:
      return series.mutable_spilled_bytes();
    case v1::WorkerSeries::kNetworkReadBytesPerSecondFieldNumber:
      return series.mutable_network_read_bytes_per_second();
    case v1::WorkerSeries::kNetworkWriteBytesPerSecondFieldNumber:
      return series.mutable_network_write_bytes_per_second();
    case v1::WorkerSeries::kDiskReadBytesPerSecondFieldNumber:
      return series.mutable_disk_read_bytes_per_second();
    case v1::WorkerSeries::kDiskWriteBytesPerSecondFieldNumber:
      return series.mutable_disk_write_bytes_per_second();
    case v1::WorkerSeries::kDiskLimitBytesFieldNumber:
      return series.mutable_disk_limit_bytes();
    default:
      return nullptr;
  }
}

// One worker series (its length next in `coded`) parsed into `series` with only its instants,
// its kind and the double columns whose bit is set in `double_columns` (bit n: field n), each
// read as protobuf reads it (packed or not; another wire type: skipped, as unknown).
bool ParseSeriesColumns(google::protobuf::io::CodedInputStream& coded, uint64_t double_columns,
                        v1::WorkerSeries& series) {
  using google::protobuf::RepeatedField;
  uint32_t size = 0;
  if (!coded.ReadVarint32(&size)) return false;
  const auto limit = coded.PushLimit(static_cast<int>(std::min<uint32_t>(size, INT_MAX)));
  series.Clear();
  bool ok = true;
  for (uint32_t tag = coded.ReadTag(); tag != 0 && ok; tag = coded.ReadTag()) {
    const int number = WireFormatLite::GetTagFieldNumber(tag);
    const WireFormatLite::WireType type = WireFormatLite::GetTagWireType(tag);
    if (number == v1::WorkerSeries::kTimeUnixNsFieldNumber) {
      RepeatedField<int64_t>* time = series.mutable_time_unix_ns();
      uint64_t value = 0;
      if (type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        ok = WireFormatLite::ReadPackedPrimitive<int64_t, WireFormatLite::TYPE_INT64>(&coded, time);
      } else if (type == WireFormatLite::WIRETYPE_VARINT) {
        ok = coded.ReadVarint64(&value);
        time->Add(static_cast<int64_t>(value));
      } else {
        ok = WireFormatLite::SkipField(&coded, tag);
      }
    } else if (number == v1::WorkerSeries::kKindFieldNumber &&
               type == WireFormatLite::WIRETYPE_VARINT) {
      uint64_t value = 0;
      ok = coded.ReadVarint64(&value);
      series.set_kind(static_cast<v1::SeriesKind>(static_cast<int32_t>(value)));
    } else if (number < 64 && (double_columns >> number & 1) != 0 &&
               DoubleColumn(series, number) != nullptr) {
      RepeatedField<double>* column = DoubleColumn(series, number);
      uint64_t bits = 0;
      if (type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        ok = WireFormatLite::ReadPackedPrimitive<double, WireFormatLite::TYPE_DOUBLE>(&coded,
                                                                                      column);
      } else if (type == WireFormatLite::WIRETYPE_FIXED64) {
        ok = coded.ReadLittleEndian64(&bits);
        column->Add(WireFormatLite::DecodeDouble(bits));
      } else {
        ok = WireFormatLite::SkipField(&coded, tag);
      }
    } else {
      ok = WireFormatLite::SkipField(&coded, tag);
    }
  }
  ok = ok && coded.ConsumedEntireMessage() && coded.BytesUntilLimit() == 0;
  coded.PopLimit(limit);
  return ok;
}

// The worker series of the tracking (its length next in `coded`) to `visit`; with
// `double_columns` (not null), each with only those columns (ParseSeriesColumns).
bool VisitTracking(google::protobuf::io::CodedInputStream& coded, v1::WorkerSeries& series,
                   absl::FunctionRef<absl::Status(const v1::WorkerSeries&)> visit,
                   absl::Status* visit_status, const uint64_t* double_columns = nullptr) {
  constexpr uint32_t kWorkersTag = WireFormatLite::MakeTag(
      v1::TrackingData::kWorkersFieldNumber, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  uint32_t size = 0;
  if (!coded.ReadVarint32(&size)) return false;
  const auto limit = coded.PushLimit(static_cast<int>(std::min<uint32_t>(size, INT_MAX)));
  bool ok = true;
  for (uint32_t tag = coded.ReadTag(); tag != 0 && ok; tag = coded.ReadTag()) {
    if (tag == kWorkersTag && double_columns != nullptr) {
      ok = ParseSeriesColumns(coded, *double_columns, series);
      if (ok) *visit_status = visit(series);
    } else {
      ok = tag == kWorkersTag ? VisitMessage(coded, series, visit, visit_status)
                              : WireFormatLite::SkipField(&coded, tag);
    }
    if (!visit_status->ok()) break;  // the reading stops: the rest is not read
  }
  if (visit_status->ok()) {
    ok = ok && coded.ConsumedEntireMessage() && coded.BytesUntilLimit() == 0;
  }
  coded.PopLimit(limit);
  return ok;
}

}  // namespace

namespace {

// ForEachWorkerSeriesInParts, with only `double_columns` (a bit per field) when not null.
absl::Status VisitWorkerSeriesInParts(
    const std::string& path, const uint64_t* double_columns,
    absl::FunctionRef<absl::Status(const v1::WorkerSeries&)> visit) {
  constexpr uint32_t kTrackingTag = WireFormatLite::MakeTag(
      v1::Measurement::kTrackingFieldNumber, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  v1::WorkerSeries series;  // reused: its columns keep their capacity from series to series
  return ForEachPart(
      path, [&](int part, google::protobuf::io::CodedInputStream& coded, absl::Status* stop) {
        // A part of records (every part after the first) is passed over whole, with a seek.
        for (const int number :
             {v1::Measurement::kChunksFieldNumber, v1::Measurement::kRejectedChunksFieldNumber}) {
          if (part > 0 && coded.ExpectTag(WireFormatLite::MakeTag(
                              number, WireFormatLite::WIRETYPE_LENGTH_DELIMITED))) {
            return coded.Skip(coded.BytesUntilLimit());
          }
        }
        for (uint32_t tag = coded.ReadTag(); tag != 0; tag = coded.ReadTag()) {
          const bool ok = tag == kTrackingTag
                              ? VisitTracking(coded, series, visit, stop, double_columns)
                              : WireFormatLite::SkipField(&coded, tag);
          if (!ok) return false;
          if (!stop->ok()) return true;
        }
        return coded.ConsumedEntireMessage();
      });
}

}  // namespace

absl::Status ForEachWorkerSeriesInParts(
    const std::string& path, absl::FunctionRef<absl::Status(const v1::WorkerSeries&)> visit) {
  return VisitWorkerSeriesInParts(path, nullptr, visit);
}

absl::Status ForEachWorkerSeriesColumnsInParts(
    const std::string& path, const std::vector<int>& double_columns,
    absl::FunctionRef<absl::Status(const v1::WorkerSeries&)> visit) {
  uint64_t bits = 0;
  for (const int number : double_columns) {
    if (number > 0 && number < 64) bits |= uint64_t{1} << number;  // a double column or ignored
  }
  return VisitWorkerSeriesInParts(path, &bits, visit);
}

absl::Status ForEachChunkRecordInParts(
    const std::string& path, absl::FunctionRef<absl::Status(const v1::ChunkRecord&)> visit) {
  v1::ChunkRecord record;  // reused: its fields keep their capacity from record to record
  return ForEachPart(path,
                     [&](int, google::protobuf::io::CodedInputStream& coded, absl::Status* stop) {
                       return VisitPart(coded, record, visit, stop);
                     });
}

absl::Status ForEachSerializedChunkRecordInParts(
    const std::string& path, absl::FunctionRef<absl::Status(absl::string_view)> visit) {
  std::string copy;  // reused for records that straddle the read buffer's end
  return ForEachPart(path,
                     [&](int, google::protobuf::io::CodedInputStream& coded, absl::Status* stop) {
                       return VisitSerializedRecords(coded, copy, visit, stop);
                     });
}

}  // namespace store_internal
}  // namespace roastcoffea
