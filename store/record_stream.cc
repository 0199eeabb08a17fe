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

// The fields of one part (up to `coded`'s limit): each chunk record to `visit`, the rest
// skipped. False when the bytes do not parse; `visit`'s error in `*visit_status`.
bool VisitPart(google::protobuf::io::CodedInputStream& coded, v1::ChunkRecord& record,
               absl::FunctionRef<absl::Status(const v1::ChunkRecord&)> visit,
               absl::Status* visit_status) {
  constexpr uint32_t kChunkTag = WireFormatLite::MakeTag(v1::Measurement::kChunksFieldNumber,
                                                         WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  for (uint32_t tag = coded.ReadTag(); tag != 0; tag = coded.ReadTag()) {
    if (tag != kChunkTag) {
      if (!WireFormatLite::SkipField(&coded, tag)) return false;
      continue;
    }
    uint32_t size = 0;
    if (!coded.ReadVarint32(&size)) return false;
    const auto limit = coded.PushLimit(static_cast<int>(std::min<uint32_t>(size, INT_MAX)));
    record.Clear();
    const bool parsed = record.MergeFromCodedStream(&coded) && coded.ConsumedEntireMessage() &&
                        coded.BytesUntilLimit() == 0;
    coded.PopLimit(limit);
    if (!parsed) return false;
    *visit_status = visit(record);
    if (!visit_status->ok()) return true;
  }
  return coded.ConsumedEntireMessage();
}

// The same with each chunk record's bytes, in place when the read buffer holds them whole, else
// copied into `copy`.
bool VisitSerializedRecords(google::protobuf::io::CodedInputStream& coded, std::string& copy,
                            absl::FunctionRef<absl::Status(absl::string_view)> visit,
                            absl::Status* visit_status) {
  constexpr uint32_t kChunkTag = WireFormatLite::MakeTag(v1::Measurement::kChunksFieldNumber,
                                                         WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  for (uint32_t tag = coded.ReadTag(); tag != 0; tag = coded.ReadTag()) {
    if (tag != kChunkTag) {
      if (!WireFormatLite::SkipField(&coded, tag)) return false;
      continue;
    }
    uint32_t size = 0;
    if (!coded.ReadVarint32(&size) || size > static_cast<uint32_t>(coded.BytesUntilLimit())) {
      return false;
    }
    const void* data = nullptr;
    int buffered = 0;
    absl::string_view bytes;
    if (coded.GetDirectBufferPointer(&data, &buffered) && buffered >= static_cast<int>(size)) {
      bytes = absl::string_view(static_cast<const char*>(data), size);
      *visit_status = visit(bytes);
      if (!coded.Skip(static_cast<int>(size))) return false;
    } else {
      if (!coded.ReadString(&copy, static_cast<int>(size))) return false;
      *visit_status = visit(copy);
    }
    if (!visit_status->ok()) return true;
  }
  return coded.ConsumedEntireMessage();
}

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

// The worker series of the tracking (its length next in `coded`) to `visit`.
bool VisitTracking(google::protobuf::io::CodedInputStream& coded, v1::WorkerSeries& series,
                   absl::FunctionRef<absl::Status(const v1::WorkerSeries&)> visit,
                   absl::Status* visit_status) {
  constexpr uint32_t kWorkersTag = WireFormatLite::MakeTag(
      v1::TrackingData::kWorkersFieldNumber, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  uint32_t size = 0;
  if (!coded.ReadVarint32(&size)) return false;
  const auto limit = coded.PushLimit(static_cast<int>(std::min<uint32_t>(size, INT_MAX)));
  bool ok = true;
  for (uint32_t tag = coded.ReadTag(); tag != 0 && ok; tag = coded.ReadTag()) {
    ok = tag == kWorkersTag ? VisitMessage(coded, series, visit, visit_status)
                            : WireFormatLite::SkipField(&coded, tag);
    if (!visit_status->ok()) break;  // the reading stops: the rest is not read
  }
  if (visit_status->ok()) {
    ok = ok && coded.ConsumedEntireMessage() && coded.BytesUntilLimit() == 0;
  }
  coded.PopLimit(limit);
  return ok;
}

}  // namespace

absl::Status ForEachWorkerSeriesInParts(
    const std::string& path, absl::FunctionRef<absl::Status(const v1::WorkerSeries&)> visit) {
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
          const bool ok = tag == kTrackingTag ? VisitTracking(coded, series, visit, stop)
                                              : WireFormatLite::SkipField(&coded, tag);
          if (!ok) return false;
          if (!stop->ok()) return true;
        }
        return coded.ConsumedEntireMessage();
      });
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
