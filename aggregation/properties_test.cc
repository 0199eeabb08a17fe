// Properties: the result does not depend on the order of records or samples; aggregating two
// halves with ChunkPartialAggregate and merging equals aggregating the whole.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "aggregation/aggregate.h"
#include "aggregation/partial_aggregate.h"
#include "aggregation/test_run.h"
#include "gtest/gtest.h"

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
  run.options.parallel_min_records = SIZE_MAX;
  const auto sequential = AggregateRun(run);
  run.options.parallel_min_records = 1;
  const auto parallel = AggregateRun(run);
  ASSERT_TRUE(sequential.ok() && parallel.ok());
  EXPECT_EQ(parallel->chunks().chunk_info_size(), 500);
  EXPECT_EQ(parallel->SerializeAsString(), sequential->SerializeAsString());
  // An invalid record with the helper thread running: an error, the thread joined.
  run.chunks[250].set_duration_seconds(-1);
  const auto invalid = AggregateRun(run);
  EXPECT_EQ(invalid.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PropertiesTest, MergingHalvesEqualsTheWhole) {
  const std::vector<v1::ChunkRecord> records = RandomRecords(3000, /*dyadic=*/true, 5);
  ChunkPartialAggregate whole, first, second;
  for (size_t i = 0; i < records.size(); ++i) {
    ASSERT_TRUE(whole.Add(records[i]).ok());
    ASSERT_TRUE((i % 3 == 0 ? first : second).Add(records[i]).ok());
  }
  ChunkPartialAggregate merged = second;
  merged.Merge(first);
  EXPECT_EQ(merged.ToChunkMetrics().SerializeAsString(), whole.ToChunkMetrics().SerializeAsString());
  ChunkPartialAggregate merged_other_way = first;
  merged_other_way.Merge(second);
  EXPECT_EQ(merged_other_way.ToChunkMetrics().SerializeAsString(),
            whole.ToChunkMetrics().SerializeAsString());
}

TEST(PropertiesTest, MergeableMetricsAgreeWithAggregate) {
  TestRun run;
  run.chunks = RandomRecords(3000, /*dyadic=*/true, 9);
  const auto exact = AggregateRun(run);
  ASSERT_TRUE(exact.ok()) << exact.status();
  ChunkPartialAggregate partial;
  for (const v1::ChunkRecord& r : run.chunks) ASSERT_TRUE(partial.Add(r).ok());
  const v1::ChunkMetrics merged = partial.ToChunkMetrics();
  const v1::ChunkMetrics& c = exact->chunks();
  EXPECT_EQ(merged.num_chunks(), c.num_chunks());
  EXPECT_EQ(merged.num_failed_chunks(), c.num_failed_chunks());
  EXPECT_EQ(merged.num_successful_chunks(), c.num_successful_chunks());
  EXPECT_EQ(merged.num_retried_chunks(), c.num_retried_chunks());
  EXPECT_EQ(merged.total_events_from_chunks(), c.total_events_from_chunks());
  EXPECT_EQ(merged.duration_seconds().count(), c.duration_seconds().count());
  EXPECT_EQ(merged.duration_seconds().mean(), c.duration_seconds().mean());
  EXPECT_EQ(merged.duration_seconds().min(), c.duration_seconds().min());
  EXPECT_EQ(merged.duration_seconds().max(), c.duration_seconds().max());
  EXPECT_EQ(merged.memory_delta_bytes().max(), c.memory_delta_bytes().max());
  // Histogram percentiles are within 1 % of the exact lower-rank ones; the exact (linear)
  // percentile lies between two neighbouring ranks, so compare with a small slack.
  EXPECT_NEAR(merged.duration_seconds().percentiles().p50(), c.duration_seconds().percentiles().p50(),
              0.011 * c.duration_seconds().percentiles().p50() + 1.0 / 64);
  ASSERT_EQ(merged.per_dataset_size(), c.per_dataset_size());
  for (int d = 0; d < c.per_dataset_size(); ++d) {
    EXPECT_EQ(merged.per_dataset(d).dataset(), c.per_dataset(d).dataset());
    EXPECT_EQ(merged.per_dataset(d).num_chunks(), c.per_dataset(d).num_chunks());
    EXPECT_EQ(merged.per_dataset(d).total_duration_seconds(),
              c.per_dataset(d).total_duration_seconds());
    EXPECT_EQ(merged.per_dataset(d).total_events(), c.per_dataset(d).total_events());
  }
  ASSERT_EQ(merged.section_stats_size(), c.section_stats_size());
  for (int s = 0; s < c.section_stats_size(); ++s) {
    EXPECT_EQ(merged.section_stats(s).name(), c.section_stats(s).name());
    EXPECT_EQ(merged.section_stats(s).entries(), c.section_stats(s).entries());
    EXPECT_EQ(merged.section_stats(s).total(), c.section_stats(s).total());
    EXPECT_EQ(merged.section_stats(s).total_duration_seconds(),
              c.section_stats(s).total_duration_seconds());
    EXPECT_EQ(merged.section_stats(s).values().max(), c.section_stats(s).values().max());
    EXPECT_EQ(merged.section_stats(s).share_of_chunk_time_fraction(),
              c.section_stats(s).share_of_chunk_time_fraction());
  }
}

TEST(PropertiesTest, PartialAggregateRejectsBadRecordsUnchanged) {
  ChunkPartialAggregate partial;
  v1::ChunkRecord bad;
  bad.set_uuid("x");
  bad.set_duration_seconds(std::nan(""));
  const absl::Status status = partial.Add(bad);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("uuid \"x\""), absl::string_view::npos);
  EXPECT_EQ(partial.num_chunks(), 0);
}

}  // namespace
}  // namespace roastcoffea
