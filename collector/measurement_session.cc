#include "collector/measurement_session.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "aggregation/aggregate.h"
#include "aggregation/measure.h"
#include "aggregation/report_from_chunks.h"
#include "aggregation/series_reduction.h"
#include "collector/checkpointed_tracking.h"
#include "collector/interruption.h"
#include "collector/run_stopwatch.h"
#include "collector/tool_build.h"
#include "host/host_name.h"
#include "schema/chunk_table.h"
#include "store/checkpoint.h"
#include "store/measurement_io.h"
#include "store/save_fallback.h"

namespace roastcoffea {
namespace {

// A run shorter than this many --interval periods gets a warning: its sampled figures (peak
// memory, the time series) rest on too few samples. Only for backends that sample.
constexpr int kMinSamplesPerRun = 4;
bool SamplesWorkers(absl::string_view backend) {
  return backend == "threadpool" || backend == "dask";
}

v1::Warning Warning(const std::string& code, std::string message) {
  v1::Warning warning;
  warning.set_code(code);
  warning.set_message(std::move(message));
  return warning;
}

// The backend of a session started with StartRecording: nothing to track while the run goes
// on; the engine's record comes with Finish (RunOutputs::engine_record).
class NoLiveBackend final : public AbstractMetricsBackend {
 public:
  explicit NoLiveBackend(absl::string_view name) : name_(name) {}
  absl::string_view name() const override { return name_; }
  absl::Status StartTracking(absl::Duration /*interval*/) override { return absl::OkStatus(); }
  absl::StatusOr<v1::TrackingData> StopTracking() override { return v1::TrackingData(); }
  absl::StatusOr<SpanId> CreateSpan(absl::string_view /*name*/) override { return NoSpans(); }
  absl::Status EndSpan(const SpanId& /*id*/) override { return NoSpans(); }
  absl::StatusOr<v1::Span> GetSpanMetrics(const SpanId& /*id*/) override { return NoSpans(); }

 private:
  static absl::Status NoSpans() {
    return absl::UnimplementedError("the engine's record brings the spans");
  }
  const std::string name_;
};

// A sampled peak is the highest of few samples: with under kMinSamplesPerRun of them the peak
// memory and the time series miss most of the run (13.8 MiB read where 19 MiB were used).
std::optional<v1::Warning> FewSamplesWarning(const RunWindow& window, absl::Duration interval) {
  const double seconds = absl::ToDoubleSeconds(interval);
  if (window.elapsed_seconds <= 0 || window.elapsed_seconds >= kMinSamplesPerRun * seconds) {
    return std::nullopt;
  }
  return Warning(
      "interval_longer_than_run",
      absl::StrFormat("the run lasted %.3g s but --interval is %.3g s: at most %d sample(s) "
                      "of the workers, so peak memory and the time series are under-read; "
                      "use --interval=%.2g or less for a run this short",
                      window.elapsed_seconds, seconds,
                      1 + static_cast<int>(window.elapsed_seconds / seconds),
                      window.elapsed_seconds / kMinSamplesPerRun));
}

// The engine's record of the run (read once it ended) joins what the session saw.
void AddEngineRecord(RawRun record, bool frames_the_run, RawRun* run,
                     std::vector<v1::Warning>* warnings) {
  if (record.tracking.has_value()) run->tracking = *std::move(record.tracking);
  for (v1::Span& span : record.spans) run->spans.push_back(std::move(span));
  if (run->engine_chunks.empty()) {
    run->engine_chunks = std::move(record.engine_chunks);  // no second 10^6-record table
  } else {
    record.engine_chunks.ForEachRecord(
        [run](const v1::ChunkRecord& chunk) { run->engine_chunks.Append(chunk); });
  }
  for (v1::Warning& warning : record.warnings) warnings->push_back(std::move(warning));
  if (run->engine_version.empty()) run->engine_version = std::move(record.engine_version);
  if (frames_the_run && record.window.end > record.window.start) {
    run->window.start = record.window.start;
    run->window.end = record.window.end;
    run->window.elapsed_seconds = record.window.elapsed_seconds;
    run->window.host_facts.reset();
  }
}

}  // namespace

namespace {
// When blocking work should give up, on g_give_up_clock's monotonic reading (ns; never:
// INT64_MAX). Set on the first signal.
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
std::atomic<int64_t> g_give_up_at_ns{kNever};
std::atomic<Clock*> g_give_up_clock{nullptr};
}  // namespace

bool SessionShouldGiveUp() {
  const int64_t at = g_give_up_at_ns.load();
  return at != kNever && absl::ToInt64Nanoseconds(g_give_up_clock.load()->Monotonic()) >= at;
}

class MeasurementSession::Impl {
 public:
  Impl(AbstractMetricsBackend& backend, SessionOptions options)
      : backend_(backend), options_(std::move(options)) {}
  Impl(std::unique_ptr<AbstractMetricsBackend> owned, SessionOptions options)
      : owned_backend_(std::move(owned)), backend_(*owned_backend_), options_(std::move(options)) {}
  // The interruption's thread uses the fields below: it goes first.
  ~Impl() {
    interruption_.reset();
    StopCheckpoints();
    g_give_up_at_ns.store(kNever);
  }

