#include "aggregation/chunk_validation.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

std::string DescribeChunk(const v1::ChunkRecord& chunk, size_t i) {
  return absl::StrCat("chunks[", i, "] (uuid \"", chunk.uuid(), "\", file \"", chunk.file(),
                      "\", entries ", chunk.entry_start(), "-", chunk.entry_stop(), ")");
}

}  // namespace

absl::Status ValidateChunkRecord(const v1::ChunkRecord& chunk, size_t i) {
  const double duration = chunk.duration_seconds();
  if (!std::isfinite(duration) || duration < 0) {
    return absl::InvalidArgumentError(absl::StrCat(DescribeChunk(chunk, i),
                                                   ": duration_seconds is ", duration,
                                                   "; expected a finite value >= 0"));
  }
  if (chunk.start_unix_ns() != 0 && chunk.end_unix_ns() != 0 &&
      chunk.end_unix_ns() < chunk.start_unix_ns()) {
    return absl::InvalidArgumentError(absl::StrCat(DescribeChunk(chunk, i), ": end_unix_ns ",
                                                   chunk.end_unix_ns(), " is before start_unix_ns ",
                                                   chunk.start_unix_ns()));
  }
  if (chunk.events() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(DescribeChunk(chunk, i), ": events is ", chunk.events(), "; expected >= 0"));
  }
  for (int s = 0; s < chunk.sections_size(); ++s) {
    const v1::SectionRecord& section = chunk.sections(s);
    if (!v1::SectionRecord::Kind_IsValid(section.kind())) {
      return absl::InvalidArgumentError(
          absl::StrCat(DescribeChunk(chunk, i), ": sections[", s, "] (\"", section.name(),
                       "\") has unknown kind ", static_cast<int>(section.kind()),
                       "; expected KIND_TIME, KIND_MEMORY, KIND_BYTES or KIND_UNSPECIFIED"));
    }
    if (!std::isfinite(section.duration_seconds()) || section.duration_seconds() < 0 ||
        !std::isfinite(section.cpu_seconds())) {
      return absl::InvalidArgumentError(
          absl::StrCat(DescribeChunk(chunk, i), ": sections[", s, "] (\"", section.name(),
                       "\") duration_seconds is ", section.duration_seconds(), ", cpu_seconds is ",
                       section.cpu_seconds(), "; expected finite values, duration >= 0"));
    }
  }
  return absl::OkStatus();
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
