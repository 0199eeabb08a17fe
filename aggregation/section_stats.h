// Per-section summaries (the original's "sections") and statistics across chunks (new)
// (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_SECTION_STATS_H_
#define ROASTCOFFEA_AGGREGATION_SECTION_STATS_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "aggregation/distribution_stats.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// Collects the sections of successful chunk records, one chunk at a time. A section is keyed by
// (name, kind); names are interned once, and a chunk whose sections come in the same order as
// the previous chunk's needs no hashing. A section entered several times in one chunk arrives
// summed in one SectionRecord (entries > 1; entries 0 counts as 1).
//
// Finish writes, sorted by (name, kind):
//   sections (the original's, docs/reference.md §2.5): type "time"/"memory"/"bytes" ("section" for
//     KIND_UNSPECIFIED), count = sum of entries, total_duration_seconds, mean_duration_seconds =
//     total / count; for memory sections mean_memory_delta_bytes = sum / count and min/max over
//     the records;
//   section_stats (new): one value per chunk in the kind's unit (TIME duration_seconds, MEMORY
//     memory_delta_bytes, BYTES bytes_read; UNSPECIFIED duration_seconds), its total and
//     DistributionStats with percentiles; total duration and CPU seconds; share of chunk time =
//     total duration / `total_chunk_seconds` (0 when that is 0).
// Durations must already be validated. Cost: O(1) per section record, O(n) at Finish.
// A section record's value in its kind's unit: seconds (TIME, UNSPECIFIED), bytes of memory
// delta (MEMORY) or bytes read (BYTES). The one definition of "a section's value".
double SectionValue(const v1::SectionRecord& record);
double SectionValue(const SectionRow& row);

class SectionAccumulator {
 public:
  // `expected_chunks`: capacity reserved per section for its per-chunk values.
  explicit SectionAccumulator(size_t expected_chunks = 0) : expected_chunks_(expected_chunks) {}
  void AddChunk(const google::protobuf::RepeatedPtrField<v1::SectionRecord>& sections);
  // The sections [begin, end) of a ChunkTable's section columns, the same way.
  void AddChunk(const ChunkTable& table, size_t begin, size_t end);
  // Optional: one job per section computing its value distribution (percentile selection) into
  // (*distributions)[section], to run on any thread before Finish; each job writes only its
  // own entry and reads the accumulator, which stays unchanged (one accumulator may serve
  // several aggregations at once).
  struct Distribution {
    v1::DistributionStats stats;
    double total = 0;  // CompensatedSum of the section's values
  };
  void AddJobs(std::vector<std::optional<Distribution>>* distributions,
               std::vector<std::function<void()>>* jobs) const;
  // `distributions`: what AddJobs' jobs computed; a section without one is computed here.
  void Finish(double total_chunk_seconds,
              const std::vector<std::optional<Distribution>>& distributions,
              v1::ChunkMetrics* metrics) const;
  void Finish(double total_chunk_seconds, v1::ChunkMetrics* metrics) const {
    Finish(total_chunk_seconds, {}, metrics);
  }

 private:
  struct Section {
    std::string name;
    v1::SectionRecord::Kind kind = v1::SectionRecord::KIND_UNSPECIFIED;
    int64_t entries = 0;
    std::vector<double> values;  // one per chunk, in the kind's unit
    CompensatedAccumulator duration_seconds;
    CompensatedAccumulator cpu_seconds;
    CompensatedAccumulator memory_delta_bytes;
    double min_memory_delta_bytes = 0;
    double max_memory_delta_bytes = 0;
  };
  int Intern(const SectionRow& record, size_t position);
  void AddSection(const SectionRow& record, size_t position);

  absl::flat_hash_map<std::pair<std::string, int>, int> index_;
  std::vector<Section> sections_;
  std::vector<int> previous_ids_;  // section ids by position in the previous chunk
  size_t expected_chunks_;
};

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_SECTION_STATS_H_
