#include "backends/threadpool/threadpool_backend.h"

#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "backends/threadpool/proc_stats.h"
#include "host/host_name.h"
#include "schema/chunk_table.h"

namespace roastcoffea {
namespace {

// Part of thread-noncpu: the same name in aggregation/fine_metrics.cc.
constexpr char kRunQueueWaitActivity[] = "thread-run-queue-wait";

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// CPU seconds of a worker: the executor's thread clock, else /proc (schedstat nanoseconds, else
// stat clock ticks), else 0.
double CpuSecondsOf(const WorkerThreadSnapshot& worker) {
  if (worker.cpu_seconds >= 0) return worker.cpu_seconds;
  absl::StatusOr<double> from_proc = threadpool_internal::ReadTaskCpuSeconds(worker.tid);
  return from_proc.ok() ? *from_proc : 0.0;
}

void AddMetric(v1::Span& span, const std::string& context, const std::string& task_prefix,
               const char* activity, const char* unit, double value, const std::string& worker) {
  v1::FineMetric* metric = span.add_metrics();
  metric->set_context(context);
  metric->set_task_prefix(task_prefix);
  metric->set_activity(activity);
  metric->set_unit(unit);
  metric->set_value(value);
  metric->set_worker(worker);
}

}  // namespace

ThreadPoolMetricsBackend::ThreadPoolMetricsBackend(const ThreadPoolExecutor* executor,
                                                   ThreadPoolBackendOptions options)
    : executor_(executor),
      options_(std::move(options)),
      host_(HostName()),
      worker_prefix_(absl::StrCat(host_, ":", getpid(), "/thread-")) {}

ThreadPoolMetricsBackend::~ThreadPoolMetricsBackend() { sampler_.Stop(); }

std::string ThreadPoolMetricsBackend::WorkerName(int index) const {
  // The chunk records' thread_index of that worker, so that series, profiles and records of
  // one thread carry one name.
  return absl::StrCat(worker_prefix_,
                      executor_ != nullptr ? executor_->ThreadIndexOf(index) : int64_t{index});
}

absl::Status ThreadPoolMetricsBackend::StartTracking(absl::Duration interval) {
  if (absl::Status valid = backends_internal::CheckPeriod(interval, "tracking interval");
      !valid.ok()) {
    return valid;
  }
  if (executor_ == nullptr) {
    return absl::FailedPreconditionError("ThreadPoolMetricsBackend has no executor (null)");
  }
  if (tracking_on_) {
    return absl::FailedPreconditionError("tracking already started; call StopTracking first");
  }
  if (options_.profile) {
    if (options_.profile_hz < 1 || options_.profile_hz > SamplingProfiler::kMaxHz) {
      return absl::InvalidArgumentError(absl::StrCat(
          "profile_hz must be in [1, ", SamplingProfiler::kMaxHz, "], got ", options_.profile_hz));
    }
    std::vector<ProfiledThread> threads;
    for (const WorkerThreadSnapshot& worker : executor_->Snapshot().workers) {
      threads.push_back(ProfiledThread{worker.tid, WorkerName(worker.index)});
    }
    SamplingProfilerOptions profiler_options;
    profiler_options.hz = options_.profile_hz;
    profiler_.reset();
    absl::StatusOr<std::unique_ptr<SamplingProfiler>> profiler =
        SamplingProfiler::Start(std::move(threads), profiler_options);
    if (!profiler.ok()) return profiler.status();
    profiler_ = *std::move(profiler);
  }
  {
    std::lock_guard<std::mutex> lock(tracking_mu_);
    ResetTrackingLocked(absl::ToDoubleSeconds(interval));
  }
  last_cpu_.clear();
  // Limits rarely change during a run: read once.
  memory_limit_bytes_ = threadpool_internal::MemoryLimitBytes();
  Sample();
  backends_internal::PeriodicThreadOptions sampling;
  sampling.period = interval;
  sampling.clock = options_.clock;
  absl::Status started = sampler_.Start(sampling, [this] { Sample(); });
  if (!started.ok()) {
    profiler_.reset();
    return started;
  }
  tracking_on_ = true;
  return absl::OkStatus();
}

absl::StatusOr<v1::TrackingData> ThreadPoolMetricsBackend::StopTracking() {
  if (!tracking_on_) {
    return absl::FailedPreconditionError("tracking not started; call StartTracking first");
  }
  sampler_.Stop();
  if (profiler_ != nullptr) profiler_->Stop();
  tracking_on_ = false;
  Sample();
  std::lock_guard<std::mutex> lock(tracking_mu_);
  v1::TrackingData result = std::move(tracking_);
  tracking_.Clear();
  series_by_tid_.clear();
  return result;
}

void ThreadPoolMetricsBackend::ResetTrackingLocked(double interval_seconds) {
  tracking_.Clear();
  tracking_.set_backend(std::string(name()));
  tracking_.set_interval_seconds(interval_seconds);
  tracking_.set_worker_count_kind(v1::SERIES_KIND_SAMPLED);
  // Every worker series is a thread of this process; memory_bytes is the process's RSS.
  tracking_.set_workers_share_process(true);
  series_by_tid_.clear();
}

std::optional<v1::TrackingData> ThreadPoolMetricsBackend::TakeTrackingSegment() {
  if (!tracking_on_) return std::nullopt;
  std::lock_guard<std::mutex> lock(tracking_mu_);
  v1::TrackingData segment = std::move(tracking_);
  // The next samples start new series, named as before (the join matches them by name).
  ResetTrackingLocked(segment.interval_seconds());
  return segment;
}

std::vector<v1::Profile> ThreadPoolMetricsBackend::TakeProfiles(const ChunkTable& chunks) {
  if (profiler_ == nullptr || profiler_->running()) return {};
  // Only a profiled run pays for records: the profiler attributes samples to them.
  absl::StatusOr<std::vector<v1::Profile>> profiles =
      profiler_->BuildProfiles(RecordsOf(chunks), host_);
  profiler_.reset();
  if (!profiles.ok()) return {};
  return *std::move(profiles);
}

void ThreadPoolMetricsBackend::Sample() {
  const ExecutorSnapshot snapshot = executor_->Snapshot();
  const int64_t now_unix_ns = absl::ToUnixNanos(absl::Now());
  const int64_t now_steady_ns = SteadyNowNs();
  absl::StatusOr<int64_t> rss = threadpool_internal::ReadResidentBytes();

  std::lock_guard<std::mutex> tracking_lock(tracking_mu_);
  tracking_.add_worker_count_time_unix_ns(now_unix_ns);
  tracking_.add_worker_count(snapshot.worker_threads);
  tracking_.add_queued_chunks(snapshot.queued);

  for (const WorkerThreadSnapshot& worker : snapshot.workers) {
    auto [it, inserted] = series_by_tid_.emplace(worker.tid, tracking_.workers_size());
    if (inserted) {
      v1::WorkerSeries* series = tracking_.add_workers();
      series->set_worker(WorkerName(worker.index));
      series->set_host(host_);
      series->set_kind(v1::SERIES_KIND_SAMPLED);
    }
    v1::WorkerSeries& series = *tracking_.mutable_workers(it->second);

    const double cpu_seconds = CpuSecondsOf(worker);
    double cpu_percent = 0;  // no previous reading: like psutil's first cpu_percent()
    auto previous = last_cpu_.find(worker.tid);
    if (previous != last_cpu_.end()) {
      const double wall_seconds =
          static_cast<double>(now_steady_ns - previous->second.steady_ns) * 1e-9;
      if (wall_seconds > 0) {
        cpu_percent =
            std::max(0.0, 100.0 * (cpu_seconds - previous->second.cpu_seconds) / wall_seconds);
      }
    }
    last_cpu_[worker.tid] = CpuReading{cpu_seconds, now_steady_ns};

    const double executing = worker.executing ? 1 : 0;
    series.add_time_unix_ns(now_unix_ns);
    series.add_cores(1);
    series.add_cpu_percent(cpu_percent);
    series.add_memory_bytes(rss.ok() ? static_cast<double>(*rss) : 0.0);
    series.add_memory_limit_bytes(static_cast<double>(memory_limit_bytes_));
    series.add_executing_tasks(executing);
    series.add_active_tasks(executing);
  }
  BackendLiveProgress live;
  live.workers = snapshot.worker_threads;
  live.cores = static_cast<double>(snapshot.worker_threads);
  if (rss.ok()) live.memory_bytes = static_cast<double>(*rss);
  if (memory_limit_bytes_ > 0) live.memory_limit_bytes = static_cast<double>(memory_limit_bytes_);
  std::lock_guard<std::mutex> lock(live_mu_);
  live_ = std::move(live);
}

std::optional<BackendLiveProgress> ThreadPoolMetricsBackend::LiveProgress() const {
  std::lock_guard<std::mutex> lock(live_mu_);
  return live_;
}

std::map<int, ThreadPoolMetricsBackend::ThreadCounters>
ThreadPoolMetricsBackend::ReadThreadCounters() const {
  std::map<int, ThreadCounters> counters;
  for (const WorkerThreadSnapshot& worker : executor_->Snapshot().workers) {
    ThreadCounters& thread = counters[worker.index];
    thread.tid = worker.tid;
    thread.cpu_seconds = CpuSecondsOf(worker);
    thread.busy_seconds = worker.busy_seconds;
    absl::StatusOr<threadpool_internal::TaskSchedstat> sched =
        threadpool_internal::ReadTaskSchedstat(worker.tid);
    if (sched.ok()) {
      thread.has_run_delay = true;
      thread.run_delay_seconds = static_cast<double>(sched->run_delay_ns) * 1e-9;
    }
    absl::StatusOr<threadpool_internal::TaskIoCounters> io =
        threadpool_internal::ReadTaskIo(worker.tid);
    if (io.ok()) {
      thread.has_io = true;
      thread.rchar = io->rchar;
      thread.wchar = io->wchar;
      thread.read_bytes = io->read_bytes;
      thread.write_bytes = io->write_bytes;
    }
  }
  return counters;
}

absl::StatusOr<SpanId> ThreadPoolMetricsBackend::CreateSpan(absl::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("span name must not be empty");
  if (executor_ == nullptr) {
    return absl::FailedPreconditionError("ThreadPoolMetricsBackend has no executor (null)");
  }
  const absl::Time start_time = absl::Now();
  std::map<int, ThreadCounters> start = ReadThreadCounters();
  absl::StatusOr<backends_internal::SpanWindow> span = spans_.Open(name, start_time);
  if (!span.ok()) return span.status();
  span_counters_[span->id].start = std::move(start);
  return span->id;
}

absl::Status ThreadPoolMetricsBackend::EndSpan(const SpanId& id) {
  if (absl::Status known = spans_.Find(id).status(); !known.ok()) return known;
  std::map<int, ThreadCounters> end = ReadThreadCounters();
  absl::StatusOr<backends_internal::SpanWindow> span = spans_.Close(id, absl::Now());
  if (!span.ok()) return span.status();
  span_counters_[id].end = std::move(end);
  return absl::OkStatus();
}

absl::StatusOr<v1::Span> ThreadPoolMetricsBackend::GetSpanMetrics(const SpanId& id) {
  absl::StatusOr<backends_internal::SpanWindow> window = spans_.Ended(id);
  if (!window.ok()) return window.status();
  const SpanCounters& state = span_counters_.at(id);
  v1::Span span;
  span.set_name(window->name);
  span.set_id(id);
  span.set_start_unix_ns(absl::ToUnixNanos(window->start));
  span.set_end_unix_ns(absl::ToUnixNanos(window->end));
  const std::string context = "execute";
  for (const auto& [index, end] : state.end) {
    auto start_it = state.start.find(index);
    if (start_it == state.start.end() || start_it->second.tid != end.tid) continue;
    const ThreadCounters& start = start_it->second;
    const std::string worker = WorkerName(index);
    const double cpu = std::max(0.0, end.cpu_seconds - start.cpu_seconds);
    const double busy = std::max(0.0, end.busy_seconds - start.busy_seconds);
    AddMetric(span, context, options_.task_prefix, "thread-cpu", "seconds", cpu, worker);
    const double noncpu = std::max(0.0, busy - cpu);
    AddMetric(span, context, options_.task_prefix, "thread-noncpu", "seconds", noncpu, worker);
    if (start.has_run_delay && end.has_run_delay) {
      // The part of thread-noncpu spent waiting for a CPU; the rest is blocked (I/O, locks,
      // sleep). Wake-up delays between chunks are not busy time, hence the cap.
      AddMetric(span, context, options_.task_prefix, kRunQueueWaitActivity, "seconds",
                std::min(noncpu, std::max(0.0, end.run_delay_seconds - start.run_delay_seconds)),
                worker);
    }
    if (start.has_io && end.has_io) {
      auto delta = [](int64_t a, int64_t b) {
        return static_cast<double>(std::max<int64_t>(0, b - a));
      };
      AddMetric(span, context, options_.task_prefix, "read", "bytes", delta(start.rchar, end.rchar),
                worker);
      AddMetric(span, context, options_.task_prefix, "write", "bytes",
                delta(start.wchar, end.wchar), worker);
      AddMetric(span, context, options_.task_prefix, "disk-read", "bytes",
                delta(start.read_bytes, end.read_bytes), worker);
      AddMetric(span, context, options_.task_prefix, "disk-write", "bytes",
                delta(start.write_bytes, end.write_bytes), worker);
    }
  }
  return span;
}

}  // namespace roastcoffea
