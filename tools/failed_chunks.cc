#include "tools/failed_chunks.h"

#include <cstdint>
#include <iostream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace roastcoffea {

std::string SampleCacheHint(const v1::ChunkRecord& failed, absl::string_view cache_dir) {
  if (cache_dir.empty()) return "";
  const std::string root = absl::StrCat(absl::StripSuffix(cache_dir, "/"), "/");
  const absl::string_view file = failed.file();
  if (!absl::StartsWith(file, root)) return "";
  if (!absl::StrContains(failed.error_text(), "CRC mismatch") &&
      !absl::StrContains(failed.error_text(), "columnar file")) {
    return "";
  }
  const absl::string_view rest = file.substr(root.size());
  const std::string dataset_dir = absl::StrCat(root, rest.substr(0, rest.find('/')));
  return absl::StrCat("collect: the sample dataset in ", dataset_dir,
                      " is damaged; to regenerate it, delete it (rm -r ", dataset_dir,
                      ") and run again\n");
}

namespace {

ExitCode SayFailed(int64_t failed, int64_t chunks, const v1::ChunkRecord& first,
                   absl::string_view sample_cache_dir) {
  std::cerr << "collect: " << failed << " of " << chunks
            << " chunks failed; first failure: " << first.file() << " entries ["
            << first.entry_start() << ", " << first.entry_stop() << "): " << first.error_text()
            << "\n"
            << SampleCacheHint(first, sample_cache_dir);
  return ExitCode::kFailure;
}

}  // namespace

ExitCode ReportFailedChunks(const v1::Measurement& measurement,
                            absl::string_view sample_cache_dir) {
  int64_t failed = 0;
  const v1::ChunkRecord* first = nullptr;
  for (const v1::ChunkRecord& chunk : measurement.chunks()) {
    if (chunk.status() != v1::CHUNK_STATUS_FAILED) continue;
    if (failed++ == 0) first = &chunk;
  }
  if (first == nullptr) return ExitCode::kOk;
  return SayFailed(failed, measurement.chunks_size(), *first, sample_cache_dir);
}

ExitCode ReportFailedChunks(const ChunkTable& chunks, absl::string_view sample_cache_dir) {
  int64_t failed = 0;
  size_t first = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (chunks.status(i) != v1::CHUNK_STATUS_FAILED) continue;
    if (failed++ == 0) first = i;
  }
  if (failed == 0) return ExitCode::kOk;
  return SayFailed(failed, static_cast<int64_t>(chunks.size()), chunks.Record(first),
                   sample_cache_dir);
}

}  // namespace roastcoffea
