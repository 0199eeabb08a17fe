#include "backends/threadpool/threadpool_backend.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "backends/threadpool/executor.h"
#include "backends/threadpool/test_gate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host/fake_clock.h"
#include "instrumentation/chunk_tracking.h"
#include "instrumentation/sections.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::unique_ptr<ThreadPoolExecutor> MakeExecutor(int threads) {
  absl::StatusOr<std::unique_ptr<ThreadPoolExecutor>> executor =
      ThreadPoolExecutor::Create({threads});
  EXPECT_TRUE(executor.ok()) << executor.status();
  return executor.ok() ? std::move(*executor) : nullptr;
}

double ThreadCpuNow() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// Burns `seconds` of this thread's CPU time and returns the CPU time actually used.
double SpinCpu(double seconds) {
  const double start = ThreadCpuNow();
  volatile int64_t sink = 0;
  double now = start;
  while (now - start < seconds) {
    for (int i = 0; i < 10000; ++i) sink = sink + i;
    now = ThreadCpuNow();
  }
  return now - start;
}

std::string ExpectedWorkerPrefix() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return std::string(host) + ":" + std::to_string(getpid()) + "/thread-";
}

void ExpectColumnsConsistent(const v1::TrackingData& data) {
  const int samples = data.worker_count_time_unix_ns_size();
  EXPECT_EQ(data.worker_count_size(), samples);
  EXPECT_EQ(data.queued_chunks_size(), samples);
  for (const v1::WorkerSeries& series : data.workers()) {
    const int n = series.time_unix_ns_size();
    EXPECT_EQ(series.cores_size(), n) << series.worker();
    EXPECT_EQ(series.cpu_percent_size(), n) << series.worker();
    EXPECT_EQ(series.memory_bytes_size(), n) << series.worker();
    EXPECT_EQ(series.memory_limit_bytes_size(), n) << series.worker();
    EXPECT_EQ(series.executing_tasks_size(), n) << series.worker();
    EXPECT_EQ(series.active_tasks_size(), n) << series.worker();
    // Not measured in process: empty columns.
    EXPECT_EQ(series.occupancy_seconds_size(), 0);
    EXPECT_EQ(series.managed_bytes_size(), 0);
    for (int i = 1; i < n; ++i) EXPECT_GE(series.time_unix_ns(i), series.time_unix_ns(i - 1));
  }
}

TEST(ThreadPoolMetricsBackendTest, NameAndCapabilities) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(1);
  ASSERT_NE(executor, nullptr);
  ThreadPoolMetricsBackend backend(executor.get());
  EXPECT_EQ(backend.name(), "threadpool");
}

// The live view (#26): the threads now, one core each, and the process's memory, from the
// first sample on; nothing before tracking.
TEST(ThreadPoolMetricsBackendTest, LiveProgressHasTheThreadsAndTheProcessMemory) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(3);
  ThreadPoolMetricsBackend backend(executor.get());
  EXPECT_FALSE(backend.LiveProgress().has_value());
  ASSERT_TRUE(backend.StartTracking(absl::Seconds(60)).ok());
  const std::optional<BackendLiveProgress> live = backend.LiveProgress();
  ASSERT_TRUE(live.has_value());
  EXPECT_EQ(live->workers, 3);
  EXPECT_EQ(live->cores, 3);
  EXPECT_GT(live->memory_bytes.value_or(0), 1e6);
  EXPECT_TRUE(live->tasks_by_prefix.empty()) << "chunks are the session's own records";
  ASSERT_TRUE(backend.StopTracking().ok());
}

