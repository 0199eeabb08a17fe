#include "store/record_stream.h"

#include <algorithm>
#include <climits>
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

}  // namespace

absl::Status ForEachChunkRecordInParts(
    const std::string& path, absl::FunctionRef<absl::Status(const v1::ChunkRecord&)> visit) {
  v1::ChunkRecord record;  // reused: its fields keep their capacity from record to record
  return ForEachPart(path,
                     [&](int, google::protobuf::io::CodedInputStream& coded, absl::Status* stop) {
                       return VisitPart(coded, record, visit, stop);
                     });
}

}  // namespace store_internal
}  // namespace roastcoffea