  absl::Status Start();
  absl::StatusOr<MeasuredRun> Finish(RunOutputs outputs);
  // Runs `save` (the measurement's SaveUnderItsName) in the saving state, then removes the
  // checkpoint once it succeeded; a failed save names the checkpoint it keeps.
  absl::StatusOr<std::string> Save(absl::FunctionRef<absl::StatusOr<std::string>()> save);
  // A default name (the start time to the second) moves to "-2", "-3", ... when another run
  // started in the same second; a name the user chose is never changed.
  absl::StatusOr<std::string> SaveUnderItsName(const v1::Measurement& measurement) {
    return options_.metadata.name().empty()
               ? SaveMeasurementUnderFreeName(measurement, options_.output_dir,
                                              measurement.metadata().name())
               : SaveMeasurement(measurement, options_.output_dir, measurement.metadata().name());
  }
  absl::StatusOr<std::string> SaveUnderItsName(const MeasuredRun& run) {
    const std::string& name = run.measurement.metadata().name();
    const std::string& dir = options_.output_dir;
    return options_.metadata.name().empty()
               ? SaveMeasurementUnderFreeName(run.measurement, run.chunks, dir, name)
               : SaveMeasurement(run.measurement, run.chunks, dir, name);
  }
  std::string interruption() const;
  // Starts the thread that appends new chunks to the checkpoint every checkpoint_interval (a
  // checkpoint that cannot be created is a warning).
  void StartCheckpoints();
  // Ends that thread after one last append; the checkpoint stays on disk.
  void StopCheckpoints();
  // Appends the chunks recorded since the last append, and the backend's tracking samples.
  void AppendCheckpoint();
  // The backend's StopTracking, with the samples it handed to the checkpoint before.
  // A checkpoint that cannot be read back is a warning in `warnings`.
  absl::StatusOr<v1::TrackingData> StopTrackingWithCheckpointed(std::vector<v1::Warning>* warnings);
  // Finish's parts: closes the span, stops tracking and takes the backend's contribution into
  // `run` (errors: StopTracking's); moves the recorded chunks, then the run's own, into `run`.
  absl::Status StopTheBackend(RawRun* run);
  void TakeChunks(ChunkTable from_the_run, RawRun* run);
  std::string checkpoint_directory() const {
    std::lock_guard<std::mutex> lock(checkpoint_mu_);
    return checkpoint_.has_value() ? checkpoint_->directory() : "";
  }
  void RecordChunk(v1::ChunkRecord record) {
    std::lock_guard<std::mutex> lock(mu_);
    CountChunk(record, &live_);
    chunks_.Append(std::move(record));
  }
  LiveStatus live_status(absl::Duration refresh) const;
  void set_chunks_total(int64_t chunks) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.chunks_total = chunks;
  }

  // StartRecording's backend (NoLiveBackend); null for a live backend.
  std::unique_ptr<AbstractMetricsBackend> owned_backend_;
  AbstractMetricsBackend& backend_;
  const SessionOptions options_;
  Clock* const clock_ = options_.clock != nullptr ? options_.clock : Clock::Real();
  // The first signal + grace_period, on clock_'s monotonic reading (ns; kNever before).
  std::atomic<int64_t> work_deadline_ns_{kNever};
  std::unique_ptr<Interruption> interruption_;

 private:
  // Where the run is, for the interruption's description and the last-resort save.
  enum class State {
    kStarting,
    kRunning,
    kStopping,
    kAssembling,  // the backend's part is done: our own bounded work from here on
    kFinished,    // Finish returned: the caller prints and saves
    kSaving,
    kSaved,
    kSavingWhatIsThere,
  };

