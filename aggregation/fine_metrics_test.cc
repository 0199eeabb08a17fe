#include "aggregation/fine_metrics.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

class Spans {
 public:
  Spans& Add(const std::string& prefix, const std::string& activity, double value,
             const std::string& unit = "seconds", const std::string& worker = "",
             const std::string& context = "execute") {
    if (spans_.empty()) spans_.Add();
    v1::FineMetric* m = spans_.Mutable(0)->add_metrics();
    m->set_context(context);
    m->set_task_prefix(prefix);
    m->set_activity(activity);
    m->set_unit(unit);
    m->set_value(value);
    m->set_worker(worker);
    return *this;
  }
  std::optional<v1::FineMetricsSummary> Compute(
      const std::vector<std::string>& patterns = {},
      const absl::flat_hash_map<std::string, double>* cores = nullptr) const {
    return ComputeFineMetrics(spans_, patterns, cores);
  }

 private:
  google::protobuf::RepeatedPtrField<v1::Span> spans_;
};

TEST(FineMetricsTest, EmptySpansGiveNothing) {
  EXPECT_FALSE(Spans().Compute().has_value());
  google::protobuf::RepeatedPtrField<v1::Span> empty_span;
  empty_span.Add();
  EXPECT_FALSE(ComputeFineMetrics(empty_span, {}, nullptr).has_value());
}

TEST(FineMetricsTest, GoldenTotalsAndPercentages) {
  const auto fine = Spans()
                        .Add("p", "thread-cpu", 100)
                        .Add("p", "thread-noncpu", 50)
                        .Add("p", "disk-read", 1e10, "bytes")
                        .Add("p", "disk-read", 7, "seconds")  // not bytes: not in disk_read_bytes
                        .Add("p", "disk-write", 5e8, "bytes")
                        .Add("p", "compress", 1)
                        .Add("p", "decompress", 5)
                        .Add("p", "serialize", 2)
                        .Add("p", "deserialize", 3)
                        .Add("p", "memory-read", 5e9, "bytes")
                        .Compute();
  ASSERT_TRUE(fine.has_value());
  EXPECT_NEAR(fine->processor_cpu_percent(), 66.67, 0.01);
  EXPECT_NEAR(fine->processor_io_wait_percent(), 33.33, 0.01);
  EXPECT_DOUBLE_EQ(fine->disk_read_bytes(), 1e10);
  EXPECT_DOUBLE_EQ(fine->disk_write_bytes(), 5e8);
  EXPECT_DOUBLE_EQ(fine->total_compression_overhead_seconds(), 6);
  EXPECT_DOUBLE_EQ(fine->total_serialization_overhead_seconds(), 5);
  EXPECT_DOUBLE_EQ(fine->total_bytes_memory_read(), 5e9);
  // Without processor patterns everything is the processor's, as the original with None.
  EXPECT_DOUBLE_EQ(fine->overhead_cpu_time_seconds(), 0);
}

TEST(FineMetricsTest, RunQueueWaitIsAPartOfNonCpuTime) {
  const auto fine = Spans()
                        .Add("p", "thread-cpu", 1, "seconds", "w")
                        .Add("p", "thread-noncpu", 3, "seconds", "w")
                        .Add("p", "thread-run-queue-wait", 2, "seconds", "w")
                        .Compute();
  ASSERT_TRUE(fine.has_value());
  ASSERT_TRUE(fine->has_processor_run_queue_wait_seconds());
  EXPECT_DOUBLE_EQ(fine->processor_run_queue_wait_seconds(), 2);
  EXPECT_DOUBLE_EQ(fine->processor_io_wait_time_seconds(), 3);
  // Thread time is cpu + noncpu; the run-queue part is not counted twice.
  ASSERT_EQ(fine->worker_seconds_size(), 1);
  EXPECT_DOUBLE_EQ(fine->worker_seconds(0).total_seconds(), 4);
  // Engines without the split: absent, not 0.
  const auto unsplit = Spans().Add("p", "thread-cpu", 1).Add("p", "thread-noncpu", 3).Compute();
  ASSERT_TRUE(unsplit.has_value());
  EXPECT_FALSE(unsplit->has_processor_run_queue_wait_seconds());
}

TEST(FineMetricsTest, ZeroTimeGivesZeroPercent) {
  const auto fine = Spans().Add("p", "memory-read", 5, "bytes").Compute();
  ASSERT_TRUE(fine.has_value());
  EXPECT_EQ(fine->processor_cpu_percent(), 0.0);
  EXPECT_EQ(fine->processor_io_wait_percent(), 0.0);
}