TEST(ThreadPoolMetricsBackendTest, TrackingErrors) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(1);
  ASSERT_NE(executor, nullptr);
  ThreadPoolMetricsBackend backend(executor.get());

  absl::StatusOr<v1::TrackingData> not_started = backend.StopTracking();
  EXPECT_EQ(not_started.status().code(), absl::StatusCode::kFailedPrecondition);

  absl::Status zero = backend.StartTracking(absl::ZeroDuration());
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(zero.message(), HasSubstr("0"));
  absl::Status negative = backend.StartTracking(absl::Seconds(-2));
  EXPECT_EQ(negative.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(negative.message(), HasSubstr("-2s"));
  EXPECT_EQ(backend.StartTracking(absl::InfiniteDuration()).code(),
            absl::StatusCode::kInvalidArgument);

  ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(5)).ok());
  absl::Status twice = backend.StartTracking(absl::Milliseconds(5));
  EXPECT_EQ(twice.code(), absl::StatusCode::kFailedPrecondition);
  absl::StatusOr<v1::TrackingData> data = backend.StopTracking();
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(backend.StopTracking().status().code(), absl::StatusCode::kFailedPrecondition);

  // Tracking can start again, with fresh data.
  ASSERT_TRUE(backend.StartTracking(absl::Seconds(60)).ok());
  absl::StatusOr<v1::TrackingData> second = backend.StopTracking();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->worker_count_size(), 2);
  EXPECT_EQ(second->workers(0).time_unix_ns_size(), 2);
  // Samples of threads of this one process: memory_bytes is the process's, counted once.
  EXPECT_TRUE(second->workers_share_process());
  EXPECT_EQ(second->worker_count_kind(), v1::SERIES_KIND_SAMPLED);
  EXPECT_EQ(second->workers(0).kind(), v1::SERIES_KIND_SAMPLED);
}

// The session hands each segment to its checkpoint: the samples are taken once, in order.
TEST(ThreadPoolMetricsBackendTest, TrackingSegmentsHandTheSamplesOutOnce) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(2);
  ThreadPoolMetricsBackend backend(executor.get());
  EXPECT_FALSE(backend.TakeTrackingSegment().has_value());  // not tracking
  // A long interval: the first sample (StartTracking) and the last (StopTracking) only.
  ASSERT_TRUE(backend.StartTracking(absl::Seconds(3600)).ok());
  std::optional<v1::TrackingData> first = backend.TakeTrackingSegment();
  ASSERT_TRUE(first.has_value());
  ExpectColumnsConsistent(*first);
  EXPECT_EQ(first->backend(), "threadpool");
  EXPECT_TRUE(first->workers_share_process());
  EXPECT_EQ(first->worker_count_size(), 1);
  ASSERT_EQ(first->workers_size(), 2);
  EXPECT_EQ(first->workers(0).time_unix_ns_size(), 1);

  std::optional<v1::TrackingData> none = backend.TakeTrackingSegment();
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->worker_count_size(), 0);
  EXPECT_EQ(none->workers_size(), 0);
  EXPECT_EQ(none->interval_seconds(), 3600);

  absl::StatusOr<v1::TrackingData> rest = backend.StopTracking();
  ASSERT_TRUE(rest.ok()) << rest.status();
  ExpectColumnsConsistent(*rest);
  EXPECT_EQ(rest->worker_count_size(), 1);
  ASSERT_EQ(rest->workers_size(), 2);
  EXPECT_EQ(rest->workers(0).worker(), first->workers(0).worker());  // joined by name
  EXPECT_EQ(rest->workers(0).time_unix_ns_size(), 1);
  EXPECT_GE(rest->workers(0).time_unix_ns(0), first->workers(0).time_unix_ns(0));
  EXPECT_FALSE(backend.TakeTrackingSegment().has_value());
}

TEST(ThreadPoolMetricsBackendTest, NullExecutorIsAnErrorNotACrash) {
  ThreadPoolMetricsBackend backend(nullptr);
  EXPECT_EQ(backend.StartTracking(absl::Seconds(1)).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(backend.CreateSpan("x").status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ThreadPoolMetricsBackendTest, DestroyingWhileTrackingStopsTheSampler) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(2);
  ASSERT_NE(executor, nullptr);
  {
    ThreadPoolMetricsBackend backend(executor.get());
    ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(1)).ok());
  }
  SUCCEED();
}

