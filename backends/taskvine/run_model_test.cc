// RunModel on the synthetic fixtures: every figure of testdata/expected-{1,2}.md (hand-computed),
// to the stated precision (6 decimals, 4 for fractions).
#include "backends/taskvine/run_model.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends/taskvine/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace taskvine {
namespace {

using ::testing::HasSubstr;

constexpr double kUs = 1.5e-6;  // the expected files round to microseconds

struct ExpectedAttempt {
  int64_t task;
  int attempt;
  int worker;  // 1-based, W1..W3
  double ready, running, end;
  bool lost;
  double retrieved;
  const char* result;
  int exit_code;
  double exec, running_to_end, queue_wait;
};

// Transcribed from the per-attempt tables of expected-1.md and expected-2.md.
const ExpectedAttempt kExpected1[] = {
    {1, 1, 1, 0.951204, 5.734045, 14.371591, false, 14.372200, "SUCCESS", 0, 2.426125, 8.637546,
     4.782841},
    {2, 1, 1, 0.952117, 5.734606, 14.133288, false, 14.133872, "SUCCESS", 0, 2.187822, 8.398682,
     4.782489},
    {3, 1, 1, 14.485405, 14.494621, 26.674309, false, 26.674685, "SUCCESS", 0, 12.134000, 12.179688,
     0.009216},
    {4, 1, 1, 14.486016, 14.495182, 26.167789, false, 26.168165, "SUCCESS", 0, 11.619000, 11.672607,
     0.009166},
    {5, 1, 1, 14.486627, 14.495724, 19.312179, false, 19.312555, "SUCCESS", 1, 4.755000, 4.816455,
     0.009097},
    {6, 1, 1, 14.487238, 14.496268, 27.249713, false, 27.250089, "SUCCESS", 0, 12.704000, 12.753445,
     0.009030},
    {7, 1, 2, 14.487849, 16.218355, 24.733410, true, 0, "", 0, 0, 8.515055, 1.730506},
    {8, 1, 2, 14.488460, 16.218875, 24.733410, true, 0, "", 0, 0, 8.514535, 1.730415},
    {9, 1, 2, 14.489071, 16.219418, 24.733410, true, 0, "", 0, 0, 8.513992, 1.730347},
    {10, 1, 2, 14.489682, 16.219932, 24.733410, true, 0, "", 0, 0, 8.513478, 1.730250},
    {11, 1, 1, 14.490293, 19.315310, 31.931547, false, 31.931923, "SUCCESS", 0, 12.311000,
     12.616237, 4.825017},
    {12, 1, 3, 14.490904, 31.929894, 51.526517, false, 51.526893, "SUCCESS", 0, 13.402000,
     19.596623, 17.438990},
    {13, 1, 3, 14.491515, 31.930435, 50.101517, false, 50.101893, "SUCCESS", 0, 11.977000,
     18.171082, 17.438920},
    {14, 1, 3, 14.492126, 31.930966, 50.972517, false, 50.972893, "SUCCESS", 0, 12.848000,
     19.041551, 17.438840},
    {15, 1, 1, 14.492737, 31.932648, 45.208364, false, 45.208740, "SUCCESS", 0, 13.215000,
     13.275716, 17.439911},
    {16, 1, 1, 14.493348, 38.534777, 50.635412, false, 50.635788, "SUCCESS", 0, 12.052000,
     12.100635, 24.041429},
    {17, 1, 1, 19.314860, 39.315328, 51.834882, false, 51.835258, "SUCCESS", 0, 12.463000,
     12.519554, 20.000468},
    {7, 2, 1, 24.733530, 26.168897, 39.314261, false, 39.314637, "SUCCESS", 0, 13.088000, 13.145364,
     1.435367},
    {8, 2, 1, 24.733625, 26.675388, 38.533671, false, 38.534047, "SUCCESS", 0, 11.813000, 11.858283,
     1.941763},
    {9, 2, 1, 24.733720, 27.250793, 41.829995, false, 41.830371, "SUCCESS", 0, 14.526000, 14.579202,
     2.517073},
    {10, 2, 3, 24.733815, 31.929337, 50.880517, false, 50.880893, "SUCCESS", 0, 12.756000,
     18.951180, 7.195522},
    {18, 1, 1, 41.832376, 41.833118, 45.389591, false, 45.389967, "SUCCESS", 0, 3.512000, 3.556473,
     0.000742},
    {19, 1, 3, 51.837263, 51.837971, 55.273113, false, 55.273489, "SUCCESS", 0, 3.287000, 3.435142,
     0.000708},
    {20, 1, 1, 55.275194, 55.275607, 59.536532, false, 59.674359, "SUCCESS", 0, 4.106000, 4.260925,
     0.000413},
};
const ExpectedAttempt kExpected2[] = {
    {1, 1, 1, 1.204117, 12.623644, 21.038996, false, 21.039372, "SUCCESS", 0, 8.412000, 8.415352,
     11.419527},
    {2, 1, 1, 1.204350, 12.624039, 20.608365, false, 20.608741, "SUCCESS", 0, 7.981000, 7.984326,
     11.419689},
    {3, 1, 1, 1.204583, 12.624475, 21.831297, false, 21.831673, "SUCCESS", 1, 9.204000, 9.206822,
     11.419892},
    {4, 1, 1, 1.204816, 12.624895, 21.283279, false, 21.283655, "SUCCESS", 0, 8.655000, 8.658384,
     11.420079},
    {5, 1, 2, 1.205049, 13.952992, 19.870116, true, 0, "", 0, 0, 5.917124, 12.747943},
    {6, 1, 2, 1.205282, 13.953431, 19.870116, true, 0, "", 0, 0, 5.916685, 12.748149},
    {7, 1, 2, 1.205515, 13.953856, 19.870116, true, 0, "", 0, 0, 5.916260, 12.748341},
    {8, 1, 2, 1.205748, 13.954283, 19.870116, true, 0, "", 0, 0, 5.915833, 12.748535},
    {9, 1, 1, 1.205981, 28.716491, 37.717548, false, 37.717924, "SUCCESS", 0, 8.998000, 9.001057,
     27.510510},
    {10, 1, 1, 1.206214, 30.224505, 38.460477, false, 38.460853, "SUCCESS", 0, 8.233000, 8.235972,
     29.018291},
    {11, 1, 1, 1.206447, 30.227854, 39.642609, false, 39.642985, "SUCCESS", 0, 9.412000, 9.414755,
     29.021407},
    {12, 1, 1, 1.206680, 30.920861, 38.942924, false, 38.943300, "SUCCESS", 0, 8.019000, 8.022063,
     29.714181},
    {13, 1, 1, 1.206913, 37.718574, 46.595444, false, 46.595820, "SUCCESS", 0, 8.874000, 8.876870,
     36.511661},
    {14, 1, 3, 1.207146, 38.171124, 47.279377, false, 47.279753, "SUCCESS", 0, 9.105000, 9.108253,
     36.963978},
    {15, 1, 3, 1.207379, 38.171540, 46.086797, false, 46.087173, "SUCCESS", 0, 7.912000, 7.915257,
     36.964161},
    {16, 1, 3, 1.207612, 38.171976, 46.741280, false, 46.741656, "SUCCESS", 0, 8.566000, 8.569304,
     36.964364},
    {5, 2, 1, 19.870246, 20.609412, 28.715417, false, 28.715793, "SUCCESS", 0, 8.103000, 8.106005,
     0.739166},
    {6, 2, 1, 19.870343, 21.040068, 30.919835, false, 30.920211, "SUCCESS", 0, 9.877000, 9.879767,
     1.169725},
    {7, 2, 1, 19.870440, 21.284349, 30.225005, false, 30.225381, "SUCCESS", 0, 8.321000, 8.940656,
     1.413909},
    {8, 2, 1, 19.870537, 21.834555, 30.223479, false, 30.223855, "SUCCESS", 0, 7.744000, 8.388924,
     1.964018},
    {19, 1, 3, 21.834178, 38.172380, 46.877567, false, 46.877943, "SUCCESS", 0, 8.702000, 8.705187,
     16.338202},
    {21, 1, 1, 30.227486, 38.461542, 41.275697, false, 41.276073, "SUCCESS", 0, 2.811000, 2.814155,
     8.234056},
    {22, 1, 1, 46.089278, 46.089679, 49.130666, false, 49.131042, "SUCCESS", 0, 3.011000, 3.040987,
     0.000401},
    {23, 1, 3, 47.281858, 47.282270, 50.522452, false, 50.522828, "SUCCESS", 0, 3.211000, 3.240182,
     0.000412},
    {24, 1, 1, 50.524733, 50.525110, 52.488614, false, 52.514235, "SUCCESS", 0, 1.934000, 1.963504,
     0.000377},
};

RunModel Load(const std::string& name) {
  RunModel model;
  const std::string dir = "backends/taskvine/testdata/";
  EXPECT_TRUE(FeedFile(dir + name + "-transactions.txt", false, &model).ok());
  EXPECT_TRUE(FeedFile(dir + name + "-performance.txt", true, &model).ok());
  return model;
}

double Rel(int64_t us, int64_t t0) { return static_cast<double>(us - t0) * 1e-6; }

void CheckAttempts(const RunModel& model, int64_t t0, const ExpectedAttempt* expected, size_t n,
                   const std::vector<std::string>& worker_ids) {
  size_t dispatched = 0;
  for (const auto& [id, task] : model.tasks()) {
    for (const Attempt& a : task.attempts) dispatched += a.dispatched();
  }
  EXPECT_EQ(dispatched, n);
  for (size_t i = 0; i < n; ++i) {
    const ExpectedAttempt& e = expected[i];
    SCOPED_TRACE(testing::Message() << "task " << e.task << " attempt " << e.attempt);
    const Task* task = model.tasks().find(e.task);
    ASSERT_NE(task, nullptr);
    ASSERT_GE(task->attempts.size(), static_cast<size_t>(e.attempt));
    const Attempt& a = task->attempts[e.attempt - 1];
    EXPECT_EQ(a.number, e.attempt);
    ASSERT_GE(a.worker, 0);
    EXPECT_EQ(model.workers()[a.worker].id, worker_ids[e.worker - 1]);
    EXPECT_NEAR(Rel(a.ready_us, t0), e.ready, kUs);
    EXPECT_NEAR(Rel(a.running_us, t0), e.running, kUs);
    EXPECT_NEAR(Rel(a.end_us, t0), e.end, kUs);
    EXPECT_EQ(a.end == AttemptEnd::kLost, e.lost);
    EXPECT_NEAR(Rel(a.end_us, t0) - Rel(a.running_us, t0), e.running_to_end, kUs);
    EXPECT_NEAR(Rel(a.running_us, t0) - Rel(a.ready_us, t0), e.queue_wait, kUs);
    if (!e.lost) {
      EXPECT_EQ(a.end, AttemptEnd::kRetrieved);
      EXPECT_NEAR(Rel(a.retrieved_us, t0), e.retrieved, kUs);
      EXPECT_EQ(a.result, e.result);
      EXPECT_EQ(a.exit_code, e.exit_code);
      bool fallback = true;
      EXPECT_NEAR(a.ExecutionSeconds(&fallback), e.exec, kUs);
      EXPECT_FALSE(fallback);
    }
  }
}

std::vector<double> WorkerCountSteps(const v1::TrackingData& tracking, int64_t t0,
                                     std::vector<int>* counts) {
  // Collapses the step pairs into (time, new count) changes.
  std::vector<double> times;
  for (int i = 0; i < tracking.worker_count_size(); ++i) {
    const int count = tracking.worker_count(i);
    if (!counts->empty() && counts->back() == count) continue;
    counts->push_back(count);
    times.push_back(Rel(tracking.worker_count_time_unix_ns(i) / 1000, t0));
  }
  return times;
}

TEST(RunModelSynthetic1, WorkersAndRun) {
  const RunModel model = Load("synthetic-1");
  const int64_t t0 = 1763035200000000;
  EXPECT_EQ(model.malformed_count(), 0);
  EXPECT_EQ(model.partial_last_lines(), 0);
  const RunFigures f = model.Figures();
  EXPECT_EQ(f.start_us, t0);
  EXPECT_TRUE(f.ended);
  EXPECT_NEAR(Rel(f.end_us, t0), 60.980194, kUs);
  ASSERT_EQ(model.workers().size(), 3u);
  const std::vector<std::string> ids = {"worker-7c2e9f04b1a35d68e0f4c9b27a1d3e55",
                                        "worker-d41f0a8c6e2b97315fa0c4e8b2d6a913",
                                        "worker-0b9e5d27c3f8a1164e2d7b5c9f0a38e1"};
  const double lifetimes[] = {56.967176, 18.998504, 30.772580};
  const char* reasons[] = {"EXPLICIT", "FAILURE", "EXPLICIT"};
  const char* addresses[] = {"10.32.85.17:40112", "10.32.85.23:51874", "10.32.86.101:38290"};
  const std::vector<WorkerFigures> per_worker = model.PerWorker();
  for (int i = 0; i < 3; ++i) {
    const Worker& w = model.workers()[i];
    EXPECT_EQ(w.id, ids[i]);
    EXPECT_EQ(w.address, addresses[i]);
    EXPECT_EQ(w.reason, reasons[i]);
    EXPECT_EQ(w.cores, 4);
    EXPECT_EQ(w.memory_mb, 8192);
    EXPECT_EQ(w.disk_mb, 20000);
    EXPECT_NEAR(per_worker[i].lifetime_seconds, lifetimes[i], kUs);
  }
  EXPECT_EQ(f.workers_joined, 3);
  EXPECT_NEAR(f.worker_seconds, 106.738260, kUs);
  // The study's mean workers: worker-seconds over the run (aggregation's time average of the
  // step series gives the same, //tools:taskvine_real_runs_test).
  EXPECT_NEAR(f.worker_seconds / (1e-6 * static_cast<double>(f.end_us - f.start_us)), 1.750376,
              1e-6);
  EXPECT_NEAR(f.core_seconds_available, 426.953040, 4 * kUs);

  std::vector<int> counts;
  const std::vector<double> times = WorkerCountSteps(model.Tracking(), t0, &counts);
  EXPECT_EQ(counts, (std::vector<int>{0, 1, 2, 1, 2, 1, 0}));
  const double expected_times[] = {0,         4.012388,  5.734906, 24.733410,
                                   30.207144, 60.979564, 60.979724};
  ASSERT_EQ(times.size(), 7u);
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(times[i], expected_times[i], kUs) << i;
}

// The worker count's step series: at every change the state before, then the state after, at
// its instant; so between two instants nothing changes (the first sample of an instant repeats
// the state that held up to it).
template <typename Column>
void ExpectBeforeAfterPairs(const google::protobuf::RepeatedField<int64_t>& times,
                            const Column& values) {
  for (int i = 0; i + 1 < times.size(); ++i) {
    ASSERT_LE(times[i], times[i + 1]) << i;
    if (times[i] < times[i + 1]) {
      EXPECT_EQ(values[i], values[i + 1]) << i;
    }
  }
}

// A worker's step series: one point per change (its state from then on), then the point that
// ends it, which alone may share the last change's instant (a disconnection); its cores and
// limits stored once.
void ExpectOnePointPerChange(const v1::WorkerSeries& s) {
  const int n = s.time_unix_ns_size();
  ASSERT_GE(n, 2);
  for (int i = 0; i + 2 < n; ++i) EXPECT_LT(s.time_unix_ns(i), s.time_unix_ns(i + 1)) << i;
  EXPECT_LE(s.time_unix_ns(n - 2), s.time_unix_ns(n - 1));
  for (const int size :
       {s.executing_tasks_size(), s.active_tasks_size(), s.last_seen_unix_seconds_size()}) {
    EXPECT_EQ(size, n);
  }
  // Its cores and limits, fixed, stored once.
  for (const int size : {s.cores_size(), s.memory_limit_bytes_size(), s.disk_limit_bytes_size()}) {
    EXPECT_EQ(size, 1);
  }
}

TEST(RunModelSynthetic1, TrackingSeriesAreStepsWithOnePointPerWorkerChange) {
  const RunModel model = Load("synthetic-1");
  const v1::TrackingData tracking = model.Tracking();
  EXPECT_EQ(tracking.worker_count_kind(), v1::SERIES_KIND_STEP);
  ExpectBeforeAfterPairs(tracking.worker_count_time_unix_ns(), tracking.worker_count());
  ExpectBeforeAfterPairs(tracking.worker_count_time_unix_ns(), tracking.queued_chunks());
  ASSERT_EQ(tracking.workers_size(), 3);
  for (const v1::WorkerSeries& s : tracking.workers()) {
    SCOPED_TRACE(s.worker());
    EXPECT_EQ(s.kind(), v1::SERIES_KIND_STEP);
    ExpectOnePointPerChange(s);
  }
  EXPECT_EQ(tracking.manager().kind(), v1::SERIES_KIND_SAMPLED);
}

TEST(RunModelSynthetic1, PerWorkerFiguresOfAWindow) {
  const RunModel model = Load("synthetic-1");
  const RunFigures f = model.Figures();
  const std::vector<WorkerFigures> whole = model.PerWorker();
  // The run's own window gives the whole-run figures.
  const std::vector<WorkerFigures> same = model.PerWorkerInWindow(f.start_us, f.end_us);
  // Two halves add up to the whole for every additive figure.
  const int64_t mid = f.start_us + 27'000'000;
  const std::vector<WorkerFigures> first = model.PerWorkerInWindow(f.start_us, mid);
  const std::vector<WorkerFigures> second = model.PerWorkerInWindow(mid, f.end_us);
  ASSERT_EQ(same.size(), whole.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    SCOPED_TRACE(whole[i].worker);
    EXPECT_EQ(same[i].worker, whole[i].worker);
    EXPECT_NEAR(same[i].lifetime_seconds, whole[i].lifetime_seconds, kUs);
    EXPECT_NEAR(same[i].busy_seconds, whole[i].busy_seconds, kUs);
    EXPECT_NEAR(same[i].totals.allocated_core_seconds, whole[i].totals.allocated_core_seconds,
                4 * kUs);
    EXPECT_NEAR(same[i].utilisation_fraction, whole[i].utilisation_fraction, 1e-9);
    EXPECT_EQ(same[i].totals.attempts, whole[i].totals.attempts);
    EXPECT_NEAR(same[i].totals.execute_seconds, whole[i].totals.execute_seconds, kUs);
    EXPECT_NEAR(first[i].lifetime_seconds + second[i].lifetime_seconds, whole[i].lifetime_seconds,
                kUs);
    EXPECT_NEAR(first[i].busy_seconds + second[i].busy_seconds, whole[i].busy_seconds, kUs);
    EXPECT_NEAR(first[i].totals.allocated_core_seconds + second[i].totals.allocated_core_seconds,
                whole[i].totals.allocated_core_seconds, 4 * kUs);
    for (const WorkerFigures* half : {&first[i], &second[i]}) {
      EXPECT_LE(half->utilisation_fraction, 1.0 + 1e-9);
      EXPECT_LE(half->busy_fraction, 1.0 + 1e-9);
    }
  }
  // Worker 1 (d41f...) left at 24.7 s: it has no time in the second half.
  EXPECT_EQ(second[1].lifetime_seconds, 0);
  EXPECT_EQ(second[1].busy_seconds, 0);
  EXPECT_EQ(second[1].utilisation_fraction, 0);
  // A window before the run has nothing.
  for (const WorkerFigures& w : model.PerWorkerInWindow(f.start_us - 10'000'000, f.start_us - 1)) {
    EXPECT_EQ(w.lifetime_seconds, 0);
    EXPECT_EQ(w.totals.attempts, 0);
  }
}

TEST(RunModelSynthetic1, EveryAttempt) {
  const RunModel model = Load("synthetic-1");
  std::vector<std::string> ids;
  for (const Worker& w : model.workers()) ids.push_back(w.id);
  CheckAttempts(model, 1763035200000000, kExpected1, sizeof(kExpected1) / sizeof(kExpected1[0]),
                ids);
  const RunFigures f = model.Figures();
  EXPECT_EQ(f.tasks, 20);
  EXPECT_EQ(f.attempts, 24);
  EXPECT_EQ(f.tasks_done, 20);
  EXPECT_EQ(f.tasks_failed, 1);
  EXPECT_EQ(f.libraries, 0);
  EXPECT_TRUE(model.tasks().at(5).Failed());
  EXPECT_EQ(model.tasks().at(5).result, "SUCCESS");
  EXPECT_EQ(model.tasks().at(5).exit_code, 1);
  EXPECT_NEAR(f.execute_seconds, 197.181947, 1e-5);
  EXPECT_NEAR(f.execute_seconds / 20, 9.859097, 1e-6);
  // Turnaround (DONE - first READY) and makespan.
  const int64_t t0 = 1763035200000000;
  auto turnaround = [&](int64_t id) {
    const Task& t = model.tasks().at(id);
    return Rel(t.done_us, t0) - Rel(t.attempts.front().ready_us, t0);
  };
  EXPECT_NEAR(turnaround(7), 24.826993, kUs);
  EXPECT_NEAR(turnaround(12), 37.036194, kUs);
  EXPECT_NEAR(turnaround(20), 4.399370, kUs);
  int64_t first_ready = INT64_MAX, last_done = 0;
  for (const auto& [id, t] : model.tasks()) {
    first_ready = std::min(first_ready, t.attempts.front().ready_us);
    last_done = std::max(last_done, t.done_us);
  }
  EXPECT_NEAR(Rel(last_done, first_ready), 58.723360, kUs);
}

TEST(RunModelSynthetic1, ProcessingChunks) {
  const RunModel model = Load("synthetic-1");
  const std::map<std::string, AttemptTotals> per_category = model.PerCategory();
  const AttemptTotals& processing = per_category.at("processing");
  EXPECT_EQ(processing.attempts, 19);
  EXPECT_EQ(processing.lost, 4);
  EXPECT_EQ(processing.retrieved, 15);
  EXPECT_EQ(per_category.at("preprocessing").attempts, 2);
  EXPECT_EQ(per_category.at("accumulating").attempts, 3);

  const std::vector<v1::ChunkRecord> chunks = model.ChunkRecords("processing");
  ASSERT_EQ(chunks.size(), 15u);
  std::vector<double> ok;
  int failed = 0, retried = 0;
  for (const v1::ChunkRecord& c : chunks) {
    if (c.status() == v1::CHUNK_STATUS_OK) ok.push_back(c.duration_seconds());
    if (c.status() == v1::CHUNK_STATUS_FAILED) {
      ++failed;
      EXPECT_EQ(c.uuid(), "taskvine-task-5");
      EXPECT_EQ(c.task_id(), "5");
      EXPECT_THAT(c.error_text(), HasSubstr("exit code 1"));
    }
    if (c.attempt() > 0) {
      ++retried;
      EXPECT_THAT(c.error_text(), HasSubstr("1 earlier attempt lost"));
    }
  }
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(retried, 4);
  ASSERT_EQ(ok.size(), 14u);
  double sum = 0;
  for (double d : ok) sum += d;
  std::sort(ok.begin(), ok.end());
  EXPECT_NEAR(sum, 176.908, 1e-5);
  EXPECT_NEAR(sum / 14, 12.636286, 1e-6);
  EXPECT_NEAR((ok[6] + ok[7]) / 2, 12.5835, 1e-6);
  EXPECT_NEAR(ok.front(), 11.619, 1e-6);
  EXPECT_NEAR(ok.back(), 14.526, 1e-6);
  // Task 9's successful attempt ran on W1 from time_worker_start to time_worker_end.
  const v1::ChunkRecord& nine = chunks[6];
  EXPECT_EQ(nine.uuid(), "taskvine-task-9");
  EXPECT_EQ(nine.task_id(), "9");
  EXPECT_EQ(nine.worker(), "worker-7c2e9f04b1a35d68e0f4c9b27a1d3e55");
  EXPECT_NEAR((nine.end_unix_ns() - nine.start_unix_ns()) * 1e-9, 14.526, 1e-6);
}

TEST(RunModelSynthetic1, PerWorkerBusyAndUtilisation) {
  const RunModel model = Load("synthetic-1");
  const std::vector<WorkerFigures> w = model.PerWorker();
  ASSERT_EQ(w.size(), 3u);
  const double busy[] = {50.238732, 8.515055, 23.032322};
  const double exec[] = {142.911947, 0, 54.27};
  const double allocated[] = {156.370812, 34.057060, 79.195578};
  const double utilisation[] = {0.6862, 0.4482, 0.6434};
  const int attempts[] = {15, 4, 5};
  const int lost[] = {0, 4, 0};
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_NEAR(w[i].busy_seconds, busy[i], kUs);
    EXPECT_NEAR(w[i].totals.execute_seconds, exec[i], 1e-5);
    EXPECT_NEAR(w[i].totals.allocated_core_seconds, allocated[i], 1e-5);
    EXPECT_NEAR(w[i].utilisation_fraction, utilisation[i], 5e-5);
    EXPECT_EQ(w[i].totals.attempts, attempts[i]);
    EXPECT_EQ(w[i].totals.lost, lost[i]);
  }
  EXPECT_NEAR(w[1].totals.lost_seconds, 34.057060, 1e-5);
  const RunFigures f = model.Figures();
  // The study's core efficiency: cores x execution over cores x worker lifetime.
  EXPECT_NEAR(f.weighted_execute_seconds / f.core_seconds_available, 0.4618, 5e-5);
  EXPECT_NEAR(f.allocated_core_seconds, 269.623450, 1e-5);
  EXPECT_NEAR(f.allocated_core_seconds / f.core_seconds_available, 0.6315, 5e-5);
  EXPECT_NEAR(f.lost_seconds, 34.057060, 1e-5);
}