  // The last-resort save is under way and ends the process: nothing else may start.
  [[noreturn]] static void WaitForTheLastResort() {
    while (true) pause();
  }
  void NoteSignal() {
    std::lock_guard<std::mutex> lock(mu_);
    work_deadline_ns_.store(absl::ToInt64Nanoseconds(clock_->Monotonic() + options_.grace_period));
    if (!interrupted_in_.has_value()) interrupted_in_ = state_;
    // While running, the work has its grace period; otherwise nothing is worth waiting for.
    // The planned end of a run that ends on a signal waits as usual (a second signal exits).
    if (state_ == State::kRunning && options_.signal_is_the_end) return;
    const absl::Duration wait =
        state_ == State::kRunning ? options_.grace_period : absl::ZeroDuration();
    g_give_up_clock.store(clock_);
    g_give_up_at_ns.store(absl::ToInt64Nanoseconds(clock_->Monotonic() + wait));
  }
  void SetState(State state) {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = state;
  }
  static const char* PhaseName(State state);
  // The name, tool version, command line, configuration; the interruption.
  void CompleteMetadata(v1::Measurement* measurement, absl::Time start) const;
  // Runs on the interruption's thread when the run has not started saving in time, or when
  // tracking did not start after a signal (`why_no_tracking` says why then). Returns only when
  // the run is saving by itself (or another last-resort save is under way).
  void SaveWhatIsThere(const std::string& why_no_tracking = "");

  std::optional<RunStopwatch> stopwatch_;
  std::optional<SpanId> span_;
  std::vector<v1::Warning> warnings_;  // the session's own (a span it could not open)

  mutable std::mutex mu_;  // guards the fields below
  State state_ = State::kStarting;
  // The phase when the first signal arrived (kept here: State moves on).
  std::optional<State> interrupted_in_;
  // As columns (~190 B a chunk against ~980 B as records): a live 10^6-chunk run holds them
  // all until Finish.
  ChunkTable chunks_;
  // The live view's counters (guarded by mu_; `so_far` is kept apart, in so_far_).
  LiveStatus live_;
  const absl::Duration monotonic_start_ = clock_->Monotonic();

  // The last aggregation of the chunks so far, for the live view (guarded by so_far_mu_, taken
  // before mu_).
  mutable std::mutex so_far_mu_;
  mutable std::shared_ptr<const v1::AggregatedMetrics> so_far_;
  mutable absl::Duration so_far_at_;
  mutable size_t so_far_chunks_ = 0;
  mutable double worker_timeline_step_ = kWorkerTimelineStep;
  mutable std::vector<LiveStatus::WorkerPoint> worker_timeline_;

  // The checkpoint (guarded by checkpoint_mu_, taken before mu_ where both are held).
  mutable std::mutex checkpoint_mu_;
  std::optional<CheckpointWriter> checkpoint_;
  size_t checkpointed_chunks_ = 0;
  // The backend's tracking segments on their way to the checkpoint; joined at the end.
  CheckpointedTracking tracking_;
  StopToken checkpoint_stop_;
  std::thread checkpoint_thread_;
};

const char* MeasurementSession::Impl::PhaseName(State state) {
  switch (state) {
    case State::kStarting:
      return "starting tracking";
    case State::kRunning:
      return "running";
    case State::kStopping:
      return "stopping tracking";
    case State::kAssembling:
      return "assembling the measurement";
    case State::kFinished:
    case State::kSaving:
    case State::kSavingWhatIsThere:
      return "saving";
    case State::kSaved:
      return "after saving";
  }
  return "running";
}

absl::Status MeasurementSession::Impl::Start() {
  if (options_.interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("interval must be positive, got ", absl::FormatDuration(options_.interval)));
  }
  if (options_.handle_signals) {
    // Before the backend starts any thread, and before a connect that may hang.
    InterruptionOptions interruption;
    interruption.program = options_.program_name;
    interruption.exit_code = kInterruptedExitCode;
    interruption.deadline_delay = options_.grace_period + options_.finish_timeout;
    interruption.on_signal = [this] { NoteSignal(); };
    interruption.on_deadline = [this] { SaveWhatIsThere(); };
    interruption.clock = clock_;
    absl::StatusOr<std::unique_ptr<Interruption>> installed =
        Interruption::Install(std::move(interruption));
    if (!installed.ok()) return installed.status();
    interruption_ = *std::move(installed);
  }
  stopwatch_.emplace(clock_);
  if (absl::Status status = backend_.StartTracking(options_.interval); !status.ok()) {
    // Gave up on a signal (e.g. a connect abandoned): the run is interrupted, not failed.
    if (interruption_ != nullptr && Interruption::triggered()) {
      SaveWhatIsThere(absl::StrCat("tracking did not start (", status.message(), ")"));
      WaitForTheLastResort();
    }
    return status;
  }
  // Without a live backend the engine's record brings the run's span.
  if (owned_backend_ == nullptr) {
    absl::StatusOr<SpanId> span = backend_.CreateSpan(kCollectWindowSpanName);
    if (span.ok()) {
      span_ = *span;
    } else {
      warnings_.push_back(
          Warning("collector", absl::StrCat("no fine metrics: ", span.status().message())));
    }
  }
  SetState(State::kRunning);
  StartCheckpoints();
  return absl::OkStatus();
}