TEST(FineMetricsTest, ProcessorVersusOverheadByPatterns) {
  // docs/reference.md §4: MyProcessor 100/20 with lambda 5/2 -> processor 100 and 20, overhead 5
  // and 2.
  Spans spans;
  spans.Add("MyProcessor", "thread-cpu", 100)
      .Add("MyProcessor", "thread-noncpu", 20)
      .Add("lambda", "thread-cpu", 5)
      .Add("lambda", "thread-noncpu", 2);
  const auto exact = spans.Compute({"MyProcessor"});
  ASSERT_TRUE(exact.has_value());
  EXPECT_DOUBLE_EQ(exact->processor_cpu_time_seconds(), 100);
  EXPECT_DOUBLE_EQ(exact->processor_io_wait_time_seconds(), 20);
  EXPECT_DOUBLE_EQ(exact->overhead_cpu_time_seconds(), 5);
  EXPECT_DOUBLE_EQ(exact->overhead_io_wait_time_seconds(), 2);
  EXPECT_NEAR(exact->processor_cpu_percent(), 83.33, 0.01);
  // A glob matches dask-awkward style prefixes; several patterns are OR-ed.
  spans.Add("process-abc123", "thread-cpu", 10);
  const auto glob = spans.Compute({"MyProc*", "process-*"});
  EXPECT_DOUBLE_EQ(glob->processor_cpu_time_seconds(), 110);
  EXPECT_DOUBLE_EQ(glob->overhead_cpu_time_seconds(), 5);
}

TEST(FineMetricsTest, GlobMatching) {
  EXPECT_TRUE(MatchesTaskPattern("MyProcessor", "MyProcessor"));
  EXPECT_FALSE(MatchesTaskPattern("MyProcessor2", "MyProcessor"));
  EXPECT_TRUE(MatchesTaskPattern("process-abc", "process-*"));
  EXPECT_TRUE(MatchesTaskPattern("a-x-b", "a*b"));
  EXPECT_TRUE(MatchesTaskPattern("ab", "a?"));
  EXPECT_FALSE(MatchesTaskPattern("abc", "a?"));
  EXPECT_TRUE(MatchesTaskPattern("", "*"));
  EXPECT_FALSE(MatchesTaskPattern("lambda", "process-*"));
}

TEST(FineMetricsTest, EveryActivityKeptAndWorkerActivitiesSumToWallTimesThreads) {
  // Dask's model: a 2-thread worker over 10 s of wall time accounts 20 thread-seconds, split
  // over every activity including executor, other and idle time.
  Spans spans;
  spans.Add("MyProcessor", "thread-cpu", 12, "seconds", "tcp://w1")
      .Add("MyProcessor", "thread-noncpu", 3, "seconds", "tcp://w1")
      .Add("MyProcessor", "executor", 1, "seconds", "tcp://w1")
      .Add("N/A", "other", 0.5, "seconds", "tcp://w1")
      .Add("N/A", "idle", 3.5, "seconds", "tcp://w1")
      .Add("MyProcessor", "memory-read", 4096, "bytes", "tcp://w1")
      .Add("MyProcessor", "thread-cpu", 6, "seconds", "tcp://w2")
      .Add("N/A", "idle", 4, "seconds", "tcp://w2");
  const absl::flat_hash_map<std::string, double> cores = {{"tcp://w1", 20}, {"tcp://w2", 10}};
  const auto fine = spans.Compute({"MyProcessor"}, &cores);
  ASSERT_TRUE(fine.has_value());
  ASSERT_EQ(fine->worker_seconds_size(), 2);
  EXPECT_EQ(fine->worker_seconds(0).worker(), "tcp://w1");
  EXPECT_DOUBLE_EQ(fine->worker_seconds(0).total_seconds(), 10 * 2);
  EXPECT_DOUBLE_EQ(fine->worker_seconds(0).core_seconds(), fine->worker_seconds(0).total_seconds());
  EXPECT_DOUBLE_EQ(fine->worker_seconds(1).total_seconds(), fine->worker_seconds(1).core_seconds());
  // No cluster totals given: the original's keys sum the per-worker metrics.
  EXPECT_DOUBLE_EQ(fine->processor_cpu_time_seconds(), 18);
  // Every activity is kept in both breakdowns.
  std::vector<std::string> prefix_activities;
  for (const v1::ActivityTotal& a : fine->by_task_prefix()) {
    prefix_activities.push_back(a.task_prefix() + "/" + a.activity());
  }
  EXPECT_EQ(prefix_activities,
            (std::vector<std::string>{"MyProcessor/executor", "MyProcessor/memory-read",
                                      "MyProcessor/thread-cpu", "MyProcessor/thread-noncpu",
                                      "N/A/idle", "N/A/other"}));
  EXPECT_EQ(fine->by_worker_size(), 8);
  double w1_seconds = 0;
  for (const v1::ActivityTotal& a : fine->by_worker()) {
    if (a.worker() == "tcp://w1" && a.unit() == "seconds") w1_seconds += a.value();
  }
  EXPECT_DOUBLE_EQ(w1_seconds, 20);
}