TEST(RunModelSynthetic1, TransfersAndPerformanceLog) {
  const RunModel model = Load("synthetic-1");
  const RunFigures f = model.Figures();
  EXPECT_EQ(f.transfers_in, 36);
  EXPECT_EQ(f.bytes_in, 638937672);
  EXPECT_EQ(f.transfers_out, 3);
  EXPECT_EQ(f.bytes_out, 15841157);
  EXPECT_EQ(f.cache_updates, 26);
  ASSERT_TRUE(model.has_performance_header());
  ASSERT_EQ(model.performance().size(), 30u);
  double max_connected = 0;
  for (const PerfSample& s : model.performance())
    max_connected = std::max(max_connected, s.workers_connected);
  EXPECT_EQ(max_connected, 2);
  const PerfSample& last = model.performance().back();
  EXPECT_EQ(last.time_us, 1763035260979934);
  EXPECT_EQ(last.workers_joined, 3);
  EXPECT_EQ(last.workers_removed, 3);
  EXPECT_EQ(last.workers_lost, 1);
  EXPECT_EQ(last.tasks_submitted, 20);
  EXPECT_EQ(last.tasks_dispatched, 24);
  EXPECT_EQ(last.tasks_done, 20);
  EXPECT_EQ(last.time_execute_us, 197181947);
  EXPECT_EQ(last.bytes_sent, 638937672);
  EXPECT_EQ(last.bytes_received, 15841157);
  EXPECT_EQ(last.total_cores, 0);
  // The re-queue in progress, written inside a state change.
  int found = 0;
  for (const PerfSample& s : model.performance()) {
    if (s.time_us == 1763035224733530) {
      EXPECT_EQ(s.tasks_waiting, 7);
      EXPECT_EQ(s.tasks_running, 7);
      ++found;
    }
    if (s.time_us == 1763035224733930) {
      EXPECT_EQ(s.tasks_waiting, 10);
      EXPECT_EQ(s.tasks_running, 4);
      ++found;
    }
  }
  EXPECT_EQ(found, 2);
  // The logs agree: no cross-check warning, no other warning.
  EXPECT_THAT(model.Warnings(), testing::IsEmpty());
  const v1::TrackingData tracking = model.Tracking();
  ASSERT_EQ(tracking.manager().time_unix_ns_size(), 30);
  EXPECT_EQ(tracking.manager().bytes_sent(29), 638937672);
  ASSERT_EQ(tracking.workers_size(), 3);
  for (const v1::WorkerSeries& s : tracking.workers()) {
    // A worker's cores and limits, fixed, are stored once (schema/worker_series_columns.h).
    EXPECT_EQ(s.cores_size(), 1);
    EXPECT_EQ(s.cores(0), 4);
    EXPECT_EQ(s.executing_tasks_size(), s.time_unix_ns_size());
    EXPECT_EQ(s.disk_limit_bytes_size(), 1);
    EXPECT_EQ(s.disk_limit_bytes(0), 20000.0 * 1024 * 1024);
    EXPECT_EQ(s.memory_limit_bytes_size(), 1);
    EXPECT_EQ(s.memory_limit_bytes(0), 8192.0 * 1024 * 1024);
  }
  EXPECT_EQ(tracking.queued_chunks_size(), tracking.worker_count_size());
}

