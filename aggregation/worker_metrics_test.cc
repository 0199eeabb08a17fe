#include "aggregation/worker_metrics.h"

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kStart = 1'765'000'000 * kSecond;

void AddCounts(v1::TrackingData& tracking, const std::vector<std::pair<double, int>>& samples) {
  for (const auto& [seconds, count] : samples) {
    tracking.add_worker_count_time_unix_ns(kStart + static_cast<int64_t>(seconds * kSecond));
    tracking.add_worker_count(count);
  }
}

// A worker series; `cores` and `memory` may be empty (not measured) or as long as `seconds`.
v1::WorkerSeries& AddWorker(v1::TrackingData& tracking, const std::string& name,
                            const std::vector<double>& seconds, const std::vector<double>& memory,
                            const std::vector<double>& cores) {
  v1::WorkerSeries& worker = *tracking.add_workers();
  worker.set_worker(name);
  for (double s : seconds) worker.add_time_unix_ns(kStart + static_cast<int64_t>(s * kSecond));
  for (double m : memory) worker.add_memory_bytes(m);
  for (double c : cores) worker.add_cores(c);
  return worker;
}

TEST(WorkerMetricsTest, TwoWorkersFourCoresEach) {
  // docs/reference.md §4 (test_dask): constant 2 workers x 4 cores.
  v1::TrackingData tracking;
  AddCounts(tracking, {{0, 2}, {1, 2}, {2, 2}});
  AddWorker(tracking, "w1", {0, 1, 2}, {1e9, 2e9, 1.5e9}, {4, 4, 4});
  AddWorker(tracking, "w2", {0, 1, 2}, {1.2e9, 1.2e9, 1.2e9}, {4, 4, 4});
  const v1::WorkerMetrics m = ComputeWorkerMetrics(tracking);
  EXPECT_DOUBLE_EQ(m.avg_workers(), 2.0);
  EXPECT_EQ(m.peak_workers(), 2);
  ASSERT_TRUE(m.has_total_cores());
  EXPECT_DOUBLE_EQ(m.total_cores(), 8.0);
  EXPECT_DOUBLE_EQ(m.cores_per_worker(), 4.0);
  EXPECT_DOUBLE_EQ(m.peak_memory_bytes(), 2e9);
  // w1: (1.5e9*1 + 1.75e9*1)/2 = 1.625e9; w2: 1.2e9; mean 1.4125e9.
  EXPECT_DOUBLE_EQ(m.avg_memory_per_worker_bytes(), 1.4125e9);
}

TEST(WorkerMetricsTest, AverageMemoryFixtureOfTheOriginal) {
  // docs/reference.md §4: worker1 averages 1.5e9, worker2 1.2e9 -> 1.35e9.
  v1::TrackingData tracking;
  AddWorker(tracking, "worker1", {0, 1, 2}, {1e9, 1.5e9, 2e9}, {});
  AddWorker(tracking, "worker2", {0, 1, 2}, {1.2e9, 1.2e9, 1.2e9}, {});
  EXPECT_DOUBLE_EQ(ComputeWorkerMetrics(tracking).avg_memory_per_worker_bytes(), 1.35e9);
}

TEST(WorkerMetricsTest, MemoryGoldenCases) {
  v1::TrackingData constant;
  AddWorker(constant, "a", {0, 1}, {1e9, 1e9}, {});
  AddWorker(constant, "b", {0, 1}, {2e9, 2e9}, {});
  EXPECT_DOUBLE_EQ(ComputeWorkerMetrics(constant).avg_memory_per_worker_bytes(), 1.5e9);

  v1::TrackingData ramp;
  AddWorker(ramp, "a", {0, 1}, {1e9, 2e9}, {});
  EXPECT_DOUBLE_EQ(ComputeWorkerMetrics(ramp).avg_memory_per_worker_bytes(), 1.5e9);

  v1::TrackingData singles;
  AddWorker(singles, "a", {0}, {1e9}, {});
  AddWorker(singles, "b", {5}, {2e9}, {});
  EXPECT_DOUBLE_EQ(ComputeWorkerMetrics(singles).avg_memory_per_worker_bytes(), 1.5e9);

  // Hand-derived: w1 (0:1e9, 1:2e9, 3:2e9) -> (1.5e9 + 4e9)/3 = 1.8333e9; w2 4e9; mean 2.91667e9.
  v1::TrackingData uneven;
  AddWorker(uneven, "w1", {0, 1, 3}, {1e9, 2e9, 2e9}, {});
  AddWorker(uneven, "w2", {0}, {4e9}, {});
  EXPECT_NEAR(ComputeWorkerMetrics(uneven).avg_memory_per_worker_bytes(), 2.91667e9, 1e4);
}

