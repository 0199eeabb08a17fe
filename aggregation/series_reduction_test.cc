#include "aggregation/series_reduction.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "aggregation/worker_metrics.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using aggregation_internal::AddWindowedWorkerMetrics;
using aggregation_internal::ComputeWorkerMetrics;
using aggregation_internal::TimeWindow;
using google::protobuf::FieldDescriptor;

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kStart = 1'765'000'000 * kSecond;

// `samples` polls about every 0.25 s (jittered), values random walks; a few STEP-like plateaus.
v1::WorkerSeries RandomSeries(std::mt19937_64& rng, const std::string& name, int samples,
                              v1::SeriesKind kind, int64_t first_ns) {
  std::uniform_int_distribution<int64_t> gap(kSecond / 8, kSecond / 2);
  std::uniform_real_distribution<double> step(-1, 1);
  v1::WorkerSeries series;
  series.set_worker(name);
  series.set_kind(kind);
  int64_t t = first_ns;
  double memory = 2e9, cpu = 50;
  for (int i = 0; i < samples; ++i) {
    series.add_time_unix_ns(t);
    // STEP: some changes share an instant (successive changes).
    if (kind != v1::SERIES_KIND_STEP || i % 7 != 3) t += gap(rng);
    memory = std::max(1e6, memory + 1e8 * step(rng));
    cpu = std::max(0.0, cpu + 10 * step(rng));
    series.add_memory_bytes(memory);
    series.add_cpu_percent(cpu);
    series.add_cores(i % 50 < 40 ? 4 : 8);
  }
  return series;
}

v1::TrackingData RandomTracking(uint64_t seed, int workers, int samples, v1::SeriesKind kind) {
  std::mt19937_64 rng(seed);
  v1::TrackingData tracking;
  tracking.set_interval_seconds(0.25);
  for (int w = 0; w < workers; ++w) {
    *tracking.add_workers() = RandomSeries(rng, "w" + std::to_string(w), samples + 37 * w, kind,
                                           kStart + w * (kSecond / 3));
  }
  for (int i = 0; i < 10; ++i) {
    tracking.add_worker_count_time_unix_ns(kStart + i * 60 * kSecond);
    tracking.add_worker_count(workers);
  }
  return tracking;
}

// Every figure of the worker metrics (the original's and the windowed ones) over `window`.
v1::WorkerMetrics Figures(const v1::TrackingData& tracking, const TimeWindow& window) {
  v1::WorkerMetrics metrics = ComputeWorkerMetrics(tracking);
  AddWindowedWorkerMetrics(tracking, window, &metrics);
  return metrics;
}

// Every number field of the two is set alike and equal to `relative`.
void ExpectSameFigures(const v1::WorkerMetrics& whole, const v1::WorkerMetrics& reduced,
                       double relative = 1e-12) {
  const google::protobuf::Reflection* reflection = whole.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(whole, &fields);
  std::vector<const FieldDescriptor*> reduced_fields;
  reflection->ListFields(reduced, &reduced_fields);
  ASSERT_EQ(fields, reduced_fields);
  ASSERT_GE(fields.size(), 10u);
  for (const FieldDescriptor* field : fields) {
    double a = 0, b = 0;
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
      a = reflection->GetDouble(whole, field);
      b = reflection->GetDouble(reduced, field);
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_INT32) {
      a = reflection->GetInt32(whole, field);
      b = reflection->GetInt32(reduced, field);
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_BOOL) {
      a = reflection->GetBool(whole, field);
      b = reflection->GetBool(reduced, field);
    } else {
      continue;
    }
    EXPECT_NEAR(a, b, relative * std::abs(a)) << field->name();
  }
}

int MostSamples(const v1::TrackingData& tracking) {
  int most = 0;
  for (const v1::WorkerSeries& s : tracking.workers()) most = std::max(most, s.time_unix_ns_size());
  return most;
}

TimeWindow Around(const v1::TrackingData& tracking, int64_t before, int64_t after) {
  const TimeWindow samples = aggregation_internal::SampleWindow(tracking);
  return {samples.start_unix_ns - before, samples.end_unix_ns + after};
}

class ReductionExactTest : public ::testing::TestWithParam<v1::SeriesKind> {};