// A live run read without --follow: no MANAGER END, and the performance log (written
// periodically) behind the transactions log. Its lag is no disagreement: no cross-check
// warning. The same lag in a run that ended is one.
TEST(RunModelSynthetic1, NoCrossCheckWithoutManagerEnd) {
  std::vector<std::string> txn, perf;
  {
    std::ifstream in("backends/taskvine/testdata/synthetic-1-transactions.txt");
    for (std::string line; std::getline(in, line);) txn.push_back(line);
    std::ifstream in_perf("backends/taskvine/testdata/synthetic-1-performance.txt");
    for (std::string line; std::getline(in_perf, line);) perf.push_back(line);
  }
  ASSERT_GT(perf.size(), 10u);
  perf.resize(perf.size() / 2);  // lagging
  const auto load = [&](bool with_end) {
    RunModel model;
    int64_t n = 0;
    for (const std::string& line : txn) {
      ++n;
      if (!with_end && line.find(" MANAGER ") != std::string::npos &&
          line.find(" END ") != std::string::npos)
        continue;
      model.ConsumeTransactionLine(line, n);
    }
    n = 0;
    for (const std::string& line : perf) model.ConsumePerformanceLine(line, ++n);
    return model;
  };
  const auto cross_checks = [](const RunModel& model) {
    int found = 0;
    for (const CodedNote& note : model.CodedWarnings())
      found += note.code == "taskvine_cross_check";
    return found;
  };
  const RunModel live = load(false);
  EXPECT_FALSE(live.ended());
  EXPECT_EQ(cross_checks(live), 0);
  EXPECT_THAT(live.Warnings(), testing::Contains(testing::HasSubstr("not cross-checked")));
  const RunModel ended = load(true);
  EXPECT_TRUE(ended.ended());
  EXPECT_GT(cross_checks(ended), 0);
}