TEST(ThreadPoolMetricsBackendTest, TrackingABusyRun) {
  constexpr int kThreads = 2;
  constexpr int kItems = 8;
  constexpr double kCpuPerItem = 0.025;
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(kThreads);
  ASSERT_NE(executor, nullptr);
  ThreadPoolMetricsBackend backend(executor.get());

  ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(10)).ok());
  absl::StatusOr<double> cpu =
      executor->Map<double>(kItems, [&](size_t) { return SpinCpu(kCpuPerItem); });
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  absl::StatusOr<v1::TrackingData> data = backend.StopTracking();
  ASSERT_TRUE(data.ok()) << data.status();

  EXPECT_EQ(data->backend(), "threadpool");
  EXPECT_DOUBLE_EQ(data->interval_seconds(), 0.01);
  ASSERT_GE(data->worker_count_time_unix_ns_size(), 2);
  ExpectColumnsConsistent(*data);
  for (int count : data->worker_count()) EXPECT_EQ(count, kThreads);
  for (int queued : data->queued_chunks()) {
    EXPECT_GE(queued, 0);
    EXPECT_LE(queued, kItems);
  }
  // Sampled in UTC nanoseconds around now.
  const int64_t now_ns = absl::ToUnixNanos(absl::Now());
  EXPECT_LE(data->worker_count_time_unix_ns(0), now_ns);
  EXPECT_GT(data->worker_count_time_unix_ns(0), now_ns - int64_t{3600} * 1000000000);

  ASSERT_EQ(data->workers_size(), kThreads);
  const std::string prefix = ExpectedWorkerPrefix();
  double integrated_cpu_seconds = 0;
  for (int w = 0; w < kThreads; ++w) {
    const v1::WorkerSeries& series = data->workers(w);
    // Named by the thread_index its chunk records carry (several pools ran in this process).
    EXPECT_EQ(series.worker(), prefix + std::to_string(executor->ThreadIndexOf(w)));
    EXPECT_EQ(prefix.rfind(series.host() + ":", 0), 0u) << series.host();
    ASSERT_GE(series.time_unix_ns_size(), 2);
    for (int i = 0; i < series.time_unix_ns_size(); ++i) {
      EXPECT_EQ(series.cores(i), 1);
      EXPECT_GT(series.memory_bytes(i), 0);
      EXPECT_GT(series.memory_limit_bytes(i), 0);
      EXPECT_GE(series.cpu_percent(i), 0);
      EXPECT_LE(series.cpu_percent(i), 200);  // one thread; generous for clock-read jitter
      EXPECT_TRUE(series.executing_tasks(i) == 0 || series.executing_tasks(i) == 1);
      EXPECT_EQ(series.active_tasks(i), series.executing_tasks(i));
      if (i > 0) {
        integrated_cpu_seconds +=
            series.cpu_percent(i) / 100.0 *
            static_cast<double>(series.time_unix_ns(i) - series.time_unix_ns(i - 1)) * 1e-9;
      }
    }
    EXPECT_EQ(series.cpu_percent(0), 0);  // no previous reading yet
    // The last sample comes after the run: nothing executing.
    EXPECT_EQ(series.executing_tasks(series.executing_tasks_size() - 1), 0);
  }
  EXPECT_EQ(data->queued_chunks(data->queued_chunks_size() - 1), 0);
  // cpu_percent integrated over time gives back the CPU the work items burnt.
  EXPECT_GT(integrated_cpu_seconds, 0.8 * *cpu);
  EXPECT_LT(integrated_cpu_seconds, 1.25 * *cpu + 0.02);
  // Profiling is off by default.
  EXPECT_TRUE(backend.TakeProfiles({}).empty());
}

