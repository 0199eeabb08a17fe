// MeasurementSession: one measurement from start to saved directory, the same way for every
// backend and every caller (collect's runs, or your own C++ analysis).
//
//   SessionOptions options;
//   options.metadata.set_name("my-run");                // default: the UTC start time
//   options.output_dir = "measurements";
//   absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
//       MeasurementSession::Start(backend, options);
//   ... run the work; session->RecordChunk(record) as each chunk ends (or let
//   ... TrackChunksInto(processor, session->get()) do it: the session is a ChunkRecordSink),
//   ... and stop handing out work once session->interrupted() ...
//   absl::StatusOr<MeasuredRun> run = (*session)->FinishRun(RunOutputs{});
//   absl::StatusOr<std::string> directory = (*session)->Save(*run);  // collect show DIR
// (Finish gives one v1::Measurement with its records instead: ~1 KB per chunk, against ~190 B
// as the MeasuredRun's table.)
//
// The session owns the clocks (UTC, monotonic, process CPU, host facts), the backend's tracking
// and its "coffea-processing" span, the stop, profiles and warnings, the join of the engine's
// chunk records with the instrumentation's, the report built from chunk records when the run
// has none, the host metadata and the aggregation.
//
// Interruption (when options.handle_signals, which a program opts into: a library does not own
// the process's signals by default): from Start until the session is destroyed, the
// first SIGINT or SIGTERM makes interrupted() true, wakes WaitForInterruption, and is passed on
// to the process given to ForwardSignalsTo (if it was sent with kill(); Ctrl-C reaches the
// process group already). The run then has options.grace_period to let running work end
// (work_deadline()), and options.finish_timeout more to Finish and Save a measurement with
// metadata.interrupted set. If by then the backend has not given up its records (a hung
// connect, stop or profile fetch) or the run has not called Finish, the session saves what it
// has (clocks, recorded chunks, host facts; no tracking data) itself, prints where, and exits
// the process with kInterruptedExitCode. A second signal exits at once with that code.
//
// Thread-safety: Start, Finish and Save from one controlling thread; interrupted(),
// RecordChunk and WaitForInterruption from any thread.
#ifndef ROASTCOFFEA_COLLECTOR_MEASUREMENT_SESSION_H_
#define ROASTCOFFEA_COLLECTOR_MEASUREMENT_SESSION_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "aggregation/measure.h"
#include "backends/metrics_backend.h"
#include "collector/live_status.h"
#include "collector/tool_build.h"  // ToolBuildInfo(), for SessionOptions::analysis_build
#include "host/clock.h"
#include "instrumentation/chunk_record_sink.h"
#include "schema/measurement.pb.h"
#include "schema/raw_run.h"

namespace roastcoffea {

class MeasurementSession;

// The exit status of an interrupted run (128 + SIGINT, as shells report Ctrl-C), whichever of
// SIGINT or SIGTERM interrupted it.
inline constexpr int kInterruptedExitCode = 130;
// The same, when the measurement could not be saved under output_dir and went to the fallback
// directory (store/save_fallback.h); collect's exit status 6 (tools/exit_code.h).
inline constexpr int kSavedElsewhereExitCode = 6;

struct SessionOptions {
  // Seconds between two samples of the engine (> 0).
  absl::Duration interval = absl::Seconds(1);
  // Fine-metric task prefixes (or glob patterns) that are the processor's; the rest is overhead.
  std::vector<std::string> processor_patterns;
  // Threads of this process that run the analysis; unset when it runs elsewhere.
  std::optional<int> in_process_worker_threads;
  // How the measured code was built, when known (ToolBuildInfo() for code built with it).
  std::optional<v1::BuildInfo> analysis_build;
  // Copied into the measurement: name (default: the UTC start time, as a directory name),
  // tool_version, command_line, configuration. The clocks, host and backend are the session's.
  v1::MeasurementMetadata metadata;
  // Save writes <output_dir>/<metadata.name>/.
  std::string output_dir = "measurements";
  // What the session reads time on: the run's start and end (wall), its elapsed time, the
  // checkpoint period and the grace periods (monotonic: a wall-clock step neither stretches nor
  // cuts them). Tests pass a FakeClock (host/fake_clock.h). Not owned; outlives the session.
  Clock* clock = Clock::Real();