TEST(WorkerMetricsTest, PeakMemoryIsTheLargestSingleSample) {
  v1::TrackingData tracking;
  AddWorker(tracking, "a", {0, 1}, {1e9, 2e9}, {});
  AddWorker(tracking, "b", {0, 1}, {0.8e9, 3.5e9}, {});
  EXPECT_DOUBLE_EQ(ComputeWorkerMetrics(tracking).peak_memory_bytes(), 3.5e9);
}

TEST(WorkerMetricsTest, MemorySamplesSharingOneTimestampAverageToTheirMean) {
  // The original divides by zero here; we take the mean of the samples.
  v1::TrackingData tracking;
  AddWorker(tracking, "a", {3, 3}, {1e9, 3e9}, {});
  EXPECT_DOUBLE_EQ(ComputeWorkerMetrics(tracking).avg_memory_per_worker_bytes(), 2e9);
}

TEST(WorkerMetricsTest, HeterogeneousCoresUseEachWorkersLastSample) {
  v1::TrackingData tracking;
  AddWorker(tracking, "a", {0, 1}, {}, {2, 4});
  AddWorker(tracking, "b", {0, 1}, {}, {8, 8});
  AddWorker(tracking, "c", {0}, {}, {2});
  const v1::WorkerMetrics m = ComputeWorkerMetrics(tracking);
  EXPECT_DOUBLE_EQ(m.total_cores(), 14.0);
  EXPECT_DOUBLE_EQ(m.cores_per_worker(), 14.0 / 3);
}

TEST(WorkerMetricsTest, LastCoresSampleIsTheLatestInTimeNotInStorageOrder) {
  v1::TrackingData tracking;
  AddWorker(tracking, "a", {2, 0, 1}, {}, {16, 1, 2});
  EXPECT_DOUBLE_EQ(ComputeWorkerMetrics(tracking).total_cores(), 16.0);
}

TEST(WorkerMetricsTest, MissingCoresLeaveTotalAndPerWorkerUnset) {
  v1::TrackingData tracking;
  AddCounts(tracking, {{0, 1}});
  AddWorker(tracking, "a", {0, 1}, {1e9, 1e9}, {});
  const v1::WorkerMetrics m = ComputeWorkerMetrics(tracking);
  EXPECT_FALSE(m.has_total_cores());
  EXPECT_FALSE(m.has_cores_per_worker());
}

TEST(WorkerMetricsTest, CoresSummingToZeroLeaveTotalUnset) {
  v1::TrackingData tracking;
  AddWorker(tracking, "a", {0}, {}, {0});
  const v1::WorkerMetrics m = ComputeWorkerMetrics(tracking);
  EXPECT_FALSE(m.has_total_cores());
  EXPECT_FALSE(m.has_cores_per_worker());
}

TEST(WorkerMetricsTest, EmptyTrackingGivesZeros) {
  const v1::WorkerMetrics m = ComputeWorkerMetrics(v1::TrackingData());
  EXPECT_DOUBLE_EQ(m.avg_workers(), 0.0);
  EXPECT_EQ(m.peak_workers(), 0);
  EXPECT_FALSE(m.has_total_cores());
  EXPECT_DOUBLE_EQ(m.peak_memory_bytes(), 0.0);
  EXPECT_DOUBLE_EQ(m.avg_memory_per_worker_bytes(), 0.0);
}

TEST(WorkerMetricsTest, WorkerCountTrapezoidWithUnsortedSamples) {
  v1::TrackingData tracking;
  AddCounts(tracking, {{3, 4}, {0, 2}, {4, 0}, {1, 4}});
  const v1::WorkerMetrics m = ComputeWorkerMetrics(tracking);
  EXPECT_DOUBLE_EQ(m.avg_workers(), 3.25);
  EXPECT_EQ(m.peak_workers(), 4);
}

