#include "store/record_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/wire_format_lite.h"

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
  v1::ChunkRecord record;  // reused: its fields keep their capacity from record to record
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
    absl::Status visited;
    if (!VisitPart(coded, record, visit, &visited) ||
        (visited.ok() && coded.BytesUntilLimit() != 0)) {
      return absl::DataLossError(
          absl::StrCat("'", path, "' is corrupt: part ", part, " is cut short or does not parse"));
    }
    if (!visited.ok()) return visited;
    coded.PopLimit(limit);
  }
}

}  // namespace store_internal
}  // namespace roastcoffea
