#include "store/segmented_measurement.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"

namespace roastcoffea {
namespace store_internal {
namespace {

using google::protobuf::internal::WireFormatLite;

// A part's byte count, then the part.
absl::Status WritePart(const std::string& part, AtomicFileWriter& out) {
  std::string header;
  {
    google::protobuf::io::StringOutputStream stream(&header);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.WriteVarint32(static_cast<uint32_t>(part.size()));
  }
  if (absl::Status s = out.Append(header); !s.ok()) return s;
  return out.Append(part);
}

// Records `first`..`last` of a repeated ChunkRecord field as its wire records: the bytes of a
// Measurement holding just those records in field `field_number`.
std::string RecordsPart(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& records,
                        int first, int last, int field_number) {
  std::string part;
  google::protobuf::io::StringOutputStream stream(&part);
  google::protobuf::io::CodedOutputStream coded(&stream);
  for (int i = first; i < last; ++i) {
    WireFormatLite::WriteMessage(field_number, records.Get(i), &coded);
  }
  coded.Trim();
  return part;
}

std::atomic<int64_t> g_segment_threshold_bytes{kDefaultSegmentThresholdBytes};

}  // namespace

int64_t SegmentThresholdBytes() { return g_segment_threshold_bytes.load(); }
void SetSegmentThresholdBytesForTesting(int64_t bytes) { g_segment_threshold_bytes.store(bytes); }

absl::Status WriteMeasurementParts(const v1::Measurement& measurement, AtomicFileWriter& out) {
  // Everything but the records: metadata, report, tracking, spans, metrics, profiles, warnings.
  v1::Measurement head;
  *head.mutable_metadata() = measurement.metadata();
  *head.mutable_report() = measurement.report();
  if (measurement.has_tracking()) *head.mutable_tracking() = measurement.tracking();
  *head.mutable_spans() = measurement.spans();
  *head.mutable_metrics() = measurement.metrics();
  *head.mutable_profiles() = measurement.profiles();
  *head.mutable_warnings() = measurement.warnings();
  if (head.ByteSizeLong() > static_cast<size_t>(INT_MAX)) {
    return absl::FailedPreconditionError(
        "the measurement without its chunk records is over 2 GiB: cannot be saved");
  }
  std::string part;
  if (!head.SerializeToString(&part)) {
    return absl::InternalError("cannot serialize the measurement's first part");
  }
  if (absl::Status s = WritePart(part, out); !s.ok()) return s;
  for (const auto& [records, field] :
       {std::pair<const google::protobuf::RepeatedPtrField<v1::ChunkRecord>*, int>{
            &measurement.chunks(), v1::Measurement::kChunksFieldNumber},
        {&measurement.rejected_chunks(), v1::Measurement::kRejectedChunksFieldNumber}}) {
    for (int first = 0; first < records->size(); first += kChunksPerPart) {
      const int last = std::min(records->size(), first + kChunksPerPart);
      if (absl::Status s = WritePart(RecordsPart(*records, first, last, field), out); !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

bool MergeMeasurementFrom(google::protobuf::io::CodedInputStream& coded, bool chunk_records,
                          v1::Measurement* measurement) {
  if (chunk_records) {
    return measurement->MergeFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  }
  // Every other field is copied as it is (unknown ones included) and parsed as one message.
  std::string kept;
  {
    google::protobuf::io::StringOutputStream stream(&kept);
    google::protobuf::io::CodedOutputStream out(&stream);
    for (uint32_t tag = coded.ReadTag(); tag != 0; tag = coded.ReadTag()) {
      const int field = WireFormatLite::GetTagFieldNumber(tag);
      const bool skipped = field == v1::Measurement::kChunksFieldNumber ||
                           field == v1::Measurement::kRejectedChunksFieldNumber;
      if (!(skipped ? WireFormatLite::SkipField(&coded, tag)
                    : WireFormatLite::SkipField(&coded, tag, &out))) {
        return false;
      }
    }
    if (!coded.ConsumedEntireMessage()) return false;
  }
  return measurement->MergeFromString(kept);
}

absl::Status ReadMeasurementParts(const std::string& path, v1::Measurement* measurement,
                                  bool chunk_records) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    return absl::Status(absl::ErrnoToStatus(error, "").code(),
                        absl::StrCat("cannot open '", path, "': ", std::strerror(error)));
  }
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat("'", path, "' is not a regular file"));
  }
  google::protobuf::io::FileInputStream input(fd);
  input.SetCloseOnDelete(true);
  for (int part = 0;; ++part) {
    google::protobuf::io::CodedInputStream coded(&input);
    coded.SetTotalBytesLimit(INT_MAX);
    uint32_t size = 0;
    if (!coded.ReadVarint32(&size)) {
      if (coded.CurrentPosition() == 0 && part > 0) return absl::OkStatus();  // the end
      return absl::DataLossError(
          absl::StrCat("'", path, "' is corrupt: part ", part, " has no length"));
    }
    const auto limit = coded.PushLimit(static_cast<int>(std::min<uint32_t>(size, INT_MAX)));
    if (!MergeMeasurementFrom(coded, chunk_records, measurement) || coded.BytesUntilLimit() != 0) {
      return absl::DataLossError(
          absl::StrCat("'", path, "' is corrupt: part ", part, " is cut short or does not parse"));
    }
    coded.PopLimit(limit);
  }
}

}  // namespace store_internal
}  // namespace roastcoffea