// Every warning of a log without START or END, with a record that goes back in time, a malformed
// line, a record of an unknown worker and an attempt without worker times: each has its code,
// in the order CodedWarnings() promises (what a report lists first).
TEST(RunModelWarnings, EachWarningHasItsCodeInTheReportedOrder) {
  RunModel model;
  int64_t n = 0;
  for (const char* line : {
           "1000000 7 TASK 1 READY c FIRST_RESOURCES 1 {}",
           "1100000 7 WORKER worker-a CONNECTION 10.0.0.1:9000",
           "2000000 7 TASK 1 RUNNING worker-a FIRST_RESOURCES {\"cores\":[1,\"cores\"]}",
           "1500000 7 WORKER worker-a RESOURCES {\"cores\":[2,\"cores\"]}",
           "not a transaction",
           "2500000 7 WORKER worker-x RESOURCES {\"cores\":[2,\"cores\"]}",
           "3000000 7 TASK 1 WAITING_RETRIEVAL worker-a",
           "3000100 7 TASK 1 RETRIEVED SUCCESS 0 {} {}",
           "3000200 7 TASK 1 DONE SUCCESS 0",
       }) {
    model.ConsumeTransactionLine(line, ++n);
  }
  std::vector<std::string> codes;
  for (const CodedNote& note : model.CodedWarnings()) codes.push_back(note.code);
  EXPECT_THAT(codes, testing::ElementsAre("taskvine_time_backwards", "taskvine_malformed_line",
                                          "taskvine_log", "taskvine_log", "taskvine_no_end",
                                          "taskvine_log"));
  const std::vector<std::string> warnings = model.Warnings();
  ASSERT_EQ(warnings.size(), 6u);
  EXPECT_THAT(warnings[0], HasSubstr("transactions line 4 goes back 0.500000 s"));
  EXPECT_THAT(warnings[1], HasSubstr("transactions line 5"));
  EXPECT_THAT(warnings[2], HasSubstr("1 records name a worker that never connected"));
  EXPECT_THAT(warnings[3], HasSubstr("no MANAGER START"));
  EXPECT_THAT(warnings[4], HasSubstr("no MANAGER END"));
  EXPECT_THAT(warnings[5], HasSubstr("1 retrieved attempts have no worker start/end times"));
}

