#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "aggregation/aggregate.h"
#include "gtest/gtest.h"
#include "schema/chunk_table.h"

namespace roastcoffea {
namespace {

v1::Measurement WithOneBadValueEach() {
  v1::Measurement m;
  m.mutable_metadata()->set_elapsed_seconds(10);
  v1::TrackingData& tracking = *m.mutable_tracking();
  v1::WorkerSeries& worker = *tracking.add_workers();
  worker.set_worker("tcp://127.0.0.1:1");
  for (int i = 0; i < 4; ++i) {
    worker.add_time_unix_ns(i * 1'000'000'000LL);
    worker.add_cores(2);
    // A hostile scheduler's -1 in the second poll.
    worker.add_memory_bytes(i == 1 ? -1.0 : 1e9);
  }
  worker.add_cpu_percent(50);  // one sample for four times: a column of the wrong length
  tracking.add_worker_count(1);
  tracking.add_worker_count(1);
  tracking.add_worker_count_time_unix_ns(0);  // two counts, one time

  v1::ChunkRecord& good = *m.add_chunks();
  good.set_duration_seconds(1);
  good.set_events(100);
  v1::ChunkRecord& backwards = *m.add_chunks();
  backwards.set_file("f.root");
  backwards.set_duration_seconds(-1);  // the user's command wrote end before start
  v1::ChunkRecord& huge = *m.add_chunks();
  huge.set_duration_seconds(1);
  huge.set_events(std::numeric_limits<int64_t>::min());  // llround(1e308)

  v1::Span& span = *m.add_spans();
  span.set_name("s");
  v1::FineMetric& nan = *span.add_metrics();
  nan.set_activity("thread-cpu");
  nan.set_unit("seconds");
  nan.set_value(std::nan(""));
  v1::FineMetric& fine = *span.add_metrics();
  fine.set_activity("thread-cpu");
  fine.set_unit("seconds");
  fine.set_value(3);
  return m;
}

TEST(RepairForAggregationTest, BadValuesCostThemselvesNotTheRun) {
  v1::Measurement m = WithOneBadValueEach();
  ASSERT_FALSE(Aggregate(AggregationInputFromMeasurement(m)).ok());

  const std::vector<v1::Warning> warnings = RepairForAggregation(&m);
  const absl::StatusOr<v1::AggregatedMetrics> metrics =
      Aggregate(AggregationInputFromMeasurement(m));
  ASSERT_TRUE(metrics.ok()) << metrics.status();

  // The bad sample is gone with its time; the others stay.
  const v1::WorkerSeries& worker = m.tracking().workers(0);
  EXPECT_EQ(worker.time_unix_ns_size(), 3);
  EXPECT_EQ(worker.memory_bytes_size(), 3);
  EXPECT_EQ(worker.cores_size(), 3);
  EXPECT_EQ(worker.cpu_percent_size(), 0);
  EXPECT_EQ(m.tracking().worker_count_size(), 1);
  // The two bad records are kept as received, out of the figures.
  EXPECT_EQ(m.chunks_size(), 1);
  EXPECT_EQ(m.rejected_chunks_size(), 2);
  EXPECT_EQ(metrics->chunks().num_chunks(), 1);
  EXPECT_EQ(m.spans(0).metrics_size(), 1);
  EXPECT_DOUBLE_EQ(metrics->cpu().cpu_seconds(), 3);

  std::string all;
  for (const v1::Warning& warning : warnings)
    all += warning.code() + ": " + warning.message() + "\n";
  EXPECT_TRUE(absl::StrContains(all, "memory_bytes[1] = -1")) << all;
  EXPECT_TRUE(absl::StrContains(all, "tcp://127.0.0.1:1")) << all;
  EXPECT_TRUE(absl::StrContains(all, "cpu_percent has 1 samples for 4 times")) << all;
  EXPECT_TRUE(absl::StrContains(all, "invalid_chunk_record: 2 chunk records")) << all;
  EXPECT_TRUE(absl::StrContains(all, "duration_seconds is -1")) << all;
  EXPECT_TRUE(absl::StrContains(all, "thread-cpu = nan")) << all;
}

// The records held apart as a table (MeasureRun): the same warnings in the same order, the same
// records rejected as received, the rest kept in order in the table.
TEST(RepairForAggregationTest, RecordsInATableAreRepairedTheSameWay) {
  v1::Measurement by_records = WithOneBadValueEach();
  for (int i = 0; i < 8; ++i) {  // more than the warning names, valid and not, interleaved
    v1::ChunkRecord& record = *by_records.add_chunks();
    record.set_task_id(absl::StrCat("t", i));
    record.set_duration_seconds(i % 2 == 0 ? std::nan("") : 2.0 + i);
  }
  v1::Measurement by_table = by_records;
  ChunkTable table;
  for (const v1::ChunkRecord& record : by_table.chunks()) table.Append(record);
  by_table.clear_chunks();

  const std::vector<v1::Warning> expected = RepairForAggregation(&by_records);
  const std::vector<v1::Warning> warnings = RepairForAggregation(&by_table, &table);
  ASSERT_EQ(warnings.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(warnings[i].SerializeAsString(), expected[i].SerializeAsString()) << i;
  }
  EXPECT_TRUE(absl::StrContains(expected[2].message(), "6 chunk records")) << expected[2].message();
  ASSERT_EQ(table.size(), static_cast<size_t>(by_records.chunks_size()));
  table.AppendRecordsTo(by_table.mutable_chunks());
  EXPECT_EQ(by_table.SerializeAsString(), by_records.SerializeAsString());
  // Nothing left to repair: the table stays as it is.
  v1::Measurement again = by_table;
  again.clear_chunks();
  EXPECT_TRUE(RepairForAggregation(&again, &table).empty());
  EXPECT_EQ(table.size(), static_cast<size_t>(by_records.chunks_size()));
}

TEST(RepairForAggregationTest, AValidMeasurementIsUntouched) {
  v1::Measurement m = WithOneBadValueEach();
  ASSERT_FALSE(RepairForAggregation(&m).empty());
  const std::string repaired = m.SerializeAsString();
  EXPECT_TRUE(RepairForAggregation(&m).empty());
  EXPECT_EQ(m.SerializeAsString(), repaired);
}

TEST(RepairForAggregationTest, ImplausibleCoresAndManyProblemsAreCounted) {
  v1::Measurement m;
  v1::WorkerSeries& worker = *m.mutable_tracking()->add_workers();
  for (int i = 0; i < 20; ++i) {
    worker.add_time_unix_ns(i);
    worker.add_cores(1e300);
  }
  const std::vector<v1::Warning> warnings = RepairForAggregation(&m);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(absl::StrContains(warnings[0].message(), "20 tracking samples"))
      << warnings[0].message();
  EXPECT_TRUE(absl::StrContains(warnings[0].message(), "and 15 more")) << warnings[0].message();
  EXPECT_EQ(m.tracking().workers(0).time_unix_ns_size(), 0);
}

// Cores and limits stored once for the series (schema/worker_series_columns.h) are valid, and
// repaired as the same column at every point would be: a bad memory sample drops that point
// only, the value stored once stays; an implausible value stored once drops every point.
TEST(RepairForAggregationTest, ColumnsStoredOnceAreRepairedAsAtEveryPoint) {
  const auto series = [](bool once, double cores) {
    v1::Measurement m;
    m.mutable_metadata()->set_elapsed_seconds(10);
    v1::WorkerSeries& worker = *m.mutable_tracking()->add_workers();
    worker.set_worker("w");
    worker.set_kind(v1::SERIES_KIND_STEP);
    for (int i = 0; i < 4; ++i) {
      worker.add_time_unix_ns(i * 1'000'000'000LL);
      worker.add_executing_tasks(i % 2);
      worker.add_memory_bytes(i == 1 ? -1.0 : 1e9);
      if (!once || i == 0) {
        worker.add_cores(cores);
        worker.add_memory_limit_bytes(4e9);
        worker.add_disk_limit_bytes(8e9);
      }
    }
    return m;
  };
  for (const double cores : {4.0, 1e300}) {
    SCOPED_TRACE(cores);
    v1::Measurement every = series(false, cores), once = series(true, cores);
    ASSERT_EQ(once.tracking().workers(0).cores_size(), 1);
    const std::vector<v1::Warning> every_warnings = RepairForAggregation(&every);
    const std::vector<v1::Warning> once_warnings = RepairForAggregation(&once);
    ASSERT_EQ(once_warnings.size(), every_warnings.size());
    for (size_t i = 0; i < once_warnings.size(); ++i) {
      EXPECT_EQ(once_warnings[i].message(), every_warnings[i].message());
    }
    const v1::WorkerSeries& w = once.tracking().workers(0);
    EXPECT_EQ(w.time_unix_ns_size(), every.tracking().workers(0).time_unix_ns_size());
    EXPECT_EQ(w.time_unix_ns_size(), cores == 4.0 ? 3 : 0);
    EXPECT_EQ(w.cores_size(), cores == 4.0 ? 1 : 0);
    EXPECT_EQ(w.memory_limit_bytes_size(), cores == 4.0 ? 1 : 0);
    const absl::StatusOr<v1::AggregatedMetrics> from_once =
        Aggregate(AggregationInputFromMeasurement(once));
    const absl::StatusOr<v1::AggregatedMetrics> from_every =
        Aggregate(AggregationInputFromMeasurement(every));
    ASSERT_TRUE(from_once.ok()) << from_once.status();
    ASSERT_TRUE(from_every.ok()) << from_every.status();
    EXPECT_EQ(from_once->workers().SerializeAsString(), from_every->workers().SerializeAsString());
  }
}

// Each column and each bound is checked, whichever one holds the only bad value: the scan
// that finds a series clean must not miss one (the last column, a point in the middle, a
// value just over its column's bound, a cores count that would pass as bytes).
TEST(RepairForAggregationTest, TheOnlyBadValueIsFoundInAnyColumn) {
  const auto series = [](double disk_write, double cores) {
    v1::Measurement m;
    v1::WorkerSeries& worker = *m.mutable_tracking()->add_workers();
    worker.set_worker("w");
    for (int i = 0; i < 5; ++i) {
      worker.add_time_unix_ns(i);
      worker.add_memory_bytes(1e9);
      worker.add_cores(i == 2 ? cores : 4);
      worker.add_disk_write_bytes_per_second(i == 3 ? disk_write : 1e6);
    }
    return m;
  };
  struct Case {
    double disk_write, cores;
    int points_kept;
  };
  for (const Case& c : {Case{1e6, 4, 5}, Case{std::nan(""), 4, 4}, Case{-1, 4, 4},
                        Case{1.2e18, 4, 4}, Case{1e6, 2e6, 4}, Case{1e6, -0.5, 4}}) {
    SCOPED_TRACE(absl::StrCat(c.disk_write, " ", c.cores));
    v1::Measurement m = series(c.disk_write, c.cores);
    const std::vector<v1::Warning> warnings = RepairForAggregation(&m);
    EXPECT_EQ(warnings.size(), c.points_kept == 5 ? 0u : 1u);
    EXPECT_EQ(m.tracking().workers(0).time_unix_ns_size(), c.points_kept);
    EXPECT_EQ(m.tracking().workers(0).disk_write_bytes_per_second_size(), c.points_kept);
  }
}

}  // namespace
}  // namespace roastcoffea