TEST(ThreadPoolMetricsBackendTest, ProfilesEachWorkerAndItsChunksWhenAsked) {
  if (absl::Status supported = SamplingProfiler::Supported(); !supported.ok()) {
    GTEST_SKIP() << supported;
  }
  constexpr int kThreads = 2;
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(kThreads);
  ASSERT_NE(executor, nullptr);
  ThreadPoolBackendOptions options;
  options.profile = true;
  options.profile_hz = 200;
  ThreadPoolMetricsBackend backend(executor.get(), options);
  ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(50)).ok());
  const auto tracked = TrackChunks([](const ChunkMetadata&) {
    ScopedTimer timer("spin");
    return SpinCpu(0.1);
  });
  absl::StatusOr<TrackedOutput<double>> output =
      executor->Map<TrackedOutput<double>>(6, [&](size_t i) {
        return tracked(ChunkMetadata{"ds", "f", "", static_cast<int64_t>(i) * 10,
                                     static_cast<int64_t>(i) * 10 + 10, 10});
      });
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_TRUE(backend.TakeProfiles({}).empty());  // still tracking: nothing yet
  ASSERT_TRUE(backend.StopTracking().ok());
  std::vector<v1::Profile> profiles = backend.TakeProfiles(ChunkTableOf(output->chunk_records));
  ASSERT_EQ(profiles.size(), kThreads + 1u);  // the workers, then section "spin"
  const std::string prefix = ExpectedWorkerPrefix();
  int64_t chunk_samples = 0;
  int64_t samples = 0;
  for (int w = 0; w < kThreads; ++w) {
    const v1::Profile& profile = profiles[static_cast<size_t>(w)];
    EXPECT_EQ(profile.worker(), prefix + std::to_string(executor->ThreadIndexOf(w)));
    EXPECT_EQ(profile.source(), "threadpool");
    EXPECT_DOUBLE_EQ(profile.sampling_interval_seconds(), 0.005);
    samples += profile.nodes(0).count();
    for (const v1::ProfileChunkSamples& chunk : profile.chunk_samples()) {
      EXPECT_EQ(chunk.dataset(), "ds");
      chunk_samples += chunk.samples();
    }
  }
  // 0.6 CPU-seconds of chunks at 200 Hz: about 120 samples, nearly all inside chunks.
  EXPECT_GT(samples, 80);
  EXPECT_LT(samples, 160);
  EXPECT_GT(chunk_samples, samples * 9 / 10);
  EXPECT_EQ(profiles[kThreads].section(), "spin");
  EXPECT_GT(profiles[kThreads].nodes(0).count(), samples * 9 / 10);
  EXPECT_TRUE(backend.TakeProfiles({}).empty());  // taken
}

TEST(ThreadPoolMetricsBackendTest, RejectsABadProfileRate) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(1);
  ASSERT_NE(executor, nullptr);
  ThreadPoolBackendOptions options;
  options.profile = true;
  options.profile_hz = 0;
  ThreadPoolMetricsBackend backend(executor.get(), options);
  const absl::Status status = backend.StartTracking(absl::Milliseconds(50));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("profile_hz"));
}

TEST(ThreadPoolMetricsBackendTest, FirstSampleSeesExecutingAndQueuedItems) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(2);
  ASSERT_NE(executor, nullptr);
  ThreadPoolMetricsBackend backend(executor.get());
  Gate gate;
  std::thread runner([&] {
    absl::StatusOr<int64_t> done = executor->Map<int64_t>(6, [&](size_t) -> int64_t {
      gate.Arrive();
      return 1;
    });
    EXPECT_EQ(done.value_or(0), 6);
  });
  gate.WaitForArrivals(2);
  // A long interval: only the first (StartTracking) and last (StopTracking) samples.
  ASSERT_TRUE(backend.StartTracking(absl::Seconds(3600)).ok());
  gate.Open();
  runner.join();
  absl::StatusOr<v1::TrackingData> data = backend.StopTracking();
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->worker_count_size(), 2);
  EXPECT_EQ(data->queued_chunks(0), 4);
  EXPECT_EQ(data->queued_chunks(1), 0);
  ASSERT_EQ(data->workers_size(), 2);
  for (const v1::WorkerSeries& series : data->workers()) {
    ASSERT_EQ(series.executing_tasks_size(), 2);
    EXPECT_EQ(series.executing_tasks(0), 1);
    EXPECT_EQ(series.active_tasks(0), 1);
    EXPECT_EQ(series.executing_tasks(1), 0);
  }
}