// A 3-core worker running three tasks at once, then a fourth after one ended: each concurrent
// task has its own slot, and a freed slot is reused (the HTML timeline's rows).
TEST(AssignSlots, ConcurrentTasksOfAWorkerGetTheirOwnSlots) {
  std::vector<v1::ChunkRecord> records(6);
  const auto set = [&](int i, const char* worker, int64_t start, int64_t end) {
    records[i].set_worker(worker);
    records[i].set_start_unix_ns(start);
    records[i].set_end_unix_ns(end);
  };
  set(0, "w3", 0, 10);
  set(1, "w3", 1, 5);
  set(2, "w3", 2, 8);
  set(3, "w3", 5, 9);  // starts as record 1 ends: its slot
  set(4, "w1", 0, 10);
  set(5, "w1", 10, 20);  // one core: always slot 0
  AssignSlots(records);
  EXPECT_EQ(records[0].thread_index(), 0);
  EXPECT_EQ(records[1].thread_index(), 1);
  EXPECT_EQ(records[2].thread_index(), 2);
  EXPECT_EQ(records[3].thread_index(), 1);
  EXPECT_EQ(records[4].thread_index(), 0);
  EXPECT_EQ(records[5].thread_index(), 0);
}

// A worker killed without its process group: its children hold the connection, the manager
// sees nothing more from it and disconnects it with FAILURE only when the keepalive gives up.
// It counts as connected and busy until then (faithful to the log), but its silence is said:
// a warning with a stable code, and the series' last_seen stops at its last record.
TEST(RunModelSilentWorker, DisconnectedAfterASilenceIsSaidWithItsLastRecord) {
  RunModel model;
  int64_t n = 0;
  for (const char* line : {
           "1000000000000000 7 MANAGER 7 START 0",
           "1000000000000000 7 TASK 1 READY processing FIRST_RESOURCES 1 {\"cores\":[1,\"cores\"]}",
           "1000000000100000 7 WORKER worker-k CONNECTION 127.0.0.1:9000",
           "1000000000100000 7 WORKER worker-k RESOURCES {\"cores\":[2,\"cores\"]}",
           "1000000000200000 7 WORKER worker-e CONNECTION 127.0.0.1:9001",
           "1000000001000000 7 TASK 1 RUNNING worker-k FIRST_RESOURCES {\"cores\":[1,\"cores\"]}",
           "1000000020000000 7 WORKER worker-k DISCONNECTION FAILURE",
           "1000000030000000 7 WORKER worker-e DISCONNECTION EXPLICIT",
           "1000000031000000 7 MANAGER 7 END 0",
       }) {
    model.ConsumeTransactionLine(line, ++n);
  }
  model.MarkLogComplete();
  int said = 0;
  for (const CodedNote& note : model.CodedWarnings()) {
    if (note.code != "taskvine_worker_silent_before_disconnect") continue;
    ++said;
    EXPECT_THAT(note.message, testing::HasSubstr("worker-k"));
    EXPECT_THAT(note.message, testing::HasSubstr("silent since 1.000 s after START"));
    EXPECT_THAT(note.message, testing::HasSubstr("FAILURE 19.0 s later"));
    EXPECT_THAT(note.message, testing::HasSubstr("busy (1 attempt on it, lost)"));
  }
  EXPECT_EQ(said, 1) << "worker-e left EXPLICIT: its silence is no sign of death";
  const v1::TrackingData tracking = model.Tracking();
  ASSERT_EQ(tracking.workers_size(), 2);
  const v1::WorkerSeries& killed = tracking.workers(0);
  ASSERT_EQ(killed.last_seen_unix_seconds_size(), killed.time_unix_ns_size());
  EXPECT_DOUBLE_EQ(killed.time_unix_ns(killed.time_unix_ns_size() - 1) * 1e-9, 1000000020.0);
  EXPECT_NEAR(killed.last_seen_unix_seconds(killed.last_seen_unix_seconds_size() - 1), 1000000001.0,
              1e-6);
}