LiveStatus MeasurementSession::Impl::live_status(absl::Duration refresh) const {
  // Aggregating a copy of at most this many chunks takes tens of milliseconds; beyond, the
  // live findings keep their last value (the saved measurement has the rest).
  constexpr size_t kMaxLiveAggregationChunks = 50000;
  std::lock_guard<std::mutex> so_far_lock(so_far_mu_);
  LiveStatus status;
  std::vector<v1::ChunkRecord> copy;
  const absl::Duration now = clock_->Monotonic();
  {
    std::lock_guard<std::mutex> lock(mu_);
    status = live_;
    status.elapsed_seconds = absl::ToDoubleSeconds(now - monotonic_start_);
    status.finished = state_ != State::kStarting && state_ != State::kRunning;
    if (chunks_.size() != so_far_chunks_ && chunks_.size() <= kMaxLiveAggregationChunks &&
        (so_far_ == nullptr || now - so_far_at_ >= refresh)) {
      copy = RecordsOf(chunks_);
      so_far_chunks_ = chunks_.size();
      so_far_at_ = now;
    }
  }
  status.name = options_.metadata.name().empty() && stopwatch_.has_value()
                    ? MeasurementDirectoryName(stopwatch_->start())
                    : options_.metadata.name();
  status.backend = std::string(backend_.name());
  if (stopwatch_.has_value()) status.start = stopwatch_->start();
  status.interrupted = Interruption::triggered();
  status.worker_threads = options_.in_process_worker_threads.value_or(0);
  if (!copy.empty()) {
    v1::Measurement measurement;
    *measurement.mutable_report() = BuildWorkflowReport(copy);
    measurement.mutable_metadata()->set_elapsed_seconds(status.elapsed_seconds);
    for (v1::ChunkRecord& chunk : copy) *measurement.add_chunks() = std::move(chunk);
    RepairForAggregation(&measurement);
    AggregationOptions aggregation;
    aggregation.processor_task_patterns = options_.processor_patterns;
    absl::StatusOr<v1::AggregatedMetrics> metrics =
        Aggregate(AggregationInputFromMeasurement(measurement, aggregation));
    if (metrics.ok()) {
      so_far_ = std::make_shared<const v1::AggregatedMetrics>(*std::move(metrics));
    }
  }
  status.so_far = so_far_;
  if (std::optional<BackendLiveProgress> progress = backend_.LiveProgress(); progress) {
    AddBackendProgress(*progress, options_.processor_patterns, &status);
  }
  ExtendWorkerTimeline(status, &worker_timeline_step_, &worker_timeline_);
  status.worker_timeline = worker_timeline_;
  return status;
}

void MeasurementSession::Impl::StartCheckpoints() {
  if (options_.checkpoint_interval <= absl::ZeroDuration()) return;
  v1::MeasurementMetadata metadata = options_.metadata;
  const absl::Time start = stopwatch_->start();
  const std::string name =
      metadata.name().empty() ? MeasurementDirectoryName(start) : metadata.name();
  metadata.set_name(name);
  metadata.set_backend(std::string(backend_.name()));
  // What `show` needs to judge the figures (the machine, the builds) if this is all that is left.
  metadata.set_host(HostName());
  *metadata.mutable_tool_build() = ToolBuildInfo();
  if (options_.analysis_build.has_value())
    *metadata.mutable_analysis_build() = *options_.analysis_build;
  if (std::optional<v1::HostFacts> facts = stopwatch_->Stop().host_facts; facts.has_value()) {
    *metadata.mutable_host_facts() = *std::move(facts);
  }
  const int64_t start_ns = absl::ToUnixNanos(start);
  metadata.mutable_start_time()->set_seconds(start_ns / 1000000000);
  metadata.mutable_start_time()->set_nanos(static_cast<int32_t>(start_ns % 1000000000));
  std::error_code ignored;
  std::filesystem::create_directories(options_.output_dir, ignored);
  const std::string base = options_.output_dir + "/" + name;
  absl::StatusOr<CheckpointWriter> writer =
      CheckpointWriter::Create(CheckpointDirectoryFor(base), metadata);
  // Two runs of one default name (started in the same second): the second takes -2, -3, ...
  for (int k = 2; !writer.ok() && absl::IsAlreadyExists(writer.status()) &&
                  options_.metadata.name().empty() && k <= 20;
       ++k) {
    writer = CheckpointWriter::Create(CheckpointDirectoryFor(absl::StrCat(base, "-", k)), metadata);
  }
  if (!writer.ok()) {
    warnings_.push_back(Warning(
        "no_checkpoint", absl::StrCat("no checkpoint while the run went on (a kill would have "
                                      "lost it): ",
                                      writer.status().message())));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(checkpoint_mu_);
    checkpoint_.emplace(*std::move(writer));
  }
  checkpoint_thread_ = std::thread([this] {
    while (
        !clock_->WaitUntil(clock_->Monotonic() + options_.checkpoint_interval, checkpoint_stop_)) {
      AppendCheckpoint();
    }
  });
}