TEST(WorkerMetricsTest, WorkerOrderDoesNotMatter) {
  // Values chosen so that summing them in another order changes the last bit.
  v1::TrackingData forward;
  AddWorker(forward, "a", {0, 1}, {0.1, 0.7}, {0.3, 0.3});
  AddWorker(forward, "b", {0, 2}, {0.2, 1e17}, {0.1, 1e17});
  AddWorker(forward, "c", {0}, {0.3}, {0.2});
  v1::TrackingData backward;
  for (int i = forward.workers_size() - 1; i >= 0; --i) {
    *backward.add_workers() = forward.workers(i);
  }
  const v1::WorkerMetrics a = ComputeWorkerMetrics(forward);
  const v1::WorkerMetrics b = ComputeWorkerMetrics(backward);
  EXPECT_EQ(a.total_cores(), b.total_cores());
  EXPECT_EQ(a.avg_memory_per_worker_bytes(), b.avg_memory_per_worker_bytes());
  EXPECT_EQ(a.peak_memory_bytes(), b.peak_memory_bytes());
}

TimeWindow Window(double from_s, double to_s) {
  return {kStart + static_cast<int64_t>(from_s * kSecond),
          kStart + static_cast<int64_t>(to_s * kSecond)};
}

// TaskVine's shape: a worker joins at 0 s (0 -> 1), another at 1 s (1 -> 2) and leaves at 3 s
// (2 -> 1), the run ends at 4 s; at 1 s the count also flickers to 3 and back in one instant.
v1::TrackingData StepRun() {
  v1::TrackingData tracking;
  tracking.set_worker_count_kind(v1::SERIES_KIND_STEP);
  AddCounts(tracking, {{0, 0}, {0, 1}, {1, 1}, {1, 3}, {1, 2}, {3, 2}, {3, 1}, {4, 1}});
  // Per worker: 2 then 4 cores; the leaving one's last sample is its disconnection (0 cores).
  AddWorker(tracking, "w1", {0, 4}, {}, {2, 2}).set_kind(v1::SERIES_KIND_STEP);
  AddWorker(tracking, "w2", {1, 3, 3}, {}, {4, 4, 0}).set_kind(v1::SERIES_KIND_STEP);
  return tracking;
}

TEST(WorkerMetricsTest, SampledWorkersSeenAtTheFirstAndLastPollCoverTheEdges) {
  // Polled every second; the run is [0, 10] s. A worker there all along is first seen at the
  // first poll (0.8 s) and last at the final one (9.5 s): it had its 2 cores for all 10 s. One
  // that joined at 5 s is not stretched back to the start.
  v1::TrackingData tracking;
  tracking.set_interval_seconds(1.0);
  AddWorker(tracking, "all-along", {0.8, 5, 9.5}, {}, {2, 2, 2});
  AddWorker(tracking, "joined", {5, 9.5}, {}, {1, 1});
  v1::WorkerMetrics metrics = ComputeWorkerMetrics(tracking);
  AddWindowedWorkerMetrics(tracking, Window(0, 10), &metrics);
  EXPECT_NEAR(metrics.core_seconds(), 2 * 10.0 + 1 * 5.0, 1e-9);
  // Without a polling interval nothing is extended.
  tracking.set_interval_seconds(0);
  metrics = ComputeWorkerMetrics(tracking);
  AddWindowedWorkerMetrics(tracking, Window(0, 10), &metrics);
  EXPECT_NEAR(metrics.core_seconds(), 2 * 8.7 + 1 * 4.5, 1e-9);
}