TEST(RunModelSynthetic2, LibrariesAndFunctionCalls) {
  const RunModel model = Load("synthetic-2");
  const int64_t t0 = 1763121600000000;
  EXPECT_EQ(model.malformed_count(), 0);
  const RunFigures f = model.Figures();
  EXPECT_NEAR(Rel(f.end_us, t0), 53.327294, kUs);
  EXPECT_EQ(f.libraries, 3);
  EXPECT_EQ(f.tasks, 21);
  EXPECT_EQ(f.attempts, 25);
  EXPECT_EQ(f.tasks_failed, 1);
  EXPECT_TRUE(model.tasks().at(3).Failed());
  for (int64_t library : {17, 18, 20}) EXPECT_EQ(model.tasks().count(library), 0u);
  std::vector<std::string> ids;
  for (const Worker& w : model.workers()) ids.push_back(w.id);
  ASSERT_EQ(ids.size(), 3u);
  CheckAttempts(model, t0, kExpected2, sizeof(kExpected2) / sizeof(kExpected2[0]), ids);

  const double lifetimes[] = {50.208194, 16.467345, 24.376094};
  const double startup[] = {7.946921, 8.004045, 7.946472};
  const double busy[] = {38.470526, 5.917124, 12.348435};
  const double exec[] = {119.589, 0, 37.496};
  const std::vector<WorkerFigures> per_worker = model.PerWorker();
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    const Worker& w = model.workers()[i];
    EXPECT_NEAR(per_worker[i].lifetime_seconds, lifetimes[i], kUs);
    EXPECT_NEAR(Rel(w.library_started_us, w.library_sent_us), startup[i], kUs);
    EXPECT_NEAR(per_worker[i].busy_seconds, busy[i], kUs);
    EXPECT_NEAR(per_worker[i].totals.execute_seconds, exec[i], 1e-5);
    EXPECT_EQ(w.library_cores, 4);
  }
  EXPECT_NEAR(f.worker_seconds, 91.051633, kUs);
  EXPECT_NEAR(f.worker_seconds / (1e-6 * static_cast<double>(f.end_us - f.start_us)), 1.707411,
              1e-6);
  const v1::TrackingData count_series = model.Tracking();
  EXPECT_EQ(
      *std::max_element(count_series.worker_count().begin(), count_series.worker_count().end()), 2);
  EXPECT_NEAR(f.execute_seconds, 157.085, 1e-5);
  EXPECT_NEAR(f.function_slot_seconds, 247.125416, 1e-5);
  EXPECT_NEAR(f.weighted_execute_seconds / f.core_seconds_available, 0.4313, 5e-5);
  // 157.085 / 247.125416 = 0.635649: the expected file prints 0.6357 (rounded up at the 6th digit).
  EXPECT_NEAR(f.execute_seconds / f.function_slot_seconds, 0.6357, 6e-5);
  EXPECT_EQ(f.allocated_core_seconds, 0);  // function calls are allocated 0 cores

  // Map calls (category of process_chunk) and reduce calls.
  const std::map<std::string, AttemptTotals> per_category = model.PerCategory();
  const AttemptTotals& map = per_category.at("<function_process_chunk_at_0x7f3a2c1e5d30>");
  const AttemptTotals& reduce = per_category.at("<function_merge_hists_at_0x7f3a2c1e5ee0>");
  EXPECT_EQ(map.retrieved, 17);
  EXPECT_NEAR(map.execute_seconds, 146.118, 1e-5);
  EXPECT_NEAR(reduce.execute_seconds, 10.967, 1e-5);
  const std::vector<v1::ChunkRecord> chunks =
      model.ChunkRecords("<function_process_chunk_at_0x7f3a2c1e5d30>");
  ASSERT_EQ(chunks.size(), 17u);
  double ok_sum = 0;
  int ok = 0;
  for (const v1::ChunkRecord& c : chunks) {
    if (c.status() == v1::CHUNK_STATUS_OK) {
      ok_sum += c.duration_seconds();
      ++ok;
    }
  }
  EXPECT_EQ(ok, 16);
  EXPECT_NEAR(ok_sum / 16, 8.557125, 1e-6);
  int64_t first_ready = INT64_MAX, last_done = 0;
  for (const auto& [id, t] : model.tasks()) {
    first_ready = std::min(first_ready, t.attempts.front().ready_us);
    last_done = std::max(last_done, t.done_us);
  }
  EXPECT_NEAR(Rel(last_done, first_ready), 51.310323, kUs);

  EXPECT_EQ(f.transfers_in, 34);
  EXPECT_EQ(f.bytes_in, 471997398);
  EXPECT_EQ(f.transfers_out, 1);
  EXPECT_EQ(f.bytes_out, 2883584);
  EXPECT_EQ(f.cache_updates, 26);
  ASSERT_EQ(model.performance().size(), 33u);
  const PerfSample& last = model.performance().back();
  EXPECT_EQ(last.tasks_dispatched, 28);
  EXPECT_EQ(last.tasks_done, 21);
  EXPECT_EQ(last.tasks_submitted, 21);
  double max_running = 0;
  for (const PerfSample& s : model.performance())
    max_running = std::max(max_running, s.tasks_running);
  EXPECT_EQ(max_running, 9);
  // Its one remark: a worker disconnected with FAILURE after 5.9 s without a record while 4
  // attempts were on it.
  EXPECT_THAT(model.Warnings(),
              testing::ElementsAre(testing::AllOf(testing::HasSubstr("was silent since 13.954 s"),
                                                  testing::HasSubstr("FAILURE 5.9 s later"))));
}