void MeasurementSession::Impl::AppendCheckpoint() {
  std::vector<v1::ChunkRecord> fresh;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (checkpointed_chunks_ < chunks_.size()) {
      fresh = RecordsOf(chunks_, checkpointed_chunks_);
      checkpointed_chunks_ = chunks_.size();
    }
  }
  std::vector<const v1::ChunkRecord*> pointers;
  pointers.reserve(fresh.size());
  for (const v1::ChunkRecord& chunk : fresh) pointers.push_back(&chunk);
  std::lock_guard<std::mutex> lock(checkpoint_mu_);
  if (!checkpoint_.has_value()) return;
  // The backend's samples since the last checkpoint move to disk (bounded tracking memory).
  tracking_.TakeFrom(backend_);
  if (absl::Status appended = checkpoint_->Append(pointers, clock_->Now(), tracking_.unwritten());
      !appended.ok()) {
    // A full disk now may have room later: those chunks (and samples) are appended next time.
    std::lock_guard<std::mutex> chunks_lock(mu_);
    checkpointed_chunks_ -= std::min(checkpointed_chunks_, fresh.size());
  } else {
    tracking_.Written();
  }
}

absl::StatusOr<v1::TrackingData> MeasurementSession::Impl::StopTrackingWithCheckpointed(
    std::vector<v1::Warning>* warnings) {
  absl::StatusOr<v1::TrackingData> last = backend_.StopTracking();
  if (!last.ok()) return last;
  std::lock_guard<std::mutex> lock(checkpoint_mu_);
  if (!checkpoint_.has_value()) return last;  // no checkpoint: nothing was taken
  return tracking_.Whole(backend_.final_tracking(), *std::move(last), *checkpoint_, warnings);
}

void MeasurementSession::Impl::StopCheckpoints() {
  checkpoint_stop_.RequestStop();
  if (checkpoint_thread_.joinable()) checkpoint_thread_.join();
}

std::string MeasurementSession::Impl::interruption() const {
  if (!Interruption::triggered()) return "";
  std::lock_guard<std::mutex> lock(mu_);
  return absl::StrCat(SignalName(Interruption::signal_number()), " while ",
                      PhaseName(interrupted_in_.value_or(state_)));
}

void MeasurementSession::Impl::CompleteMetadata(v1::Measurement* measurement,
                                                absl::Time start) const {
  v1::MeasurementMetadata& metadata = *measurement->mutable_metadata();
  metadata.set_name(options_.metadata.name().empty() ? MeasurementDirectoryName(start)
                                                     : options_.metadata.name());
  metadata.set_tool_version(options_.metadata.tool_version());
  *metadata.mutable_command_line() = options_.metadata.command_line();
  for (const auto& [key, value] : options_.metadata.configuration()) {
    (*metadata.mutable_configuration())[key] = value;
  }
  bool planned_end = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A run that ends on a signal ends as planned only if the signal came while it ran.
    planned_end = options_.signal_is_the_end && state_ != State::kSavingWhatIsThere &&
                  interrupted_in_.value_or(state_) == State::kRunning;
  }
  if (const std::string interruption = this->interruption();
      !interruption.empty() && !planned_end) {
    metadata.set_interrupted(true);
    metadata.set_interruption(interruption);
  }
}