// Sums one activity's values over workers, checking every record's shape on the way.
std::map<std::string, double> SumByActivity(const v1::Span& span, const std::string& task_prefix) {
  std::map<std::string, double> sums;
  const std::string prefix = ExpectedWorkerPrefix();
  for (const v1::FineMetric& metric : span.metrics()) {
    EXPECT_EQ(metric.context(), "execute");
    EXPECT_EQ(metric.task_prefix(), task_prefix);
    EXPECT_THAT(metric.worker(), StartsWith(prefix));
    EXPECT_GE(metric.value(), 0) << metric.activity();
    const bool seconds = metric.activity() == "thread-cpu" ||
                         metric.activity() == "thread-noncpu" ||
                         metric.activity() == "thread-run-queue-wait";
    EXPECT_EQ(metric.unit(), seconds ? "seconds" : "bytes") << metric.activity();
    sums[metric.activity()] += metric.value();
  }
  return sums;
}

TEST(ThreadPoolMetricsBackendTest, SpanThreadCpuMatchesBusyCpu) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(2);
  ASSERT_NE(executor, nullptr);
  ThreadPoolMetricsBackend backend(executor.get(), {"JetAnalysisProcessor"});
  absl::StatusOr<SpanId> id = backend.CreateSpan("spin");
  ASSERT_TRUE(id.ok()) << id.status();
  absl::StatusOr<double> cpu = executor->Map<double>(6, [](size_t) { return SpinCpu(0.02); });
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  ASSERT_TRUE(backend.EndSpan(*id).ok());
  absl::StatusOr<v1::Span> span = backend.GetSpanMetrics(*id);
  ASSERT_TRUE(span.ok()) << span.status();

  EXPECT_EQ(span->name(), "spin");
  EXPECT_EQ(span->id(), *id);
  EXPECT_LE(span->start_unix_ns(), span->end_unix_ns());
  // Two workers, seven activities each (io and schedstat are readable for our own threads).
  EXPECT_EQ(span->metrics_size(), 2 * 7);
  std::map<std::string, double> sums = SumByActivity(*span, "JetAnalysisProcessor");
  EXPECT_GE(sums["thread-cpu"], *cpu - 1e-6);
  EXPECT_LE(sums["thread-cpu"], *cpu + 0.02);  // plus the threads' own bookkeeping
  EXPECT_EQ(sums.count("thread-noncpu"), 1u);
  EXPECT_EQ(sums.count("read"), 1u);
  EXPECT_EQ(sums.count("write"), 1u);
  EXPECT_EQ(sums.count("disk-read"), 1u);
  EXPECT_EQ(sums.count("disk-write"), 1u);
}

// The sampler's period runs on the injected clock: a first sample at start, one per interval
// the clock moves, a last one at stop; none while the clock stands still.
TEST(ThreadPoolMetricsBackendTest, SamplesOncePerIntervalOfTheInjectedClock) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(2);
  ASSERT_NE(executor, nullptr);
  FakeClock clock;
  ThreadPoolBackendOptions options;
  options.clock = &clock;
  ThreadPoolMetricsBackend backend(executor.get(), options);
  ASSERT_TRUE(backend.StartTracking(absl::Seconds(1)).ok());
  ASSERT_TRUE(clock.AdvanceInSteps(absl::Milliseconds(999)));  // not a period yet
  ASSERT_TRUE(clock.AdvanceInSteps(absl::Milliseconds(1)));
  ASSERT_TRUE(clock.AdvanceInSteps(absl::Seconds(1), 2));
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  ASSERT_TRUE(tracking.ok()) << tracking.status();
  EXPECT_EQ(tracking->worker_count_size(), 1 + 3 + 1);
}