TEST(WorkerMetricsTest, StepWorkerCountHoldsEachValueUntilTheNextChange) {
  const v1::TrackingData tracking = StepRun();
  v1::WorkerMetrics m = ComputeWorkerMetrics(tracking);
  // 1 x 1 s + 2 x 2 s + 1 x 1 s = 6 worker-seconds over 4 s.
  EXPECT_DOUBLE_EQ(m.avg_workers(), 1.5);
  // The 3 held for no time still is the peak.
  EXPECT_EQ(m.peak_workers(), 3);
  // w2 holds 0 cores at its last instant (its last stored sample): only w1's 2 count.
  EXPECT_DOUBLE_EQ(m.total_cores(), 2.0);
  AddWindowedWorkerMetrics(tracking, Window(0, 4), &m);
  EXPECT_DOUBLE_EQ(m.avg_workers_over_window(), 1.5);
  // w1: 2 x 4 s; w2: 4 x 2 s (its 0 at disconnection holds for no time).
  EXPECT_DOUBLE_EQ(m.core_seconds(), 8.0 + 8.0);
  EXPECT_DOUBLE_EQ(m.cores_per_worker_time_weighted(), 16.0 / 6.0);
  // A wider window holds the count's first (0) and last (1) values outside the samples.
  AddWindowedWorkerMetrics(tracking, Window(-1, 6), &m);
  EXPECT_DOUBLE_EQ(m.avg_workers_over_window(), (0 + 6 + 2) / 7.0);
  EXPECT_DOUBLE_EQ(m.core_seconds(), 16.0);
  // A window cut inside a step.
  AddWindowedWorkerMetrics(tracking, Window(0.5, 2), &m);
  EXPECT_DOUBLE_EQ(m.avg_workers_over_window(), (0.5 * 1 + 1 * 2) / 1.5);
  EXPECT_DOUBLE_EQ(m.core_seconds(), 2 * 1.5 + 4 * 1);
}

TEST(WorkerMetricsTest, StepSeriesStoredOutOfOrderKeepTheirOrderWithinAnInstant) {
  v1::TrackingData tracking;
  tracking.set_worker_count_kind(v1::SERIES_KIND_STEP);
  // StepRun's count, instants shuffled, changes within each instant in order.
  AddCounts(tracking, {{3, 2}, {0, 0}, {1, 1}, {3, 1}, {1, 3}, {4, 1}, {0, 1}, {1, 2}});
  EXPECT_DOUBLE_EQ(ComputeWorkerMetrics(tracking).avg_workers(), 1.5);
}

TEST(WorkerMetricsTest, UnspecifiedKindIsSampled) {
  v1::TrackingData tracking = StepRun();
  tracking.clear_worker_count_kind();
  // Trapezoid over the pairs averaged at each instant: 0.5, 2, 1.5, 1 at 0, 1, 3, 4 s.
  EXPECT_DOUBLE_EQ(ComputeWorkerMetrics(tracking).avg_workers(),
                   ((0.5 + 2) / 2 + (2 + 1.5) / 2 * 2 + (1.5 + 1) / 2) / 4);
}

// The threadpool's shape: two threads of one process, each series repeating the process's
// resident memory at the same instants.
TEST(WorkerMetricsTest, ProcessWideMemoryIsCountedOnce) {
  v1::TrackingData tracking;
  tracking.set_workers_share_process(true);
  AddCounts(tracking, {{0, 2}, {2, 2}});
  AddWorker(tracking, "t0", {0, 1, 2}, {1e9, 3e9, 2e9}, {1, 1, 1});
  AddWorker(tracking, "t1", {0, 1, 2}, {1e9, 3e9, 2e9}, {1, 1, 1});
  v1::WorkerMetrics m = ComputeWorkerMetrics(tracking);
  EXPECT_TRUE(m.memory_is_process_wide());
  EXPECT_EQ(m.threads_sharing_memory(), 2);
  EXPECT_DOUBLE_EQ(m.peak_memory_bytes(), 3e9);
  // (1+3)/2 + (3+2)/2 = 4.5 GB-s over 2 s.
  EXPECT_DOUBLE_EQ(m.avg_memory_per_worker_bytes(), 2.25e9);
  AddWindowedWorkerMetrics(tracking, Window(0, 2), &m);
  EXPECT_DOUBLE_EQ(m.avg_memory_per_worker_time_weighted_bytes(), 2.25e9);
  EXPECT_DOUBLE_EQ(m.avg_cluster_memory_bytes(), 2.25e9);  // not 2 x 2.25e9
  EXPECT_DOUBLE_EQ(m.core_seconds(), 4.0);                 // cores are per thread
  // Separate processes (the flag unset) sum: the cluster holds both.
  tracking.set_workers_share_process(false);
  v1::WorkerMetrics separate = ComputeWorkerMetrics(tracking);
  EXPECT_FALSE(separate.memory_is_process_wide());
  EXPECT_EQ(separate.threads_sharing_memory(), 0);
  AddWindowedWorkerMetrics(tracking, Window(0, 2), &separate);
  EXPECT_DOUBLE_EQ(separate.avg_cluster_memory_bytes(), 4.5e9);
}