absl::Status MeasurementSession::Impl::StopTheBackend(RawRun* run) {
  if (span_.has_value()) {
    const absl::Status ended = backend_.EndSpan(*span_);
    absl::StatusOr<v1::Span> metrics =
        ended.ok() ? backend_.GetSpanMetrics(*span_) : absl::StatusOr<v1::Span>(ended);
    if (metrics.ok()) {
      run->spans.push_back(*std::move(metrics));
    } else {
      run->warnings.push_back(
          Warning("collector", absl::StrCat("no fine metrics: ", metrics.status().message())));
    }
  }
  absl::StatusOr<v1::TrackingData> tracking = StopTrackingWithCheckpointed(&run->warnings);
  if (!tracking.ok()) return tracking.status();
  run->tracking = *std::move(tracking);
  // The backend's own chunk records, warnings, engine version and, for a run the engine
  // recorded itself (TaskVine's START .. END), the window that frames it.
  backend_.Contribute(*run);
  return absl::OkStatus();
}

void MeasurementSession::Impl::TakeChunks(ChunkTable from_the_run, RawRun* run) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    run->chunks = std::move(chunks_);
    chunks_ = ChunkTable();
  }
  if (run->chunks.empty()) {
    run->chunks = std::move(from_the_run);
  } else {
    from_the_run.ForEachRecord([run](const v1::ChunkRecord& chunk) { run->chunks.Append(chunk); });
  }
}

absl::StatusOr<MeasuredRun> MeasurementSession::Impl::Finish(RunOutputs outputs) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (state_ == State::kSavingWhatIsThere) {
      lock.unlock();
      WaitForTheLastResort();
    }
    if (state_ != State::kRunning) {
      return absl::FailedPreconditionError("Finish may be called once, after Start");
    }
    if (Interruption::triggered() && !interrupted_in_.has_value()) interrupted_in_ = state_;
    state_ = State::kStopping;
  }
  // The last checkpoint holds every chunk the run recorded: kept until the save succeeds.
  StopCheckpoints();
  AppendCheckpoint();
  RawRun run;
  run.window = stopwatch_->Stop();
  run.warnings = warnings_;
  if (absl::Status stopped = StopTheBackend(&run); !stopped.ok()) return stopped;
  if (outputs.engine_record.has_value()) {
    AddEngineRecord(*std::move(outputs.engine_record), outputs.engine_record_frames_the_run, &run,
                    &run.warnings);
  }
  for (v1::Warning& warning : outputs.warnings) run.warnings.push_back(std::move(warning));
  // Bounded final tracking, every figure over the run's window exact (series_reduction.h).
  // Sampled series only: STEP ones are an engine log's change points (TaskVine, Work Queue),
  // which grow with tasks, not time, and which the capacity findings read change by change.
  if (run.tracking.has_value()) {
    ReduceTracking(MaxSamplesPerWorker(run.tracking->workers_size()),
                   {absl::ToUnixNanos(run.window.start), absl::ToUnixNanos(run.window.end)},
                   &*run.tracking, /*step_series_too=*/false);
  }
  if (owned_backend_ == nullptr && SamplesWorkers(backend_.name())) {
    if (std::optional<v1::Warning> few = FewSamplesWarning(run.window, options_.interval); few) {
      run.warnings.push_back(*std::move(few));
    }
  }
  TakeChunks(std::move(outputs.chunks), &run);
  run.report = std::move(outputs.report);
  run.backend = std::string(backend_.name());
  run.in_process_worker_threads = options_.in_process_worker_threads;
  run.analysis_build = options_.analysis_build;
  run.tool_build = ToolBuildInfo();
  MeasureOptions measure;
  measure.processor_task_patterns = options_.processor_patterns;
  // The profiles are the backend's last blocking work (e.g. Dask's fetch): the session's own
  // bounded work starts after them.
  measure.profiles_of_chunks = [this](const ChunkTable& chunks) {
    std::vector<v1::Profile> profiles = backend_.TakeProfiles(chunks);
    SetState(State::kAssembling);
    return profiles;
  };
  absl::StatusOr<MeasuredRun> measured = MeasureRun(std::move(run), measure);
  if (!measured.ok()) return measured.status();
  CompleteMetadata(&measured->measurement, stopwatch_->start());
  SetState(State::kFinished);
  return measured;
}