TEST(RunModel, MalformedLinesAreCountedWithLineNumbers) {
  RunModel model;
  model.ConsumeTransactionLine("# time manager_pid ...", 1);
  model.ConsumeTransactionLine("1000 7 MANAGER 7 START 0", 2);
  model.ConsumeTransactionLine("garbage", 3);
  model.ConsumeTransactionLine("2000 7 TASK x READY c FIRST_RESOURCES 1 {}", 4);
  model.ConsumeTransactionLine("3000 7 TASK 1 READY c FIRST_RESOURCES 1 {}", 5);
  model.ConsumePartialLastLine("transactions", "4000 7 TASK 1 RUNN", 6);
  EXPECT_EQ(model.malformed_count(), 2);
  ASSERT_EQ(model.malformed().size(), 2u);
  EXPECT_EQ(model.malformed()[0].line_number, 3);
  EXPECT_EQ(model.malformed()[1].line_number, 4);
  EXPECT_THAT(model.malformed()[1].reason, HasSubstr("TASK id"));
  EXPECT_EQ(model.partial_last_lines(), 1);
  const std::vector<std::string> warnings = model.Warnings();
  ASSERT_FALSE(warnings.empty());
  EXPECT_THAT(warnings[0], HasSubstr("2 malformed log lines"));
  EXPECT_THAT(warnings[0], HasSubstr("transactions line 3"));
  EXPECT_THAT(warnings[1], HasSubstr("partial line (line 6"));
  EXPECT_EQ(model.tasks().size(), 1u);
}

// A worker is idle until something runs on it or is transferred to it; the per-worker view
// without idle workers keeps the others' figures as they are, in the same order.
TEST(RunModel, IdleWorkersAndThePerWorkerViewWithoutThem) {
  RunModel model;
  int line = 0;
  for (const char* record : {
           "1000000 7 MANAGER 7 START 0",
           "1100000 7 WORKER worker-a CONNECTION 10.0.0.1:9000",
           "1100001 7 WORKER worker-a RESOURCES {\"cores\":[2,\"cores\"]}",
           "1200000 7 WORKER worker-b CONNECTION 10.0.0.2:9000",
           "1200001 7 WORKER worker-b RESOURCES {\"cores\":[4,\"cores\"]}",
           "1300000 7 WORKER worker-c CONNECTION 10.0.0.3:9000",
           "1400000 7 WORKER worker-d CONNECTION 10.0.0.4:9000",
           "1500000 7 TASK 1 READY c FIRST_RESOURCES 1 {}",
           "2000000 7 TASK 1 RUNNING worker-b FIRST_RESOURCES {\"cores\":[1,\"cores\"]}",
           "3000000 7 TASK 1 WAITING_RETRIEVAL worker-b",
           "3000100 7 TASK 1 RETRIEVED SUCCESS 0 {} {}",
           "3000200 7 TASK 1 DONE SUCCESS 0",
           "3500000 7 WORKER worker-d CACHE_UPDATE file-x 100 1000 3400000",
           "4000000 7 WORKER worker-a DISCONNECTION IDLE_OUT",
           "5000000 7 MANAGER 7 END 4000000",
       }) {
    model.ConsumeTransactionLine(record, ++line);
  }
  EXPECT_EQ(model.malformed_count(), 0);
  ASSERT_EQ(model.workers().size(), 4u);
  EXPECT_TRUE(model.workers()[0].Idle());   // connected, resources, left
  EXPECT_FALSE(model.workers()[1].Idle());  // ran task 1
  EXPECT_TRUE(model.workers()[2].Idle());   // connected only
  EXPECT_FALSE(model.workers()[3].Idle());  // a cache update
  EXPECT_EQ(model.workers()[1].dispatches, 1);
  EXPECT_EQ(model.workers()[0].reason, "IDLE_OUT");

  const std::vector<WorkerFigures> all = model.PerWorker();
  const std::vector<WorkerFigures> ran = model.PerWorker(/*skip_idle=*/true);
  ASSERT_EQ(all.size(), 4u);
  ASSERT_EQ(ran.size(), 2u);
  EXPECT_EQ(ran[0].worker, "worker-b");
  EXPECT_EQ(ran[1].worker, "worker-d");
  EXPECT_DOUBLE_EQ(ran[0].busy_seconds, 1.0);
  EXPECT_DOUBLE_EQ(ran[0].totals.allocated_core_seconds, 1.0);
  for (const auto& [kept, whole] : {std::pair{0, 1}, std::pair{1, 3}}) {
    EXPECT_EQ(ran[kept].worker, all[whole].worker);
    EXPECT_EQ(ran[kept].lifetime_seconds, all[whole].lifetime_seconds);
    EXPECT_EQ(ran[kept].busy_seconds, all[whole].busy_seconds);
    EXPECT_EQ(ran[kept].utilisation_fraction, all[whole].utilisation_fraction);
    EXPECT_EQ(ran[kept].totals.attempts, all[whole].totals.attempts);
    EXPECT_EQ(ran[kept].totals.allocated_core_seconds, all[whole].totals.allocated_core_seconds);
  }
  // The idle workers' figures: lifetime and cores only.
  EXPECT_DOUBLE_EQ(all[0].lifetime_seconds, 2.9);
  EXPECT_EQ(all[0].busy_seconds, 0);
  EXPECT_EQ(all[0].totals.attempts, 0);
  EXPECT_EQ(all[2].totals.allocated_core_seconds, 0);
  // Still in the tracking data: 4 series, 4 workers at the peak.
  const v1::TrackingData tracking = model.Tracking();
  EXPECT_EQ(tracking.workers_size(), 4);
  EXPECT_EQ(*std::max_element(tracking.worker_count().begin(), tracking.worker_count().end()), 4);
}

