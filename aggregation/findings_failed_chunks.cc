#include "aggregation/findings_failed_chunks.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "aggregation/findings.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {
namespace {

// A record's entry range.
struct EntryRange {
  int64_t start = 0;
  int64_t stop = 0;
};

// The failed records' entry ranges, for a first look at each successful record: a bit per
// hashed range says "maybe" (a multiplication and a shift per record), the set says surely.
class FailedRanges {
 public:
  void Add(const EntryRange& range) {
    bits_[Slot(range) / 64] |= uint64_t{1} << (Slot(range) % 64);
    ranges_.insert({range.start, range.stop});
  }
  bool Contains(const EntryRange& range) const {
    return (bits_[Slot(range) / 64] >> (Slot(range) % 64) & 1) != 0 &&
           ranges_.contains({range.start, range.stop});
  }

 private:
  static constexpr int kSlotBits = 12;
  static size_t Slot(const EntryRange& range) {
    const uint64_t mixed = (static_cast<uint64_t>(range.start) * 0x9E3779B97F4A7C15u) ^
                           (static_cast<uint64_t>(range.stop) * 0xC2B2AE3D27D4EB4Fu);
    return static_cast<size_t>((mixed * 0x165667B19E3779F9u) >> (64 - kSlotBits));
  }
  uint64_t bits_[(size_t{1} << kSlotBits) / 64] = {};
  absl::flat_hash_set<std::pair<int64_t, int64_t>> ranges_;
};

// "Failed in 2 files: a.root, b.root; first error: ...".
std::string FailedEvidence(const std::vector<const v1::ChunkRecord*>& failed) {
  std::vector<std::string> files;
  std::string error;
  bool all_have_files = true;
  for (const v1::ChunkRecord* chunk : failed) {
    all_have_files &= !chunk->file().empty();
    files.push_back(ChunkName(*chunk));
    if (error.empty()) error = chunk->error_text().substr(0, chunk->error_text().find('\n'));
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  const size_t distinct_files = files.size();
  if (files.size() > static_cast<size_t>(kNamedItems)) files.resize(kNamedItems);
  error = ElideMiddle(error, 120);
  std::string evidence = absl::StrCat(
      all_have_files
          ? absl::StrCat("Failed in ", Count(static_cast<int64_t>(distinct_files), "file", "files"))
          : std::string("Failed"),
      ": ", absl::StrJoin(files, ", "), distinct_files > files.size() ? ", ..." : "");
  if (!error.empty()) absl::StrAppend(&evidence, "; first error: ", error);
  absl::StrAppend(&evidence, ".");
  return evidence;
}

}  // namespace

bool NamesItsChunk(const v1::ChunkRecord& chunk) {
  return !chunk.file().empty() || chunk.entry_stop() > chunk.entry_start();
}

FailedChunkCounts CountFailedChunks(const ChunkColumns& c, const std::vector<uint32_t>& failed,
                                    const std::vector<uint32_t>& successful) {
  using Key = std::tuple<uint32_t, int64_t, int64_t>;  // file id, entry start, entry stop
  const auto key = [&c](uint32_t i) { return Key{c.file[i], c.entry_start[i], c.entry_stop[i]}; };
  const auto names_its_chunk = [&c](uint32_t i) {  // NamesItsChunk
    return c.file[i] != ChunkColumns::kNone || c.entry_stop[i] > c.entry_start[i];
  };
  FailedChunkCounts counts;
  absl::flat_hash_map<Key, bool> rerun;
  FailedRanges candidates;
  for (const uint32_t i : failed) {
    if (!names_its_chunk(i)) {
      ++counts.unnamed;
      continue;
    }
    rerun.try_emplace(key(i), false);
    candidates.Add({c.entry_start[i], c.entry_stop[i]});
  }
  size_t unmatched = rerun.size();
  for (size_t k = 0; k < successful.size() && unmatched > 0; ++k) {
    const uint32_t i = successful[k];
    if (!candidates.Contains({c.entry_start[i], c.entry_stop[i]}) || !names_its_chunk(i)) continue;
    const auto it = rerun.find(key(i));
    if (it == rerun.end() || it->second) continue;
    it->second = true;
    --unmatched;
  }
  for (const uint32_t i : failed) {
    if (!names_its_chunk(i)) continue;
    ++(rerun.find(key(i))->second ? counts.recovered : counts.missing);
  }
  return counts;
}

void AddFailedChunksFinding(const std::vector<const v1::ChunkRecord*>& failed_records,
                            const FailedChunkCounts& counts, int64_t num_chunks, Builder& b) {
  const int64_t failed = counts.missing + counts.recovered + counts.unnamed;
  if (failed == 0) return;
  std::string evidence = FailedEvidence(failed_records);
  if (counts.missing > 0 && counts.recovered + counts.unnamed > 0) {
    absl::StrAppend(&evidence, " Of the ", failed, " failed records, ", counts.missing,
                    counts.missing == 1 ? " names a chunk" : " name chunks",
                    " that no successful record covers");
    if (counts.recovered > 0) {
      absl::StrAppend(&evidence, "; ", counts.recovered, " ",
                      counts.recovered == 1 ? "was" : "were", " rerun successfully");
    }
    if (counts.unnamed > 0) {
      absl::StrAppend(&evidence, "; ", counts.unnamed, " ",
                      counts.unnamed == 1 ? "names no chunk" : "name no chunk",
                      " (engine tasks: a resubmission cannot be matched)");
    }
    absl::StrAppend(&evidence, ".");
  }
  v1::Finding* f = nullptr;
  if (counts.missing > 0) {
    f = &b.Add(v1::Finding::SEVERITY_CRITICAL, "failed_chunks",
               absl::StrCat(counts.missing, " of ", num_chunks,
                            " chunks failed: their events are missing from the result"),
               std::move(evidence),
               "Fix the cause (the Failed Chunks table lists each with its error) and rerun; "
               "every figure counts the successful chunks only.");
  } else if (counts.unnamed > 0) {
    absl::StrAppend(&evidence,
                    " These records are engine tasks that name no chunk: the logs do not link a "
                    "task the application resubmitted to the one that failed, so whether their "
                    "work is missing from the result is not known.");
    f = &b.Add(v1::Finding::SEVERITY_WARNING, "failed_chunks",
               absl::StrCat(counts.unnamed, " of ", num_chunks,
                            " tasks failed; whether their work was redone is not known"),
               std::move(evidence),
               "Check each failed task's error (the Failed Chunks table). If the application did "
               "not resubmit them, their work is missing: fix the cause and rerun.");
  } else {
    absl::StrAppend(&evidence,
                    " Every failed chunk has a successful record of the same file "
                    "and entry range: no events are missing.");
    f = &b.Add(v1::Finding::SEVERITY_INFO, "failed_chunks",
               absl::StrCat(Count(counts.recovered, "failed attempt was", "failed attempts were"),
                            " rerun successfully"),
               std::move(evidence),
               "Nothing is missing from the result; the retry finding says what the failures "
               "cost.");
  }
  Number(*f, "failed_chunks", static_cast<double>(failed), "chunks");
  Number(*f, "chunks", static_cast<double>(num_chunks), "chunks");
}

}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea
