// Test helper: an owning bundle of everything a run records, aggregated through the
// non-owning AggregationInput (testonly).
#ifndef ROASTCOFFEA_AGGREGATION_TEST_RUN_H_
#define ROASTCOFFEA_AGGREGATION_TEST_RUN_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "aggregation/aggregate.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace testing_internal {

struct TestRun {
  v1::WorkflowReport report;
  double elapsed_seconds = 0;
  int64_t window_start_unix_ns = 0;
  int64_t window_end_unix_ns = 0;
  std::optional<v1::TrackingData> tracking;
  std::vector<v1::ChunkRecord> chunks;
  std::vector<v1::Span> spans;
  AggregationOptions options;
};

inline absl::StatusOr<v1::AggregatedMetrics> AggregateRun(const TestRun& run) {
  const google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks(run.chunks.begin(),
                                                                   run.chunks.end());
  const google::protobuf::RepeatedPtrField<v1::Span> spans(run.spans.begin(), run.spans.end());
  AggregationInput input;
  input.report = &run.report;
  input.elapsed_seconds = run.elapsed_seconds;
  input.window_start_unix_ns = run.window_start_unix_ns;
  input.window_end_unix_ns = run.window_end_unix_ns;
  input.tracking = run.tracking.has_value() ? &*run.tracking : nullptr;
  input.chunks = &chunks;
  input.spans = &spans;
  input.options = run.options;
  return Aggregate(input);
}

}  // namespace testing_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_TEST_RUN_H_