// Dask 2026.7.1, a 1-thread worker over 13.09 s: its execute digests and its task stream's
// compute intervals describe the same seconds; adding them gave 16.57 s (issue #27 item 15).
TEST(FineMetricsTest, AWorkersSecondsAreCountedOnceAndNeverExceedItsCoreSeconds) {
  const absl::flat_hash_map<std::string, double> cores = {{"w1", 13.09}, {"w2", 13.09}};
  const auto fine = Spans()
                        .Add("busy", "thread-cpu", 6.1, "seconds", "w1")
                        .Add("busy", "thread-noncpu", 0.83, "seconds", "w1")
                        .Add("N/A", "idle", 6.0, "seconds", "w1")
                        .Add("busy", "compute", 5.90, "seconds", "w1", "task-stream")
                        .Add("busy", "transfer", 0.4, "seconds", "w1", "gather-dep")
                        .Add("busy", "compute", 3.5, "seconds", "w2", "task-stream")
                        .Add("busy", "transfer", 0.5, "seconds", "w2", "task-stream")
                        .Compute({}, &cores);
  ASSERT_TRUE(fine.has_value());
  ASSERT_EQ(fine->worker_seconds_size(), 2);
  EXPECT_DOUBLE_EQ(fine->worker_seconds(0).total_seconds(), 6.1 + 0.83 + 6.0) << "execute only";
  EXPECT_DOUBLE_EQ(fine->worker_seconds(1).total_seconds(), 4.0) << "no digests: task stream";
  for (const v1::WorkerActivitySeconds& worker : fine->worker_seconds()) {
    EXPECT_LE(worker.total_seconds(), worker.core_seconds()) << worker.worker();
  }
}

TEST(FineMetricsTest, ClusterTotalsAreNotDoubleCountedWithPerWorkerMetrics) {
  const auto fine = Spans()
                        .Add("p", "thread-cpu", 30)  // cluster total
                        .Add("p", "thread-cpu", 10, "seconds", "w1")
                        .Add("p", "thread-cpu", 20, "seconds", "w2")
                        .Compute();
  EXPECT_DOUBLE_EQ(fine->processor_cpu_time_seconds(), 30);
  EXPECT_EQ(fine->by_worker_size(), 2);
}

TEST(FineMetricsTest, IdleWorkersGetNoPerWorkerRows) {
  // w2 and w3 reported only zeros (connected, ran nothing): no rows of theirs, while the
  // cluster totals and w1's rows are as without them.
  const absl::flat_hash_map<std::string, double> cores = {{"w1", 5}, {"w2", 7}, {"w3", 9}};
  const auto with_idle = Spans()
                             .Add("p", "thread-cpu", 4)  // cluster total
                             .Add("p", "thread-cpu", 4, "seconds", "w1")
                             .Add("p", "idle", 0, "seconds", "w1")
                             .Add("p", "thread-cpu", 0, "seconds", "w2")
                             .Add("p", "idle", 0, "seconds", "w2")
                             .Add("p", "disk-read", 0, "bytes", "w3")
                             .Compute({}, &cores);
  const auto without = Spans()
                           .Add("p", "thread-cpu", 4)
                           .Add("p", "thread-cpu", 4, "seconds", "w1")
                           .Add("p", "idle", 0, "seconds", "w1")
                           .Compute({}, &cores);
  ASSERT_TRUE(with_idle.has_value());
  ASSERT_TRUE(without.has_value());
  EXPECT_EQ(with_idle->SerializeAsString(), without->SerializeAsString());
  // A worker with one non-zero total keeps all its rows, zeros included.
  ASSERT_EQ(with_idle->by_worker_size(), 2);
  EXPECT_EQ(with_idle->by_worker(0).activity(), "idle");
  EXPECT_EQ(with_idle->by_worker(0).worker(), "w1");
  ASSERT_EQ(with_idle->worker_seconds_size(), 1);
  EXPECT_EQ(with_idle->worker_seconds(0).worker(), "w1");
  EXPECT_DOUBLE_EQ(with_idle->worker_seconds(0).core_seconds(), 5);
  EXPECT_DOUBLE_EQ(with_idle->processor_cpu_time_seconds(), 4);
}

TEST(FineMetricsTest, UnknownUnitIsKeptButEntersNoUnitFilteredKey) {
  const auto fine = Spans().Add("p", "disk-read", 3, "furlongs").Compute();
  EXPECT_DOUBLE_EQ(fine->disk_read_bytes(), 0);
  ASSERT_EQ(fine->by_task_prefix_size(), 1);
  EXPECT_EQ(fine->by_task_prefix(0).unit(), "furlongs");
  EXPECT_DOUBLE_EQ(fine->by_task_prefix(0).value(), 3);
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
