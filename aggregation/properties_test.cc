// Properties: the result does not depend on the order of records or samples, nor on whether
// the helper thread runs.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "aggregation/aggregate.h"
#include "aggregation/test_run.h"
#include "gtest/gtest.h"
#include "schema/chunk_info_rows.h"

namespace roastcoffea {
namespace {

using ::roastcoffea::testing_internal::AggregateRun;
using ::roastcoffea::testing_internal::TestRun;

constexpr int64_t kS = 1'000'000'000;
constexpr int64_t kT0 = 1'765'000'000 * kS;

// Random records; with `dyadic`, every value is a multiple of 1/64 so all sums are exact.
std::vector<v1::ChunkRecord> RandomRecords(int n, bool dyadic, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> duration(0.0, 1.0);
  std::uniform_int_distribution<int> events(0, 5000), pick(0, 99);
  const char* datasets[] = {"TTbar", "WJets", "", "ZZ"};
  const char* names[] = {"jets", "muons", "electrons", "load", "read"};
  const v1::SectionRecord::Kind kinds[] = {
      v1::SectionRecord::KIND_TIME, v1::SectionRecord::KIND_TIME, v1::SectionRecord::KIND_TIME,
      v1::SectionRecord::KIND_MEMORY, v1::SectionRecord::KIND_BYTES};
  auto value = [&](double v) { return dyadic ? std::round(v * 64) / 64 : v; };
  std::vector<v1::ChunkRecord> records;
  for (int i = 0; i < n; ++i) {
    v1::ChunkRecord r;
    r.set_uuid("u" + std::to_string(i));
    r.set_dataset(datasets[i % 4]);
    r.set_file(std::string(datasets[i % 4]) + std::to_string(i % 7) + ".root");
    r.set_entry_start(i * 1000);
    r.set_entry_stop(i * 1000 + 1000);
    r.set_events(events(rng));
    r.set_duration_seconds(value(duration(rng)));
    r.set_start_unix_ns(kT0 + i * kS);
    r.set_end_unix_ns(kT0 + i * kS + 500);
    r.set_memory_before_bytes(1 << 30);
    r.set_memory_after_bytes((1 << 30) + events(rng) * 1024 - 2'000'000);
    r.set_attempt(pick(rng) < 5 ? 1 : 0);
    if (pick(rng) < 10) {
      r.set_status(v1::CHUNK_STATUS_FAILED);
      r.set_error_text("error " + std::to_string(i));
    } else {
      r.set_status(v1::CHUNK_STATUS_OK);
    }
    for (int s = 0; s < 5; ++s) {
      if (pick(rng) < 10) continue;  // not every chunk enters every section
      v1::SectionRecord* section = r.add_sections();
      section->set_name(names[s]);
      section->set_kind(kinds[s]);
      section->set_entries(1 + pick(rng) % 3);
      section->set_duration_seconds(value(duration(rng) / 10));
      section->set_cpu_seconds(value(duration(rng) / 20));
      section->set_memory_delta_bytes(events(rng) - 2500);
      section->set_bytes_read(events(rng) * 100);
    }
    records.push_back(r);
  }
  return records;
}

v1::TrackingData RandomTracking(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> memory(1e8, 4e9);
  v1::TrackingData tracking;
  for (int t = 0; t < 50; ++t) {
    tracking.add_worker_count_time_unix_ns(kT0 + t * kS);
    tracking.add_worker_count(3 + t % 2);
  }
  for (int w = 0; w < 4; ++w) {
    v1::WorkerSeries* series = tracking.add_workers();
    series->set_worker("w" + std::to_string(w));
    for (int t = w * 5; t < 50 - w * 3; ++t) {
      series->add_time_unix_ns(kT0 + t * kS + w * 1000);
      series->add_memory_bytes(memory(rng));
      series->add_cores(1 + w);
    }
  }
  return tracking;
}

TEST(PropertiesTest, ResultDoesNotDependOnRecordOrSampleOrder) {
  TestRun run;
  run.report.set_events(123456);
  run.elapsed_seconds = 50;
  run.chunks = RandomRecords(2000, /*dyadic=*/false, 1);
  run.tracking = RandomTracking(2);
  run.window_start_unix_ns = kT0 - 5 * kS;
  run.window_end_unix_ns = kT0 + 45 * kS;
  const auto expected = AggregateRun(run);
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_TRUE(expected->has_chunks());
  EXPECT_GT(expected->chunks().section_stats_size(), 0);

  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 3; ++trial) {
    TestRun shuffled = run;
    std::shuffle(shuffled.chunks.begin(), shuffled.chunks.end(), rng);
    for (v1::ChunkRecord& chunk : shuffled.chunks) {
      // Section order inside a record does not matter either.
      auto* sections = chunk.mutable_sections();
      for (int i = sections->size() - 1; i > 0; --i) {
        sections->SwapElements(i, static_cast<int>(rng() % static_cast<uint64_t>(i + 1)));
      }
    }
    v1::TrackingData& tracking = *shuffled.tracking;
    for (int i = tracking.workers_size() - 1; i > 0; --i) {
      tracking.mutable_workers()->SwapElements(i, static_cast<int>(rng() % (i + 1)));
    }
    for (v1::WorkerSeries& series : *tracking.mutable_workers()) {
      for (int i = series.time_unix_ns_size() - 1; i > 0; --i) {
        const int j = static_cast<int>(rng() % static_cast<uint64_t>(i + 1));
        series.mutable_time_unix_ns()->SwapElements(i, j);
        series.mutable_memory_bytes()->SwapElements(i, j);
        series.mutable_cores()->SwapElements(i, j);
      }
    }
    for (int i = tracking.worker_count_size() - 1; i > 0; --i) {
      const int j = static_cast<int>(rng() % static_cast<uint64_t>(i + 1));
      tracking.mutable_worker_count()->SwapElements(i, j);
      tracking.mutable_worker_count_time_unix_ns()->SwapElements(i, j);
    }
    const auto actual = AggregateRun(shuffled);
    ASSERT_TRUE(actual.ok()) << actual.status();
    EXPECT_EQ(actual->SerializeAsString(), expected->SerializeAsString()) << "trial " << trial;
  }
}

TEST(PropertiesTest, HelperThreadGivesTheSameResult) {
  TestRun run;
  run.chunks = RandomRecords(500, /*dyadic=*/false, 4);
  // Tracking too: its figures are made on their own helper thread.
  run.tracking = RandomTracking(3);
  run.options.parallel_min_records = SIZE_MAX;
  const auto sequential = AggregateRun(run);
  run.options.parallel_min_records = 1;
  const auto parallel = AggregateRun(run);
  ASSERT_TRUE(sequential.ok() && parallel.ok());
  EXPECT_EQ(ChunkInfoSize(parallel->chunks()), 500u);
  EXPECT_TRUE(parallel->has_workers());
  EXPECT_EQ(parallel->SerializeAsString(), sequential->SerializeAsString());
  // An invalid record with the helper thread running: an error, the thread joined.
  run.chunks[250].set_duration_seconds(-1);
  const auto invalid = AggregateRun(run);
  EXPECT_EQ(invalid.status().code(), absl::StatusCode::kInvalidArgument);
}

// Chunks prepared beforehand (PrepareChunks) aggregate to exactly what Aggregate makes from the
// records, in order or shuffled, on one thread or two, and serve more than one call.
TEST(PropertiesTest, PreparedChunksGiveTheSameResult) {
  for (const bool shuffled : {false, true}) {
    for (const size_t parallel_min_records : {size_t{1}, SIZE_MAX}) {
      SCOPED_TRACE(testing::Message()
                   << "shuffled " << shuffled << ", parallel_min_records " << parallel_min_records);
      TestRun run;
      run.chunks = RandomRecords(400, /*dyadic=*/false, 5);
      if (shuffled) std::reverse(run.chunks.begin(), run.chunks.end());
      run.tracking = RandomTracking(4);
      run.options.parallel_min_records = parallel_min_records;
      const auto expected = AggregateRun(run);
      ASSERT_TRUE(expected.ok()) << expected.status();

      const google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks(run.chunks.begin(),
                                                                       run.chunks.end());
      auto prepared = PrepareChunks(chunks, parallel_min_records);
      ASSERT_TRUE(prepared.ok()) << prepared.status();
      AggregationInput input;
      input.report = &run.report;
      input.tracking = &*run.tracking;
      input.chunks = &chunks;
      input.prepared_chunks = prepared->get();
      input.options = run.options;
      for (int call = 0; call < 2; ++call) {
        const auto actual = Aggregate(input);
        ASSERT_TRUE(actual.ok()) << actual.status();
        EXPECT_EQ(actual->SerializeAsString(), expected->SerializeAsString()) << "call " << call;
      }
      // Prepared from other records: refused, naming the input.
      const google::protobuf::RepeatedPtrField<v1::ChunkRecord> copy = chunks;
      input.chunks = &copy;
      const auto mismatched = Aggregate(input);
      EXPECT_EQ(mismatched.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_NE(mismatched.status().message().find("prepared_chunks"), std::string::npos);
    }
  }
}

// An invalid record: PrepareChunks refuses it with Aggregate's own error.
TEST(PropertiesTest, PrepareChunksNamesTheFirstInvalidRecord) {
  TestRun run;
  run.chunks = RandomRecords(300, /*dyadic=*/false, 6);
  run.chunks[120].set_events(-1);
  run.chunks[200].set_duration_seconds(-1);
  const google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks(run.chunks.begin(),
                                                                   run.chunks.end());
  const auto expected = AggregateRun(run);
  ASSERT_FALSE(expected.ok());
  for (const size_t parallel_min_records : {size_t{1}, SIZE_MAX}) {
    const auto prepared = PrepareChunks(chunks, parallel_min_records);
    ASSERT_FALSE(prepared.ok());
    EXPECT_EQ(prepared.status(), expected.status());
    EXPECT_NE(prepared.status().message().find("chunks[120]"), std::string::npos);
  }
}

}  // namespace
}  // namespace roastcoffea
