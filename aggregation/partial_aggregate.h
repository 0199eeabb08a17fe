// A mergeable partial aggregate of chunk records: for streaming, or for reducing per-worker or
// per-shard summaries in a tree, where the records themselves are not kept.
//
// Only the metrics that merge exactly are kept: counts (records, successful, failed, retried),
// sums, min/max, section totals, per-dataset counts and totals, plus one LogHistogram per
// distribution (duration, memory delta, events, time per event, and per section value) whose
// percentiles are approximate (relative error <= 1 %, see stats/log_histogram.h). The exact
// percentiles and standard deviations of Aggregate need every value and are not mergeable.
//
// Merge is associative and commutative: aggregating two halves and merging gives the same
// ToChunkMetrics as aggregating the whole (sums are compensated; bit-identical whenever the
// sums are exact, e.g. for values on a binary grid).
//
// Thread-safety: not synchronised; one instance per thread, then Merge.
#ifndef ROASTCOFFEA_AGGREGATION_PARTIAL_AGGREGATE_H_
#define ROASTCOFFEA_AGGREGATION_PARTIAL_AGGREGATE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "aggregation/distribution_stats.h"
#include "schema/measurement.pb.h"
#include "stats/log_histogram.h"

namespace roastcoffea {

class ChunkPartialAggregate {
 public:
  // Adds one record with the same rules as Aggregate (failed records only counted; memory
  // delta only when measured; time per event only when events > 0). InvalidArgument (naming
  // the record's uuid) for a NaN, infinite or negative duration or negative events; the
  // aggregate is then unchanged. Cost: O(sections) plus one std::log per value.
  absl::Status Add(const v1::ChunkRecord& record);
  // Adds everything `other` holds. Cost: O(datasets + sections + histogram buckets).
  void Merge(const ChunkPartialAggregate& other);

  // The mergeable subset of v1::ChunkMetrics: the counts; duration_seconds, memory_delta_bytes,
  // events, time_per_event_seconds with count/mean/min/max and histogram percentiles (std 0);
  // total_events_from_chunks; per_dataset counts, totals, means and duration distribution;
  // section_stats with entries, totals, count/mean/min/max/percentiles of the values, total
  // duration, share of chunk time, CPU seconds. Sorted like Aggregate's output.
  v1::ChunkMetrics ToChunkMetrics() const;

  int64_t num_chunks() const { return num_chunks_; }

 private:
  struct Distribution {
    stats::LogHistogram histogram;
    aggregation_internal::CompensatedAccumulator sum;  // the histogram's own sum is order-dependent
    void Add(double value) {
      histogram.Add(value);
      sum.Add(value);
    }
    void Merge(const Distribution& other);
    v1::DistributionStats ToProto() const;
  };
  struct Dataset {
    int64_t events = 0;
    Distribution duration;
  };
  struct Section {
    int64_t entries = 0;
    Distribution values;
    aggregation_internal::CompensatedAccumulator duration_seconds;
    aggregation_internal::CompensatedAccumulator cpu_seconds;
  };

  int64_t num_chunks_ = 0;
  int64_t num_failed_ = 0;
  int64_t num_retried_ = 0;
  int64_t total_events_ = 0;
  Distribution duration_, memory_delta_, events_, time_per_event_;
  std::map<std::string, Dataset> datasets_;
  std::map<std::pair<std::string, int>, Section> sections_;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_PARTIAL_AGGREGATE_H_