// Many workers that connect and then say nothing until an END 400 s later all died silently:
// the worker count drops at each one's last record (one merge, not an insert per worker), and
// the warnings name the first kMaxSilentDeathsNamed and count the rest in one.
TEST(RunModel, ManySilentDeathsKeepTheCountExactAndTheWarningsBounded) {
  constexpr int kWorkers = 50;
  RunModel model;
  int line = 0;
  model.ConsumeTransactionLine("1000000 7 MANAGER 7 START 0", ++line);
  std::vector<int64_t> connect_us, last_us;
  for (int k = 0; k < kWorkers; ++k) {
    // Connections every 10 ms; each worker's RESOURCES (its last sign of life) a while later,
    // so deaths interleave with later connections and some share an instant.
    connect_us.push_back(2000000 + 10000 * k);
    model.ConsumeTransactionLine(
        absl::StrCat(connect_us.back(), " 7 WORKER worker-", k, " CONNECTION 10.0.0.", k, ":9000"),
        ++line);
  }
  for (int k = 0; k < kWorkers; ++k) {
    last_us.push_back(2000000 + 10000 * kWorkers + 20000 * (k / 2));
    model.ConsumeTransactionLine(
        absl::StrCat(last_us[k], " 7 WORKER worker-", k, " RESOURCES {\"cores\":[1,\"cores\"]}"),
        ++line);
  }
  const int64_t end_us = last_us.back() + 400000000;
  model.ConsumeTransactionLine(absl::StrCat(end_us, " 7 MANAGER 7 END 0"), ++line);
  model.MarkLogComplete();
  EXPECT_EQ(model.malformed_count(), 0);
  for (const Worker& w : model.workers()) EXPECT_TRUE(w.silent_death) << w.id;

  // The count after the last change at each instant = workers connected and not yet dead.
  const v1::TrackingData tracking = model.Tracking();
  ASSERT_EQ(tracking.worker_count_size(), tracking.worker_count_time_unix_ns_size());
  for (int i = 0; i < tracking.worker_count_size(); ++i) {
    const int64_t t_us = tracking.worker_count_time_unix_ns(i) / 1000;
    if (i + 1 < tracking.worker_count_size() &&
        tracking.worker_count_time_unix_ns(i + 1) / 1000 == t_us) {
      continue;  // not the last state of this instant
    }
    int alive = 0;
    for (int k = 0; k < kWorkers; ++k) alive += connect_us[k] <= t_us && t_us < last_us[k];
    EXPECT_EQ(tracking.worker_count(i), alive) << "at " << t_us;
  }
  EXPECT_EQ(tracking.worker_count(tracking.worker_count_size() - 1), 0);
  int peak = 0;
  for (int count : tracking.worker_count()) peak = std::max(peak, count);
  EXPECT_EQ(peak, kWorkers);
  // Each worker's lifetime ends at its last record.
  const RunFigures figures = model.Figures();
  double lifetimes = 0;
  for (int k = 0; k < kWorkers; ++k) lifetimes += (last_us[k] - connect_us[k]) / 1e6;
  EXPECT_NEAR(figures.worker_seconds, lifetimes, 1e-6);

  int named = 0;
  std::vector<std::string> summaries;
  for (const CodedNote& note : model.CodedWarnings()) {
    if (note.code != "taskvine_worker_silent_death") continue;
    if (absl::StrContains(note.message, "more workers")) {
      summaries.push_back(note.message);
    } else {
      ++named;
    }
  }
  EXPECT_EQ(named, RunModel::kMaxSilentDeathsNamed);
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_THAT(summaries[0], HasSubstr("30 more workers (50 in all; the first 20 are named"));
}

TEST(RunModel, PerformanceRowsAreMappedByTheHeader) {
  RunModel model;
  model.ConsumePerformanceLine("1 2 3", 1);  // before the header
  model.ConsumePerformanceLine("# timestamp bytes_sent workers_connected", 2);
  model.ConsumePerformanceLine("100 5000 2", 3);
  model.ConsumePerformanceLine("200 6000", 4);  // a column short
  EXPECT_EQ(model.malformed_count(), 2);
  ASSERT_EQ(model.performance().size(), 1u);
  EXPECT_EQ(model.performance()[0].bytes_sent, 5000);
  EXPECT_EQ(model.performance()[0].workers_connected, 2);
  EXPECT_TRUE(std::isnan(model.performance()[0].tasks_done));
}

TEST(RunModel, SecondManagerRunReplacesTheFirst) {
  RunModel model;
  model.ConsumeTransactionLine("1000 7 MANAGER START", 1);
  model.ConsumeTransactionLine("2000 7 TASK 1 WAITING c FIRST_RESOURCES {}", 2);
  model.ConsumeTransactionLine("3000 7 MANAGER END", 3);
  model.ConsumeTransactionLine("9000 8 MANAGER START", 4);
  model.ConsumeTransactionLine("9500 8 TASK 1 WAITING d FIRST_RESOURCES {}", 5);
  EXPECT_EQ(model.manager_runs(), 2);
  ASSERT_EQ(model.tasks().size(), 1u);
  EXPECT_EQ(model.categories()[model.tasks().at(1).category], "d");
  EXPECT_EQ(model.Figures().start_us, 9000);
  EXPECT_THAT(model.Warnings()[0], HasSubstr("several manager runs"));
}

}  // namespace
}  // namespace taskvine
}  // namespace roastcoffea
