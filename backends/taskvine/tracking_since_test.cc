// RunModel::TrackingSince: a followed run's series handed to the checkpoint in pieces join to the
// series of the whole log, and a point that can still move (at the log's last record) waits.
#include <cstdint>
#include <string>
#include <vector>

#include "backends/taskvine/run_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace taskvine {
namespace {

void Feed(const std::vector<std::string>& lines, RunModel* model, int64_t* line_number) {
  for (const std::string& line : lines) model->ConsumeTransactionLine(line, ++*line_number);
}

std::vector<int64_t> Times(const google::protobuf::RepeatedField<int64_t>& times) {
  return std::vector<int64_t>(times.begin(), times.end());
}

TEST(TrackingSince, PiecesJoinToTheWholeSeriesAndMovingPointsWait) {
  RunModel model;
  int64_t n = 0;
  Feed({"1000000 7 MANAGER 7 START 0",
        "1500000 7 TASK 1 READY processing FIRST_RESOURCES 1 {\"cores\":[1,\"cores\"]}",
        "1600000 7 WORKER worker-a CONNECTION 127.0.0.1:9000",
        "1600001 7 WORKER worker-a RESOURCES "
        "{\"memory\":[1000,\"MB\"],\"disk\":[1000,\"MB\"],\"cores\":[2,\"cores\"]}",
        "2000000 7 TASK 1 RUNNING worker-a FIRST_RESOURCES {\"cores\":[1,\"cores\"]}"},
       &model, &n);
  RunModel::TrackingCursor handed;
  const v1::TrackingData early_whole = model.Tracking();
  const v1::TrackingData first = model.TrackingSince(&handed);
  EXPECT_EQ(first.backend(), "taskvine");
  EXPECT_EQ(first.worker_count_kind(), v1::SERIES_KIND_STEP);
  // Everything but the last point of each series (worker-a is connected: its last point stands
  // at the log's last record).
  ASSERT_EQ(first.workers_size(), 1);
  EXPECT_EQ(first.workers(0).worker(), "worker-a");
  EXPECT_EQ(first.workers(0).time_unix_ns_size(), early_whole.workers(0).time_unix_ns_size() - 1);
  EXPECT_EQ(first.worker_count_time_unix_ns_size(),
            early_whole.worker_count_time_unix_ns_size() - 1);
  EXPECT_EQ(first.workers(0).executing_tasks_size(), first.workers(0).time_unix_ns_size());
  EXPECT_EQ(first.workers(0).last_seen_unix_seconds_size(), first.workers(0).time_unix_ns_size());

  Feed({"5000000 7 TASK 1 WAITING_RETRIEVAL worker-a", "5100000 7 TASK 1 RETRIEVED SUCCESS 0 {} {}",
        "5100001 7 TASK 1 DONE SUCCESS 0", "9000000 7 WORKER worker-a DISCONNECTION EXPLICIT"},
       &model, &n);
  const v1::TrackingData whole = model.Tracking();
  const v1::TrackingData second = model.TrackingSince(&handed);
  // worker-a disconnected: its series is final to its last point, and the pieces are it.
  ASSERT_EQ(second.workers_size(), 1);
  std::vector<int64_t> joined = Times(first.workers(0).time_unix_ns());
  for (int64_t t : second.workers(0).time_unix_ns()) joined.push_back(t);
  EXPECT_EQ(joined, Times(whole.workers(0).time_unix_ns()));
  std::vector<double> executing(first.workers(0).executing_tasks().begin(),
                                first.workers(0).executing_tasks().end());
  executing.insert(executing.end(), second.workers(0).executing_tasks().begin(),
                   second.workers(0).executing_tasks().end());
  EXPECT_EQ(executing, std::vector<double>(whole.workers(0).executing_tasks().begin(),
                                           whole.workers(0).executing_tasks().end()));
  // The count: all but its last point, which moves with the log's last record.
  std::vector<int64_t> counts = Times(first.worker_count_time_unix_ns());
  for (int64_t t : second.worker_count_time_unix_ns()) counts.push_back(t);
  std::vector<int64_t> expected = Times(whole.worker_count_time_unix_ns());
  expected.pop_back();
  EXPECT_EQ(counts, expected);
  // Nothing new: nothing handed out again.
  const v1::TrackingData third = model.TrackingSince(&handed);
  EXPECT_EQ(third.workers_size(), 0);
  EXPECT_EQ(third.worker_count_time_unix_ns_size(), 0);
}

// TakeTracking (a finished run's last series) is Tracking(), and frees each worker's steps and
// the count's; ReleaseTasks frees the tasks and keeps the run's window and workers (#25).
TEST(TakeTracking, IsTrackingAndFreesTheStepsAndTasks) {
  RunModel model;
  int64_t n = 0;
  Feed({"1000000 7 MANAGER 7 START 0", "1600000 7 WORKER worker-a CONNECTION 127.0.0.1:9000",
        "1600001 7 WORKER worker-a RESOURCES "
        "{\"memory\":[1000,\"MB\"],\"disk\":[1000,\"MB\"],\"cores\":[2,\"cores\"]}",
        "1700000 7 TASK 1 READY processing FIRST_RESOURCES 1 {\"cores\":[1,\"cores\"]}",
        "2000000 7 TASK 1 RUNNING worker-a FIRST_RESOURCES {\"cores\":[1,\"cores\"]}",
        "5000000 7 TASK 1 WAITING_RETRIEVAL worker-a", "5100000 7 TASK 1 RETRIEVED SUCCESS 0 {} {}",
        "5100001 7 TASK 1 DONE SUCCESS 0", "9000000 7 WORKER worker-a DISCONNECTION EXPLICIT",
        "9500000 7 MANAGER 7 END 0"},
       &model, &n);
  model.MarkLogComplete();
  const v1::TrackingData whole = model.Tracking();
  const RunFigures figures = model.Figures();
  ASSERT_EQ(model.tasks().size(), 1u);
  ASSERT_FALSE(model.workers()[0].series.empty());

  model.ReleaseTasks();
  EXPECT_EQ(model.tasks().size(), 0u);
  EXPECT_EQ(model.Figures().start_us, figures.start_us);
  EXPECT_EQ(model.Figures().end_us, figures.end_us);
  const v1::TrackingData taken = model.TakeTracking();
  EXPECT_EQ(taken.SerializeAsString(), whole.SerializeAsString());
  EXPECT_EQ(taken.workers(0).time_unix_ns_size(), whole.workers(0).time_unix_ns_size());
  ASSERT_EQ(model.workers().size(), 1u);
  EXPECT_TRUE(model.workers()[0].series.empty());
  EXPECT_EQ(model.workers()[0].series.capacity(), 0u) << "freed, not only cleared";
}

// A step is 16 bytes; the worker's last record up to a step is kept apart only where it is not
// the step's own instant (here the disconnection, 3.9 s after the worker's last record), and
// the series' last_seen reads both.
TEST(WorkerSteps, LastRecordsApartFromTheStepsOnlyWhereTheyDiffer) {
  static_assert(sizeof(Worker::Step) == 16, "a step per change: keep it small");
  RunModel model;
  int64_t n = 0;
  Feed({"1000000 7 MANAGER 7 START 0", "1600000 7 WORKER worker-a CONNECTION 127.0.0.1:9000",
        "1700000 7 TASK 1 READY processing FIRST_RESOURCES 1 {\"cores\":[1,\"cores\"]}",
        "2000000 7 TASK 1 RUNNING worker-a FIRST_RESOURCES {\"cores\":[1,\"cores\"]}",
        "5000000 7 TASK 1 WAITING_RETRIEVAL worker-a", "5100000 7 TASK 1 RETRIEVED SUCCESS 0 {} {}",
        "9000000 7 WORKER worker-a DISCONNECTION EXPLICIT", "9500000 7 MANAGER 7 END 0"},
       &model, &n);
  const Worker& w = model.workers()[0];
  ASSERT_EQ(w.series.size(), 5u);  // connection, RUNNING, WAITING_RETRIEVAL, RETRIEVED, gone
  ASSERT_EQ(w.step_evidence.size(), 1u);
  EXPECT_EQ(w.step_evidence[0].step, 4);
  EXPECT_EQ(w.step_evidence[0].us, 5100000);
  const v1::TrackingData tracking = model.Tracking();
  ASSERT_EQ(tracking.workers_size(), 1);
  const v1::WorkerSeries& s = tracking.workers(0);
  const auto seconds = [](std::vector<int64_t> us) {
    std::vector<double> out;
    for (int64_t t : us) out.push_back(t * 1e-6);
    return out;
  };
  EXPECT_EQ(
      std::vector<double>(s.last_seen_unix_seconds().begin(), s.last_seen_unix_seconds().end()),
      seconds({1600000, 2000000, 5000000, 5100000, 5100000, 5100000}));
  // Handed out in pieces, the same values.
  RunModel::TrackingCursor cursor;
  cursor.worker_points = {3};
  const v1::TrackingData rest = model.TrackingSince(&cursor);
  ASSERT_EQ(rest.workers_size(), 1);
  EXPECT_EQ(std::vector<double>(rest.workers(0).last_seen_unix_seconds().begin(),
                                rest.workers(0).last_seen_unix_seconds().end()),
            seconds({5100000, 5100000, 5100000}));
}

}  // namespace
}  // namespace taskvine
}  // namespace roastcoffea