TEST(WorkerMetricsTest, ProcessWideMemorySampledAtDifferentInstantsPerThread) {
  v1::TrackingData tracking;
  tracking.set_workers_share_process(true);
  AddWorker(tracking, "t0", {0, 2}, {1e9, 1e9}, {});
  AddWorker(tracking, "t1", {1, 3}, {3e9, 3e9}, {});
  v1::WorkerMetrics m = ComputeWorkerMetrics(tracking);
  // One series 1, 3, 1, 3 GB at 0..3 s: 2 GB on average over 3 s.
  EXPECT_DOUBLE_EQ(m.avg_memory_per_worker_bytes(), 2e9);
  EXPECT_DOUBLE_EQ(m.peak_memory_bytes(), 3e9);
  AddWindowedWorkerMetrics(tracking, Window(0, 4), &m);
  EXPECT_DOUBLE_EQ(m.avg_memory_per_worker_time_weighted_bytes(), 2e9);
  EXPECT_DOUBLE_EQ(m.avg_cluster_memory_bytes(), 6e9 / 4);  // sampled over 3 s of 4
}

// Aggregate's one pass over the series gives what the two steps give, bit for bit, for series
// in and out of order, of both kinds, reduced or not, shared by a process or not, and windows
// that hold every sample or cut the series.
TEST(WorkerMetricsTest, OverWindowIsTheTwoStepsBitForBit) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> value(0, 4e9);
  for (int trial = 0; trial < 40; ++trial) {
    v1::TrackingData tracking;
    tracking.set_interval_seconds(trial % 3 == 0 ? 0.0 : 1.0);
    tracking.set_workers_share_process(trial % 4 == 1);
    AddCounts(tracking, {{0, 1}, {5, 3}, {9.5, 2}});
    for (int w = 0; w < 5; ++w) {
      std::vector<double> seconds, memory, cores;
      const int samples = static_cast<int>(rng() % 700);
      for (int i = 0; i < samples; ++i) {
        seconds.push_back(0.7 + 0.013 * i + (w == 2 ? 0.5 : 0));
        memory.push_back(value(rng));
        cores.push_back(static_cast<double>(1 + rng() % 8));
      }
      if (trial % 5 == 2 && samples > 3) std::swap(seconds[1], seconds[samples - 2]);
      if (trial % 7 == 3 && samples > 3) seconds[2] = seconds[1];  // two samples at one instant
      v1::WorkerSeries& worker = AddWorker(tracking, "w" + std::to_string(w % 4), seconds,
                                           w == 3 ? std::vector<double>{} : memory,
                                           w == 4 ? std::vector<double>{} : cores);
      if (trial % 2 == 1) worker.set_kind(v1::SERIES_KIND_STEP);
      if (w == 1) worker.set_max_memory_bytes(5e9);
    }
    for (const TimeWindow& window : {Window(0, 10), Window(2, 6), Window(0.7, 20), Window(3, 3)}) {
      v1::WorkerMetrics two_steps = ComputeWorkerMetrics(tracking);
      const auto by_worker = AddWindowedWorkerMetrics(tracking, window, &two_steps);
      const WorkerMetricsOverWindow one_pass = ComputeWorkerMetricsOverWindow(tracking, window);
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(one_pass.metrics, two_steps))
          << "trial " << trial << "\n"
          << one_pass.metrics.DebugString() << "\nvs\n"
          << two_steps.DebugString();
      EXPECT_EQ(one_pass.core_seconds_by_worker, by_worker) << "trial " << trial;
    }
  }
}

// The peak is found in every position (the maximum is taken in four lanes).
TEST(WorkerMetricsTest, PeakMemoryInAnyPosition) {
  for (int size = 1; size <= 11; ++size) {
    for (int at = 0; at < size; ++at) {
      v1::TrackingData tracking;
      std::vector<double> seconds, memory;
      for (int i = 0; i < size; ++i) {
        seconds.push_back(i);
        memory.push_back(i == at ? 7e9 : 1e9 + i);
      }
      AddWorker(tracking, "w", seconds, memory, {});
      EXPECT_EQ(ComputeWorkerMetrics(tracking).peak_memory_bytes(), 7e9) << size << " " << at;
    }
  }
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