absl::StatusOr<std::string> MeasurementSession::Impl::Save(
    absl::FunctionRef<absl::StatusOr<std::string>()> save) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (state_ == State::kSavingWhatIsThere) {
      lock.unlock();
      WaitForTheLastResort();
    }
    state_ = State::kSaving;
  }
  absl::StatusOr<std::string> saved = save();
  SetState(State::kSaved);
  std::lock_guard<std::mutex> lock(checkpoint_mu_);
  if (!checkpoint_.has_value()) return saved;
  if (saved.ok()) {
    checkpoint_->Remove();
    checkpoint_.reset();
    return saved;
  }
  return absl::Status(saved.status().code(),
                      absl::StrCat(saved.status().message(),
                                   "; the chunks measured up to the "
                                   "end are in its checkpoint, ",
                                   checkpoint_->directory(), " (collect show reads it)"));
}

void MeasurementSession::Impl::SaveWhatIsThere(const std::string& why_no_tracking) {
  RawRun run;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The run's own save is close: aggregation and writing files are bounded.
    if (state_ == State::kAssembling || state_ == State::kFinished || state_ == State::kSaving ||
        state_ == State::kSaved || state_ == State::kSavingWhatIsThere) {
      return;
    }
    if (!interrupted_in_.has_value()) interrupted_in_ = state_;
    // The planned end of a run that ends on a signal: its end phase is the usual one (a second
    // signal still exits at once).
    if (options_.signal_is_the_end && *interrupted_in_ == State::kRunning) return;
    state_ = State::kSavingWhatIsThere;
    chunks_.ForEachRecord([&run](const v1::ChunkRecord& chunk) { run.chunks.Append(chunk); });
  }
  const std::string why = interruption();
  run.window = stopwatch_.has_value() ? stopwatch_->Stop() : RunStopwatch(clock_).Stop();
  run.backend = std::string(backend_.name());
  run.warnings = warnings_;
  const std::string what_happened =
      why_no_tracking.empty()
          ? absl::StrCat("the run did not stop within ",
                         absl::FormatDuration(options_.grace_period + options_.finish_timeout))
          : why_no_tracking;
  {
    // The tracking segments the checkpoint holds (never waiting: the run may be stuck in it).
    std::unique_lock<std::mutex> lock(checkpoint_mu_, std::try_to_lock);
    if (lock.owns_lock() && checkpoint_.has_value()) run.tracking = tracking_.SoFar(*checkpoint_);
  }
  run.warnings.push_back(Warning(
      "interrupted", absl::StrCat("interrupted (", why, ") and ", what_happened,
                                  run.tracking.has_value()
                                      ? ": saved with the tracking series checkpointed so far, "
                                        "without the backend's spans and profiles"
                                      : ": saved without the backend's tracking data, spans and "
                                        "profiles")));
  run.in_process_worker_threads = options_.in_process_worker_threads;
  run.analysis_build = options_.analysis_build;
  run.tool_build = ToolBuildInfo();
  MeasureOptions measure;
  measure.processor_task_patterns = options_.processor_patterns;
  absl::StatusOr<MeasuredRun> measured = MeasureRun(std::move(run), measure);
  std::fflush(stdout);
  if (!measured.ok()) {
    std::fprintf(stderr, "\n%s: interrupted (%s); cannot save: %s\n", options_.program_name.c_str(),
                 why.c_str(), std::string(measured.status().message()).c_str());
    _exit(1);
  }
  CompleteMetadata(&measured->measurement,
                   stopwatch_.has_value() ? stopwatch_->start() : clock_->Now());
  // The last resort falls back like the run's own save: what was done is never lost to a full
  // or read-only disk.
  absl::StatusOr<SaveOutcome> saved = SaveWithFallback(
      measured->measurement, measured->chunks,
      [&](const v1::Measurement&, const ChunkTable&) { return SaveUnderItsName(*measured); },
      FallbackSaveDirectory());
  if (!saved.ok()) {
    std::fprintf(stderr, "\n%s: interrupted (%s); cannot save: %s\n", options_.program_name.c_str(),
                 why.c_str(), std::string(saved.status().message()).c_str());
    _exit(1);
  }
  {
    std::lock_guard<std::mutex> lock(checkpoint_mu_);
    if (checkpoint_.has_value()) checkpoint_->Remove();
  }
  if (saved->fell_back) {
    std::fprintf(stderr, "\n%s: could not save where asked (%s); saving it instead to %s\n",
                 options_.program_name.c_str(), saved->why.c_str(), saved->path.c_str());
  }
  std::fprintf(stderr, "\n%s: interrupted (%s); %s: what was done (%d chunks) saved to %s\n",
               options_.program_name.c_str(), why.c_str(),
               why_no_tracking.empty() ? "the run did not stop in time" : why_no_tracking.c_str(),
               static_cast<int>(measured->chunks.size()), saved->path.c_str());
  std::fflush(stderr);
  _exit(saved->fell_back ? kSavedElsewhereExitCode : kInterruptedExitCode);
}