  // SIGINT/SIGTERM as described above: the session then owns those signals (and may end the
  // process with _exit after a second signal or a stuck stop), so only a program that wants
  // that opts in (collect does). Off (the default): the signals keep their usual effect.
  bool handle_signals = false;
  absl::Duration grace_period = absl::Seconds(2);
  absl::Duration finish_timeout = absl::Seconds(3);
  // The run has no end of its own but a signal (tracking "until Ctrl-C"): a first signal while
  // it runs ends it as planned: the measurement is not marked interrupted, and the session does
  // not save by itself however long the end takes (a second signal still exits at once). A
  // signal while starting is an interruption as usual.
  bool signal_is_the_end = false;
  // Prefix of the messages an interruption prints.
  std::string program_name = "roastcoffea";
  // How often the chunks recorded so far are appended to <output_dir>/<name>.checkpoint/
  // (store/checkpoint.h), so that a run killed by SIGKILL, the OOM killer or a crash leaves a
  // measurement `collect show` reads, marked partial. Save removes it once the finished run is
  // saved; a failed save keeps it. Zero or less: no checkpoint.
  absl::Duration checkpoint_interval = absl::Seconds(30);
  // Observers of the session's life (e.g. a live view, live/live_server.h): called with the
  // session once it has started, and when it is being destroyed (the pointer is invalid after).
  std::function<void(const MeasurementSession*)> on_start;
  std::function<void(const MeasurementSession*)> on_end;
};

// What the run produced besides the chunks given to RecordChunk.
struct RunOutputs {
  // Chunk records the run wrote elsewhere (e.g. a cluster command's file); joined with the
  // backend's own by task id. As columns (ReadChunkRecordsAsTable, ChunkTableOf).
  ChunkTable chunks;
  // The engine's report (Coffea's). Without one, the chunk records are the report.
  std::optional<v1::WorkflowReport> report;
  // What the run found worth saying (unreadable files, chunks not started), each with a code.
  std::vector<v1::Warning> warnings;
  // What the engine recorded, read once the run ended (e.g. ingest/taskvine_run.h): its
  // tracking, spans, engine chunk records, warnings and engine version are the run's (for a
  // session started with StartRecording; a live backend's come first).
  std::optional<RawRun> engine_record;
  // The record's window frames the run (it ended before the session began), not the session's
  // clocks; this machine's host facts then say nothing about it and are left out.
  bool engine_record_frames_the_run = false;
};

class MeasurementSession : public ChunkRecordSink {
 public:
  // Starts the clocks and the backend's tracking, and opens the span where the backend has fine
  // metrics (a span that cannot be opened is a warning). Errors: InvalidArgument for a
  // non-positive interval; the backend's; FailedPrecondition when another session handles
  // signals in this process.
  static absl::StatusOr<std::unique_ptr<MeasurementSession>> Start(AbstractMetricsBackend& backend,
                                                                   SessionOptions options);
  // A run whose engine is read after it ends (a finished run's logs, Work Queue's manager
  // logs): no backend tracks it live; Finish takes RunOutputs::engine_record. `backend` names
  // it in the measurement. Everything else (clocks, chunks, checkpoint, live status, signals,
  // save) as Start.
  static absl::StatusOr<std::unique_ptr<MeasurementSession>> StartRecording(
      absl::string_view backend, SessionOptions options);
  ~MeasurementSession() override;
  MeasurementSession(const MeasurementSession&) = delete;
  MeasurementSession& operator=(const MeasurementSession&) = delete;

  // Lock-free: a first SIGINT/SIGTERM arrived; stop handing out work.
  bool interrupted() const;
  // Until the first signal or `deadline`; true when interrupted. Without handle_signals it
  // sleeps until `deadline`: give a finite one.
  bool WaitForInterruption(absl::Time deadline);
  // Running work should have ended by then: the first signal + grace_period (InfiniteFuture
  // before any signal). A wall-clock time, to print; to decide, use work_deadline_passed().
  absl::Time work_deadline() const;
  // Whether the grace period after the first signal is over, on the monotonic clock (a step
  // of the wall clock neither stretches nor cuts it). False before any signal.
  bool work_deadline_passed() const;
  // "SIGINT while running" (the signal and the session's phase then); "" when not interrupted.
  std::string interruption() const;
  // The command the run started, to which signals sent with kill() are passed on; 0: none.
  void ForwardSignalsTo(pid_t pid);

  // Thread-safe: one chunk ended. Kept for Finish (and for a save after an interruption).
  void RecordChunk(v1::ChunkRecord record);
  // The same, as a ChunkRecordSink: TrackChunksInto(processor, session) records every chunk.
  void Add(v1::ChunkRecord record) override;

  // Closes the span (a failure is a warning), stops tracking, and assembles the measurement of
  // everything the backend and the run produced, aggregated (MeasureRun), its chunk records
  // kept as a table beside it (MeasuredRun, aggregation/measure.h: ~190 B per chunk instead of
  // ~1 KB as messages). Errors: the backend's StopTracking, aggregation's (bad input, named);
  // FinishRun (or Finish) may be called once.
  absl::StatusOr<MeasuredRun> FinishRun(RunOutputs outputs);
  // FinishRun with the records materialized into measurement.chunks(): one message.
  absl::StatusOr<v1::Measurement> Finish(RunOutputs outputs);

  // Writes the measurement to <output_dir>/<metadata.name>/ and returns its path (as
  // //store:measurement_io's SaveMeasurement: atomic, never overwrites), then removes the run's
  // checkpoint. When the save fails the checkpoint stays, and the error says where it is.
  absl::StatusOr<std::string> Save(const v1::Measurement& measurement);
  // The same for a run FinishRun measured: saved as if its table were measurement.chunks().
  absl::StatusOr<std::string> Save(const MeasuredRun& run);

  const SessionOptions& options() const;
  // Where the run's checkpoint is being written; "" without one.
  std::string checkpoint_directory() const;

  // The run as it goes (collector/live_status.h): counters of the chunks recorded so far (kept
  // as each is recorded: O(1) per chunk), and the metrics and findings of those chunks,
  // aggregated again when the last aggregation is older than `refresh` (at most 200,000
  // chunks: beyond, `so_far` keeps its last value and the saved measurement has the rest).
  LiveStatus live_status(absl::Duration refresh = absl::Seconds(5)) const;
  // How many chunks the run will record, when it knows (for progress and ETA).
  void set_chunks_total(int64_t chunks);

 private:
  class Impl;
  explicit MeasurementSession(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

// Lock-free, from any thread: whether blocking work of the run (a connect, a slow reply, an
// end-of-run fetch) should give up now because a signal interrupted the session: once the
// grace period is over for a signal while running, at once for a signal while starting or
// stopping. False without a session, and for the planned end of a run that ends on a signal.
// Pass it to code that waits on others (e.g. dask::CommOptions::give_up).
bool SessionShouldGiveUp();

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_COLLECTOR_MEASUREMENT_SESSION_H_
