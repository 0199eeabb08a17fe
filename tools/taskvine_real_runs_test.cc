// Three real TaskVine runs (backends/taskvine/testdata/real/<run>/, real managers' logs)
// measured end to end as
//   collect --backend=taskvine --taskvine_logs=TRANSACTIONS,PERFORMANCE
// does: ingest/taskvine_run reads the finished logs, MeasureFinishedRun frames the run by its own
// record and aggregates. Every figure of expected-<run>.md that the backend computes is compared
// with expected.json beside the logs, computed independently of this code by
// analyze_expected.py (window START..END; worker intervals CONNECTION..DISCONNECTION; attempts =
// RUNNING records; execution = time_worker_end - time_worker_start of RETRIEVED; see its
// docstring). taskvine_real_runs_expected.inc holds those figures, copied verbatim from
// expected.json. runB-hung differs where the reference counts a silently dead worker until the end
// (see there).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "backends/taskvine/taskvine_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/taskvine_run.h"
#include "schema/measurement.pb.h"
#include "tools/external_run.h"

namespace roastcoffea {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Property;

struct WorkerExpected {
  const char* id;
  int64_t connect_us, disconnect_us;  // 0: no DISCONNECTION
  const char* reason;
  double cores, memory_mb, disk_mb;
  double lifetime, busy;
  int attempts;
  double task_seconds, allocated_core_seconds;
};

struct CategoryExpected {
  const char* name;
  int tasks, attempts, retried, retrieved, retried_on_worker, lost_running, lost_after_completion,
      done, failed;
  double exec_retrieved, exec_lost, queue_wait, allocated_core_seconds;
};

struct ChunksExpected {
  int count;
  double mean, min, max, p50;
};

struct TransfersExpected {
  int64_t cache_updates;
  double cache_update_bytes;
  int64_t in;
  double in_bytes;
  int64_t out;
  double out_bytes;
};

struct RunExpected {
  const char* run;
  int64_t start_us, end_us;
  bool ended;
  int64_t records;
  int workers_joined, peak_workers;
  double mean_workers, worker_seconds, core_seconds;
  int peak_cores, sum_cores;
  double execute_seconds, core_efficiency;
  std::vector<WorkerExpected> workers;
  std::vector<CategoryExpected> categories;
  ChunksExpected chunks;
  TransfersExpected transfers;
};

#include "tools/taskvine_real_runs_expected.inc"

struct Collected {
  v1::Measurement measurement;
  taskvine::RunModel model;
};

Collected Collect(const std::string& run) {
  const std::string dir = absl::StrCat("backends/taskvine/testdata/real/", run, "/");
  TaskVineRunOptions options;
  options.logs = absl::StrCat(dir, "transactions,", dir, "performance");
  SessionOptions session;
  session.interval = absl::Seconds(1);
  absl::StatusOr<ExternalRunResult> result = MeasureFinishedRun(
      "taskvine", [&options] { return ReadFinishedTaskVineRun(options); }, session);
  EXPECT_TRUE(result.ok()) << result.status();
  Collected out;
  if (!result.ok()) return out;
  out.measurement = result->run.measurement;
  result->run.chunks.AppendRecordsTo(out.measurement.mutable_chunks());  // read below
  // The run as the backend models it, read once more for the figures the measurement does not
  // keep.
  TaskVineBackendOptions backend_options;
  backend_options.logs = options.logs;
  TaskVineMetricsBackend backend(backend_options);
  EXPECT_TRUE(backend.StartTracking(absl::Seconds(1)).ok());
  EXPECT_TRUE(backend.StopTracking().ok());
  out.model = backend.ModelSnapshot();
  return out;
}

// Sums over floats: a few ulps of each of ~100 terms.
double Near(double expected) { return 1e-6 * std::max(1.0, std::fabs(expected)); }

void ExpectRun(const RunExpected& expected, const Collected& got) {
  SCOPED_TRACE(expected.run);
  const taskvine::RunModel& model = got.model;
  const taskvine::RunFigures f = model.Figures();
  // Run.
  EXPECT_EQ(f.start_us, expected.start_us);
  EXPECT_EQ(f.end_us, expected.end_us);
  EXPECT_EQ(f.ended, expected.ended);
  EXPECT_EQ(model.transaction_records(), expected.records);
  EXPECT_EQ(f.workers_joined, expected.workers_joined);
  EXPECT_NEAR(f.worker_seconds, expected.worker_seconds, Near(expected.worker_seconds));
  EXPECT_NEAR(f.core_seconds_available, expected.core_seconds, Near(expected.core_seconds));
  EXPECT_NEAR(f.execute_seconds, expected.execute_seconds, Near(expected.execute_seconds));
  // Peak concurrent cores and the cores of every worker ever seen.
  std::vector<std::pair<int64_t, double>> steps;
  double sum_cores = 0;
  for (const taskvine::Worker& w : model.workers()) {
    sum_cores += w.cores;
    steps.emplace_back(w.connect_us, w.cores);
    if (w.disconnect_us > 0) steps.emplace_back(w.disconnect_us, -w.cores);
  }
  std::sort(steps.begin(), steps.end());
  double cores = 0, peak_cores = 0;
  for (const auto& [t, delta] : steps) peak_cores = std::max(peak_cores, cores += delta);
  EXPECT_EQ(peak_cores, expected.peak_cores);
  EXPECT_EQ(sum_cores, expected.sum_cores);

  // Workers.
  const std::vector<taskvine::WorkerFigures> per_worker = model.PerWorker();
  ASSERT_EQ(model.workers().size(), expected.workers.size());
  for (size_t i = 0; i < expected.workers.size(); ++i) {
    const WorkerExpected& e = expected.workers[i];
    const taskvine::Worker& w = model.workers()[i];
    const taskvine::WorkerFigures& wf = per_worker[i];
    SCOPED_TRACE(e.id);
    EXPECT_EQ(w.id, e.id);
    EXPECT_EQ(w.connect_us, e.connect_us);
    EXPECT_EQ(w.disconnect_us, e.disconnect_us);
    EXPECT_EQ(w.reason, e.reason);
    EXPECT_EQ(w.cores, e.cores);
    EXPECT_EQ(w.memory_mb, e.memory_mb);
    EXPECT_EQ(w.disk_mb, e.disk_mb);
    EXPECT_NEAR(wf.lifetime_seconds, e.lifetime, 1e-6);
    EXPECT_NEAR(wf.busy_seconds, e.busy, 1e-6);
    EXPECT_EQ(wf.totals.attempts, e.attempts);
    EXPECT_NEAR(wf.totals.execute_seconds, e.task_seconds, Near(e.task_seconds));
    EXPECT_NEAR(wf.totals.allocated_core_seconds, e.allocated_core_seconds,
                Near(e.allocated_core_seconds));
  }

  // Tasks per category.
  const std::map<std::string, taskvine::AttemptTotals> per_category = model.PerCategory();
  for (const CategoryExpected& e : expected.categories) {
    SCOPED_TRACE(e.name);
    int tasks = 0, attempts = 0, retried = 0, retrieved = 0, retried_on_worker = 0,
        lost_running = 0, lost_after_completion = 0, done = 0, failed = 0;
    for (const auto& [id, task] : model.tasks()) {
      if (model.categories()[task.category] != e.name) continue;
      ++tasks;
      done += task.done;
      failed += task.Failed();
      for (const taskvine::Attempt& a : task.attempts) {
        if (a.number > 1) ++retried;
        if (!a.dispatched()) continue;
        ++attempts;
        retrieved += a.end == taskvine::AttemptEnd::kRetrieved;
        retried_on_worker += a.end == taskvine::AttemptEnd::kRetriedOnWorker;
        if (a.end == taskvine::AttemptEnd::kLost)
          ++(a.finished_on_worker ? lost_after_completion : lost_running);
      }
    }
    EXPECT_EQ(tasks, e.tasks);
    EXPECT_EQ(attempts, e.attempts);
    EXPECT_EQ(retried, e.retried);
    EXPECT_EQ(retrieved, e.retrieved);
    EXPECT_EQ(retried_on_worker, e.retried_on_worker);
    EXPECT_EQ(lost_running, e.lost_running);
    EXPECT_EQ(lost_after_completion, e.lost_after_completion);
    EXPECT_EQ(done, e.done);
    EXPECT_EQ(failed, e.failed);
    const taskvine::AttemptTotals& t = per_category.at(e.name);
    EXPECT_EQ(t.retrieved, e.retrieved);
    EXPECT_EQ(t.lost, e.lost_running + e.lost_after_completion);
    EXPECT_NEAR(t.execute_seconds, e.exec_retrieved, Near(e.exec_retrieved));
    EXPECT_NEAR(t.queue_wait_seconds, e.queue_wait, Near(e.queue_wait));
    EXPECT_NEAR(t.allocated_core_seconds, e.allocated_core_seconds, Near(e.allocated_core_seconds));
    // The reference times a lost attempt RUNNING .. DISCONNECTION even when it had finished
    // (WAITING_RETRIEVAL) before; the backend stops its clock at WAITING_RETRIEVAL.
    if (e.lost_after_completion == 0) {
      EXPECT_NEAR(t.lost_seconds, e.exec_lost, Near(e.exec_lost));
    }
  }

  // Chunk durations: successful processing tasks, their final attempt.
  std::vector<double> durations;
  for (const v1::ChunkRecord& chunk : got.measurement.chunks()) {
    if (chunk.status() == v1::CHUNK_STATUS_OK) durations.push_back(chunk.duration_seconds());
  }
  ASSERT_EQ(static_cast<int>(durations.size()), expected.chunks.count);
  std::sort(durations.begin(), durations.end());
  double sum = 0;
  for (double d : durations) sum += d;
  EXPECT_NEAR(sum / durations.size(), expected.chunks.mean, 1e-9);
  EXPECT_NEAR(durations.front(), expected.chunks.min, 1e-9);
  EXPECT_NEAR(durations.back(), expected.chunks.max, 1e-9);

  // Transfers.
  EXPECT_EQ(f.cache_updates, expected.transfers.cache_updates);
  EXPECT_EQ(f.cache_update_bytes, expected.transfers.cache_update_bytes);
  EXPECT_EQ(f.transfers_in, expected.transfers.in);
  EXPECT_EQ(f.bytes_in, expected.transfers.in_bytes);
  EXPECT_EQ(f.transfers_out, expected.transfers.out);
  EXPECT_EQ(f.bytes_out, expected.transfers.out_bytes);

  // The aggregated measurement: framed by the run's own START..END, the worker count a step
  // function, so both averages are worker-seconds / window.
  const v1::TrackingData& tracking = got.measurement.tracking();
  EXPECT_EQ(tracking.worker_count_kind(), v1::SERIES_KIND_STEP);
  for (const v1::WorkerSeries& worker : tracking.workers())
    EXPECT_EQ(worker.kind(), v1::SERIES_KIND_STEP);
  EXPECT_EQ(tracking.manager().kind(), v1::SERIES_KIND_SAMPLED);
  const v1::WorkerMetrics& m = got.measurement.metrics().workers();
  const double window = 1e-6 * static_cast<double>(expected.end_us - expected.start_us);
  EXPECT_NEAR(m.window_seconds(), window, 1e-6);
  EXPECT_NEAR(m.avg_workers(), expected.mean_workers, Near(expected.mean_workers));
  EXPECT_NEAR(m.avg_workers_over_window(), expected.mean_workers, Near(expected.mean_workers));
  EXPECT_EQ(m.peak_workers(), expected.peak_workers);
  ASSERT_TRUE(m.has_core_seconds());
  EXPECT_NEAR(m.core_seconds(), expected.core_seconds, Near(expected.core_seconds));
  // The run's core efficiency: the backend's raw execution core-seconds over the aggregated
  // core-seconds of the workers.
  EXPECT_NEAR(got.measurement.metrics().efficiency().task_execution_core_efficiency_fraction(),
              expected.core_efficiency, 1e-6);
}

// Steady: 3 workers of 2 cores; a chunk exits 3, one is resubmitted by the application, one
// exhausts its disk and is retried on the worker.
TEST(TaskVineRealRuns, SteadyRun) {
  const Collected got = Collect("runA");
  ExpectRun(kRunA, got);
  // Task 27's RETRIEVED (line 230) holds time_output_mgr = 1.8e13 s, an unsigned underflow:
  // rejected, named, and in no figure.
  EXPECT_THAT(got.measurement.warnings(),
              Contains(AllOf(Property(&v1::Warning::code, "taskvine_impossible_value"),
                             Property(&v1::Warning::message,
                                      HasSubstr("transactions line 230 field time_output_mgr")))));
  for (const v1::Span& span : got.measurement.spans()) {
    for (const v1::FineMetric& metric : span.metrics()) {
      if (metric.activity() == "output-transfer") {
        EXPECT_LT(metric.value(), 10.0) << metric.task_prefix();
      }
    }
  }
  for (const v1::Warning& warning : got.measurement.warnings()) {
    EXPECT_NE(warning.code(), "taskvine_cross_check") << warning.message();
  }
}

// Churn: workers join late, one is SIGKILLed, one SIGTERMed; 6 attempts lost and retried (one
// had finished before its worker was lost: the performance log's time_execute counts it, and
// so does the cross-check, without a false warning).
TEST(TaskVineRealRuns, ChurnRun) {
  const Collected got = Collect("runB");
  ExpectRun(kRunB, got);
  for (const v1::Warning& warning : got.measurement.warnings()) {
    EXPECT_NE(warning.code(), "taskvine_cross_check") << warning.message();
  }
}

// A worker died silently (no DISCONNECTION: its children kept the socket open) and the log has
// no MANAGER END. The reference counts that worker as connected, and its 4 open attempts as
// running, until the last record (350.7 s). The backend ends its lifetime at its last record
// (line 236, TASK 27 RUNNING at 1795440916096700), loses the 4 attempts there, and says so. The
// figures that differ from expected-runB-hung.md follow from that one change:
TEST(TaskVineRealRuns, SilentlyDeadWorkerAndNoEnd) {
  const Collected got = Collect("runB-hung");
  RunExpected corrected = kRunB_hung;
  WorkerExpected& dead = corrected.workers[1];
  ASSERT_STREQ(dead.id, "worker-412bde5046ab7559f23b41ea7a7d3188");
  constexpr int64_t kLastEvidenceUs = 1795440916096700;
  const double cut = dead.lifetime - 1e-6 * static_cast<double>(kLastEvidenceUs - dead.connect_us);
  dead.disconnect_us = kLastEvidenceUs;
  dead.reason = "SILENT";
  dead.lifetime -= cut;  // 350.701 s -> 6.418 s
  dead.busy -= cut;      // busy until its last record
  // Its 4 open attempts (tasks 24-27, 1 core each) end there: allocated core-seconds shrink by
  // the cut for each, and they count as lost while running.
  dead.allocated_core_seconds -= 4 * cut;
  corrected.worker_seconds -= cut;
  corrected.mean_workers =
      corrected.worker_seconds / (1e-6 * (corrected.end_us - corrected.start_us));
  corrected.core_seconds -= dead.cores * cut;  // 2475.6 -> 1098.5 core-seconds
  corrected.core_efficiency = 0;               // recomputed below from the weighted execution
  // It died (11.1 s) before the 1-core worker joined (14.3 s): 3 workers and 2 + 4 + 2 cores at
  // most, not 4 and 9.
  corrected.peak_workers = 3;
  corrected.peak_cores = 8;
  CategoryExpected& processing = corrected.categories[1];
  ASSERT_STREQ(processing.name, "processing");
  processing.lost_running += 4;
  processing.allocated_core_seconds -= 4 * cut;
  // The reference's efficiency times its core-seconds is the weighted execution, unchanged.
  corrected.core_efficiency =
      kRunB_hung.core_efficiency * kRunB_hung.core_seconds / corrected.core_seconds;
  // No exec_lost comparison: the reference has one lost-after-completion attempt here.
  ExpectRun(corrected, got);
  EXPECT_THAT(got.measurement.warnings(),
              Contains(AllOf(Property(&v1::Warning::code, "taskvine_worker_silent_death"),
                             Property(&v1::Warning::message,
                                      HasSubstr("worker-412bde5046ab7559f23b41ea7a7d3188")))));
  EXPECT_THAT(got.measurement.warnings(),
              Contains(Property(&v1::Warning::code, "taskvine_no_end")));
}

}  // namespace
}  // namespace roastcoffea