absl::StatusOr<std::unique_ptr<MeasurementSession>> MeasurementSession::StartRecording(
    absl::string_view backend, SessionOptions options) {
  auto impl = std::make_unique<Impl>(std::make_unique<NoLiveBackend>(backend), std::move(options));
  if (absl::Status status = impl->Start(); !status.ok()) return status;
  std::unique_ptr<MeasurementSession> session(new MeasurementSession(std::move(impl)));
  if (session->impl_->options_.on_start) session->impl_->options_.on_start(session.get());
  return session;
}

absl::StatusOr<std::unique_ptr<MeasurementSession>> MeasurementSession::Start(
    AbstractMetricsBackend& backend, SessionOptions options) {
  auto impl = std::make_unique<Impl>(backend, std::move(options));
  if (absl::Status status = impl->Start(); !status.ok()) return status;
  std::unique_ptr<MeasurementSession> session(new MeasurementSession(std::move(impl)));
  if (session->impl_->options_.on_start) session->impl_->options_.on_start(session.get());
  return session;
}

MeasurementSession::MeasurementSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MeasurementSession::~MeasurementSession() {
  if (impl_->options_.on_end) impl_->options_.on_end(this);
}

const SessionOptions& MeasurementSession::options() const { return impl_->options_; }

LiveStatus MeasurementSession::live_status(absl::Duration refresh) const {
  return impl_->live_status(refresh);
}

void MeasurementSession::set_chunks_total(int64_t chunks) { impl_->set_chunks_total(chunks); }

std::string MeasurementSession::checkpoint_directory() const {
  return impl_->checkpoint_directory();
}

bool MeasurementSession::interrupted() const {
  return impl_->interruption_ != nullptr && Interruption::triggered();
}

bool MeasurementSession::WaitForInterruption(absl::Time deadline) {
  if (impl_->interruption_ == nullptr) {
    Clock& clock = *impl_->clock_;
    clock.SleepUntil(clock.Monotonic() + (deadline - clock.Now()));
    return false;
  }
  return impl_->interruption_->WaitUntil(deadline);
}

absl::Time MeasurementSession::work_deadline() const {
  if (!interrupted()) return absl::InfiniteFuture();
  const absl::Time at = impl_->interruption_->triggered_at();
  // Between the handler and the watcher noticing it: count from now.
  return (at == absl::InfiniteFuture() ? impl_->clock_->Now() : at) + impl_->options_.grace_period;
}

bool MeasurementSession::work_deadline_passed() const {
  if (!interrupted()) return false;
  const int64_t at = impl_->work_deadline_ns_.load();
  // Between the handler and the watcher noting it, the grace period has not begun.
  return at != kNever && absl::ToInt64Nanoseconds(impl_->clock_->Monotonic()) >= at;
}

std::string MeasurementSession::interruption() const {
  return impl_->interruption_ == nullptr ? "" : impl_->interruption();
}

void MeasurementSession::ForwardSignalsTo(pid_t pid) {
  if (impl_->interruption_ != nullptr) Interruption::ForwardTo(pid);
}

void MeasurementSession::RecordChunk(v1::ChunkRecord record) {
  impl_->RecordChunk(std::move(record));
}

void MeasurementSession::Add(v1::ChunkRecord record) { impl_->RecordChunk(std::move(record)); }

absl::StatusOr<v1::Measurement> MeasurementSession::Finish(RunOutputs outputs) {
  absl::StatusOr<MeasuredRun> run = impl_->Finish(std::move(outputs));
  if (!run.ok()) return run.status();
  run->chunks.AppendRecordsTo(run->measurement.mutable_chunks());
  return std::move(run->measurement);
}

absl::StatusOr<MeasuredRun> MeasurementSession::FinishRun(RunOutputs outputs) {
  return impl_->Finish(std::move(outputs));
}

absl::StatusOr<std::string> MeasurementSession::Save(const v1::Measurement& measurement) {
  return impl_->Save([this, &measurement] { return impl_->SaveUnderItsName(measurement); });
}

absl::StatusOr<std::string> MeasurementSession::Save(const MeasuredRun& run) {
  return impl_->Save([this, &run] { return impl_->SaveUnderItsName(run); });
}

}  // namespace roastcoffea