TEST(ThreadPoolMetricsBackendTest, SpanThreadNonCpuGrowsWithASleep) {
  constexpr int kItems = 4;
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(2);
  ASSERT_NE(executor, nullptr);
  ThreadPoolMetricsBackend backend(executor.get());
  absl::StatusOr<SpanId> id = backend.CreateSpan("sleepy");
  ASSERT_TRUE(id.ok()) << id.status();
  absl::StatusOr<int64_t> done = executor->Map<int64_t>(kItems, [](size_t) -> int64_t {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    return 1;
  });
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_TRUE(backend.EndSpan(*id).ok());
  absl::StatusOr<v1::Span> span = backend.GetSpanMetrics(*id);
  ASSERT_TRUE(span.ok()) << span.status();
  std::map<std::string, double> sums = SumByActivity(*span, "processor");
  // Each item slept at least 30 ms off the CPU.
  EXPECT_GE(sums["thread-noncpu"], kItems * 0.030 - sums["thread-cpu"]);
  EXPECT_GE(sums["thread-noncpu"], kItems * 0.025);
  // Sleeping is blocked time, not waiting for a CPU: the run-queue part stays a part.
  ASSERT_EQ(sums.count("thread-run-queue-wait"), 1u);
  EXPECT_LE(sums["thread-run-queue-wait"], sums["thread-noncpu"]);
  EXPECT_LT(sums["thread-run-queue-wait"], kItems * 0.025);
}

TEST(ThreadPoolMetricsBackendTest, SpanCountsBytesReadAndWritten) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(1);
  ASSERT_NE(executor, nullptr);
  const char* tmpdir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmpdir != nullptr ? tmpdir : "/tmp") + "/span_io_test.bin";
  constexpr size_t kBytes = 64 * 1024;
  ThreadPoolMetricsBackend backend(executor.get());
  absl::StatusOr<SpanId> id = backend.CreateSpan("io");
  ASSERT_TRUE(id.ok()) << id.status();
  absl::StatusOr<int64_t> done = executor->Map<int64_t>(1, [&](size_t) -> int64_t {
    {
      std::ofstream out(path, std::ios::binary);
      out << std::string(kBytes, 'x');
    }
    std::ifstream in(path, std::ios::binary);
    std::string back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return static_cast<int64_t>(back.size());
  });
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(*done, static_cast<int64_t>(kBytes));
  ASSERT_TRUE(backend.EndSpan(*id).ok());
  absl::StatusOr<v1::Span> span = backend.GetSpanMetrics(*id);
  ASSERT_TRUE(span.ok()) << span.status();
  std::map<std::string, double> sums = SumByActivity(*span, "processor");
  EXPECT_GE(sums["write"], static_cast<double>(kBytes));
  EXPECT_GE(sums["read"], static_cast<double>(kBytes));
}

TEST(ThreadPoolMetricsBackendTest, SpanErrors) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(1);
  ASSERT_NE(executor, nullptr);
  ThreadPoolMetricsBackend backend(executor.get());

  absl::StatusOr<SpanId> empty = backend.CreateSpan("");
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);

  absl::Status unknown_end = backend.EndSpan("no-such-span");
  EXPECT_EQ(unknown_end.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(unknown_end.message(), HasSubstr("no-such-span"));
  absl::StatusOr<v1::Span> unknown_get = backend.GetSpanMetrics("no-such-span");
  EXPECT_EQ(unknown_get.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(unknown_get.status().message(), HasSubstr("no-such-span"));

  absl::StatusOr<SpanId> id = backend.CreateSpan("open");
  ASSERT_TRUE(id.ok()) << id.status();
  absl::StatusOr<v1::Span> too_early = backend.GetSpanMetrics(*id);
  EXPECT_EQ(too_early.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(too_early.status().message(), HasSubstr(*id));
  ASSERT_TRUE(backend.EndSpan(*id).ok());
  absl::Status twice = backend.EndSpan(*id);
  EXPECT_EQ(twice.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(backend.GetSpanMetrics(*id).ok());

  // Ids are distinct.
  absl::StatusOr<SpanId> other = backend.CreateSpan("open");
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*other, *id);
}

}  // namespace
}  // namespace roastcoffea
