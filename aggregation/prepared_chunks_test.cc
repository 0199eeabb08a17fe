// Aggregate from chunk columns made beforehand (PrepareChunks) gives byte for byte what Aggregate
// makes from the records, whatever their order and shape (issue #25), and leaves the prepared
// columns as they were: one PreparedChunks serves several calls, also at once.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aggregation/aggregate.h"
#include "gtest/gtest.h"
#include "schema/deterministic_bytes.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

struct Shape {
  int records = 500;
  int datasets = 4;
  bool all_failed = false;
  bool shuffle = false;
};

// Records with sections, retries, failures, memory and files named so that their name order is
// the reverse of their first appearance.
v1::Measurement Records(const Shape& shape, uint64_t seed) {
  v1::Measurement m;
  std::mt19937_64 rng(seed);
  const int64_t start = int64_t{1'765'000'000} * 1'000'000'000;
  m.mutable_metadata()->set_elapsed_seconds(100);
  for (int i = 0; i < shape.records; ++i) {
    v1::ChunkRecord* c = m.add_chunks();
    c->set_dataset(absl::StrCat("d", rng() % static_cast<uint64_t>(shape.datasets)));
    c->set_file(absl::StrCat("root://x//f", 1'000'000 - i / 4, ".root"));
    c->set_entry_start(i % 4 * 1000);
    c->set_entry_stop(i % 4 * 1000 + 1000);
    c->set_events(1000 + static_cast<int64_t>(rng() % 100));
    const double d = 0.1 + static_cast<double>(rng() % 1000) / 100;
    c->set_duration_seconds(d);
    c->set_cpu_seconds(d / 2);
    // Some records start in the same nanosecond.
    c->set_start_unix_ns(start + static_cast<int64_t>(i / 3) * 1'000'000);
    c->set_end_unix_ns(c->start_unix_ns() + static_cast<int64_t>(d * 1e9));
    c->set_memory_before_bytes(1'000'000);
    c->set_memory_after_bytes(1'000'000 + static_cast<int64_t>(rng() % 1000) - 500);
    c->set_compressed_bytes_read(1000 * (i % 7));
    c->set_worker(absl::StrCat("tcp://w", i % 5, "/thread-", i % 2));
    c->set_attempt(i % 17 == 0 ? 1 : 0);
    const bool failed = shape.all_failed || i % 13 == 0;
    c->set_status(failed ? v1::CHUNK_STATUS_FAILED : v1::CHUNK_STATUS_OK);
    if (failed) c->set_error_text("boom");
    for (const char* name : {"jets", "muons"}) {
      v1::SectionRecord* section = c->add_sections();
      section->set_name(name);
      section->set_kind(v1::SectionRecord::KIND_TIME);
      section->set_duration_seconds(d / 4);
    }
  }
  if (shape.shuffle) {
    for (int i = m.chunks_size() - 1; i > 0; --i) {
      m.mutable_chunks()->SwapElements(i, static_cast<int>(rng() % static_cast<uint64_t>(i + 1)));
    }
  }
  return m;
}

std::string Serialized(const absl::StatusOr<v1::AggregatedMetrics>& metrics) {
  EXPECT_TRUE(metrics.ok()) << metrics.status();
  if (!metrics.ok()) return "";
  return DeterministicBytes(*metrics);
}

void ExpectPreparedSameAsRecords(const Shape& shape) {
  SCOPED_TRACE(absl::StrCat("records ", shape.records, " datasets ", shape.datasets,
                            shape.all_failed ? " all failed" : "",
                            shape.shuffle ? " shuffled" : ""));
  const v1::Measurement m = Records(shape, 5);
  for (size_t parallel_min_records : {size_t{1}, SIZE_MAX}) {
    AggregationOptions options;
    options.parallel_min_records = parallel_min_records;
    const AggregationInput from_records = AggregationInputFromMeasurement(m, options);
    const std::string expected = Serialized(Aggregate(from_records));
    absl::StatusOr<std::unique_ptr<PreparedChunks>> prepared =
        PrepareChunks(m.chunks(), parallel_min_records);
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    AggregationInput from_columns = from_records;
    from_columns.prepared_chunks = prepared->get();
    EXPECT_EQ(Serialized(Aggregate(from_columns)), expected);
    // Again: the first call left the prepared columns unchanged.
    EXPECT_EQ(Serialized(Aggregate(from_columns)), expected);
  }
}

TEST(PreparedChunksTest, SameBytesAsFromRecordsInEveryShape) {
  ExpectPreparedSameAsRecords({});
  ExpectPreparedSameAsRecords({.shuffle = true});
  ExpectPreparedSameAsRecords({.records = 1});
  ExpectPreparedSameAsRecords({.all_failed = true});
  ExpectPreparedSameAsRecords({.all_failed = true, .shuffle = true});
  ExpectPreparedSameAsRecords({.datasets = 1});
  ExpectPreparedSameAsRecords({.records = 3000, .datasets = 60, .shuffle = true});
}

TEST(PreparedChunksTest, OrderOfRecordsChangesNoByte) {
  const std::string in_order =
      Serialized(Aggregate(AggregationInputFromMeasurement(Records({.records = 2000}, 9))));
  const std::string shuffled = Serialized(
      Aggregate(AggregationInputFromMeasurement(Records({.records = 2000, .shuffle = true}, 9))));
  EXPECT_EQ(in_order, shuffled);
}

TEST(PreparedChunksTest, OnePreparedServesTwoCallsAtOnce) {
  const v1::Measurement m = Records({.records = 3000, .shuffle = true}, 11);
  AggregationOptions options;
  options.parallel_min_records = 1;  // every helper thread in use
  absl::StatusOr<std::unique_ptr<PreparedChunks>> prepared = PrepareChunks(m.chunks());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  AggregationInput input = AggregationInputFromMeasurement(m, options);
  input.prepared_chunks = prepared->get();
  const std::string expected = Serialized(Aggregate(input));
  std::string other;
  std::thread second([&] { other = Serialized(Aggregate(input)); });
  const std::string first = Serialized(Aggregate(input));
  second.join();
  EXPECT_EQ(first, expected);
  EXPECT_EQ(other, expected);
}

TEST(PreparedChunksTest, WithoutFindingsEverythingElseIsTheSame) {
  const v1::Measurement m = Records({.records = 800}, 13);
  AggregationOptions options;
  absl::StatusOr<v1::AggregatedMetrics> with = Aggregate(AggregationInputFromMeasurement(m));
  options.evaluate_findings = false;
  absl::StatusOr<v1::AggregatedMetrics> without =
      Aggregate(AggregationInputFromMeasurement(m, options));
  ASSERT_TRUE(with.ok() && without.ok());
  EXPECT_TRUE(with->findings_evaluated());
  EXPECT_FALSE(without->findings_evaluated());
  EXPECT_EQ(without->findings_size(), 0);
  EXPECT_EQ(without->rule_evaluations_size(), 0);
  EXPECT_GT(with->rule_evaluations_size(), 0);
  with->clear_findings();
  with->clear_rule_evaluations();
  with->clear_findings_evaluated();
  EXPECT_EQ(Serialized(*with), Serialized(*without));
}

}  // namespace
}  // namespace roastcoffea