TEST_P(ReductionExactTest, RandomSeriesKeepEveryFigure) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const v1::TrackingData whole = RandomTracking(seed, 5, 3000, GetParam());
    v1::TrackingData reduced = whole;
    EXPECT_EQ(ReduceTracking(256, {}, &reduced), 5);
    EXPECT_LE(MostSamples(reduced), 128);
    EXPECT_EQ(reduced.workers(0).samples_before_reduction(), 3000);
    // The run's window around the samples; within 1.5 intervals of them (edge held) too.
    for (const TimeWindow& window :
         {Around(whole, 10 * kSecond, 20 * kSecond), Around(whole, kSecond / 4, kSecond / 5)}) {
      SCOPED_TRACE(seed);
      ExpectSameFigures(Figures(whole, window), Figures(reduced, window));
    }
  }
}

TEST_P(ReductionExactTest, AProtectedWindowInsideTheSamplesStaysExact) {
  const v1::TrackingData whole = RandomTracking(7, 3, 4000, GetParam());
  const TimeWindow window{kStart + 123 * kSecond + 4567, kStart + 611 * kSecond + 89};
  v1::TrackingData reduced = whole;
  ReduceTracking(200, {window.start_unix_ns, window.end_unix_ns}, &reduced);
  EXPECT_LE(MostSamples(reduced), 100 + 2 * 6);
  ExpectSameFigures(Figures(whole, window), Figures(reduced, window));
}

TEST_P(ReductionExactTest, ReducingAsSegmentsArriveStaysExactAndBounded) {
  // As the checkpoint join does: append a segment, reduce past the budget, again and again.
  const v1::TrackingData whole = RandomTracking(11, 2, 20000, GetParam());
  v1::TrackingData growing = whole;
  for (v1::WorkerSeries& series : *growing.mutable_workers()) {
    series.clear_time_unix_ns();
    series.clear_memory_bytes();
    series.clear_cpu_percent();
    series.clear_cores();
  }
  for (int w = 0; w < whole.workers_size(); ++w) {
    const v1::WorkerSeries& from = whole.workers(w);
    v1::WorkerSeries& into = *growing.mutable_workers(w);
    int appended = 0;
    for (int i = 0; i < from.time_unix_ns_size(); ++i) {
      into.add_time_unix_ns(from.time_unix_ns(i));
      into.add_memory_bytes(from.memory_bytes(i));
      into.add_cpu_percent(from.cpu_percent(i));
      into.add_cores(from.cores(i));
      ++appended;
      if (i % 120 == 119) {
        if (into.samples_before_reduction() > 0) {
          into.set_samples_before_reduction(into.samples_before_reduction() + appended);
          appended = 0;
        }
        if (ReduceWorkerSeries(512, {}, &into)) appended = 0;
        ASSERT_LE(into.time_unix_ns_size(), 512);
      }
    }
    into.set_samples_before_reduction(into.samples_before_reduction() + appended);
    EXPECT_EQ(into.samples_before_reduction(), from.time_unix_ns_size());
  }
  const TimeWindow window = Around(whole, kSecond, kSecond);
  ExpectSameFigures(Figures(whole, window), Figures(growing, window));
}

INSTANTIATE_TEST_SUITE_P(Kinds, ReductionExactTest,
                         ::testing::Values(v1::SERIES_KIND_SAMPLED, v1::SERIES_KIND_STEP));

TEST(ReductionTest, ThreadsOfOneProcessKeepTheProcessMemory) {
  // The thread pool samples every thread at once: identical times, the process's memory.
  v1::TrackingData whole = RandomTracking(3, 1, 5000, v1::SERIES_KIND_SAMPLED);
  whole.set_workers_share_process(true);
  for (int w = 1; w < 4; ++w) {
    v1::WorkerSeries& thread = *whole.add_workers();
    thread = whole.workers(0);
    thread.set_worker("thread" + std::to_string(w));
  }
  v1::TrackingData reduced = whole;
  EXPECT_EQ(ReduceTracking(300, {}, &reduced), 4);
  const TimeWindow window = Around(whole, kSecond, kSecond);
  ExpectSameFigures(Figures(whole, window), Figures(reduced, window));
}

TEST(ReductionTest, StepSeriesCanBeLeftWhole) {
  v1::TrackingData tracking = RandomTracking(23, 2, 600, v1::SERIES_KIND_STEP);
  const std::string before = tracking.SerializeAsString();
  EXPECT_EQ(ReduceTracking(64, {}, &tracking, /*step_series_too=*/false), 0);
  EXPECT_EQ(tracking.SerializeAsString(), before);
  EXPECT_EQ(ReduceTracking(64, {}, &tracking), 2);
}

TEST(ReductionTest, UnderTheBudgetNothingChanges) {
  const v1::TrackingData whole = RandomTracking(5, 2, 100, v1::SERIES_KIND_SAMPLED);
  v1::TrackingData same = whole;
  EXPECT_EQ(ReduceTracking(1024, {}, &same), 0);
  EXPECT_EQ(ReduceTracking(0, {}, &same), 0);  // no limit
  EXPECT_EQ(same.SerializeAsString(), whole.SerializeAsString());
}

TEST(ReductionTest, PeakMemoryIsKeptApart) {
  v1::TrackingData whole = RandomTracking(9, 1, 2000, v1::SERIES_KIND_SAMPLED);
  whole.mutable_workers(0)->set_memory_bytes(1000, 9e12);  // one spike inside a block
  v1::TrackingData reduced = whole;
  ReduceTracking(64, {}, &reduced);
  double sampled_peak = 0;
  for (double bytes : reduced.workers(0).memory_bytes())
    sampled_peak = std::max(sampled_peak, bytes);
  EXPECT_LT(sampled_peak, 9e12);  // the spike is no sample any more...
  EXPECT_EQ(reduced.workers(0).max_memory_bytes(), 9e12);
  EXPECT_EQ(ComputeWorkerMetrics(reduced).peak_memory_bytes(), 9e12);  // ...but still the peak
}

TEST(ReductionTest, OutOfOrderAndDuplicateSamplesReadAsTheIntegralsReadThem) {
  v1::TrackingData whole = RandomTracking(13, 1, 3000, v1::SERIES_KIND_SAMPLED);
  v1::WorkerSeries& series = *whole.mutable_workers(0);
  std::swap(*series.mutable_time_unix_ns()->Mutable(10),
            *series.mutable_time_unix_ns()->Mutable(20));
  series.set_time_unix_ns(500, series.time_unix_ns(499));  // a duplicate instant
  v1::TrackingData reduced = whole;
  ReduceTracking(128, {}, &reduced);
  const TimeWindow window = Around(whole, kSecond, kSecond);
  ExpectSameFigures(Figures(whole, window), Figures(reduced, window));
}

TEST(ReductionTest, BadColumnsAreLeftAlone) {
  v1::TrackingData tracking = RandomTracking(17, 1, 500, v1::SERIES_KIND_SAMPLED);
  tracking.mutable_workers(0)->add_cores(4);  // one value too many
  const std::string before = tracking.SerializeAsString();
  EXPECT_EQ(ReduceTracking(64, {}, &tracking), 0);
  EXPECT_EQ(tracking.SerializeAsString(), before);
}

TEST(ReductionTest, NonFiniteValuesStayWhereTheyAre) {
  v1::TrackingData tracking = RandomTracking(19, 1, 500, v1::SERIES_KIND_SAMPLED);
  tracking.mutable_workers(0)->set_cpu_percent(250, std::numeric_limits<double>::quiet_NaN());
  const int64_t nan_time = tracking.workers(0).time_unix_ns(250);
  ASSERT_TRUE(ReduceWorkerSeries(64, {}, tracking.mutable_workers(0)));
  const v1::WorkerSeries& reduced = tracking.workers(0);
  bool kept = false;
  for (int i = 0; i < reduced.time_unix_ns_size(); ++i) {
    if (reduced.time_unix_ns(i) == nan_time) kept = std::isnan(reduced.cpu_percent(i));
  }
  EXPECT_TRUE(kept);
}

// A step series whose cores are stored once (schema/worker_series_columns.h) is reduced as
// the same series with its cores at every point.
TEST(ReductionTest, ColumnsStoredOnceAreReducedAsAtEveryPoint) {
  v1::TrackingData every = RandomTracking(29, 1, 600, v1::SERIES_KIND_STEP);
  v1::WorkerSeries& series = *every.mutable_workers(0);
  series.clear_cores();
  for (int i = 0; i < series.time_unix_ns_size(); ++i) series.add_cores(8);
  v1::TrackingData once = every;
  once.mutable_workers(0)->mutable_cores()->Truncate(1);
  EXPECT_EQ(ReduceTracking(64, {}, &every), 1);
  EXPECT_EQ(ReduceTracking(64, {}, &once), 1);
  EXPECT_EQ(once.SerializeAsString(), every.SerializeAsString());
}

}  // namespace
}  // namespace roastcoffea
