#include "tools/show_command.h"

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "export/tables.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "store/worker_series_ends.h"
#include "tools/exit_code.h"
#include "tools/table_style.h"

namespace roastcoffea {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
int64_t At(double seconds) { return kT0 + static_cast<int64_t>(seconds * 1e9); }

struct Step {
  double t, cores, executing;
};

void AddWorker(const std::string& name, const std::vector<Step>& steps, v1::TrackingData& into) {
  v1::WorkerSeries& w = *into.add_workers();
  w.set_worker(name);
  w.set_kind(v1::SERIES_KIND_STEP);
  for (const Step& step : steps) {
    w.add_time_unix_ns(At(step.t));
    w.add_cores(step.cores);
    w.add_executing_tasks(step.executing);
  }
}

// Workers connect at 0 s without cores and get them at 2 s, where the task timeline starts;
// w2 leaves at 6 s with 2 tasks running. Cut to their ends, the series keep the 2 s rows.
v1::Measurement RunWhereAWorkerLeft() {
  v1::Measurement m;
  m.mutable_metadata()->set_name("left");
  v1::TrackingData& tracking = *m.mutable_tracking();
  tracking.set_worker_count_kind(v1::SERIES_KIND_STEP);
  for (const double t : {0.0, 10.0}) {
    tracking.add_worker_count_time_unix_ns(At(t));
    tracking.add_worker_count(2);
    tracking.add_queued_chunks(t == 0 ? 4 : 0);
  }
  AddWorker("w1", {{0, 0, 0}, {2, 2, 2}, {5, 2, 1}, {8, 2, 2}, {10, 2, 0}}, tracking);
  AddWorker("w2", {{0, 0, 0}, {2, 2, 2}, {3, 2, 1}, {4, 2, 2}, {6, 2, 2}}, tracking);
  return m;
}

std::string Tables(const v1::Measurement& m) {
  absl::StatusOr<TableOptions> ascii = TableStyle("ascii");
  EXPECT_TRUE(ascii.ok()) << ascii.status();
  return ascii.ok() ? FormatSummaryTables(m, *ascii) : "";
}

// `show` reads the worker series cut to their ends, once: the cut keeps what the table of a
// worker that left with tasks needs (the task timeline's start, when it left and what ran).
TEST(ShowCommandTest, AWorkerThatLeftIsShownAsTheWholeSeriesSayIt) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  absl::StatusOr<std::string> saved =
      SaveMeasurement(RunWhereAWorkerLeft(), tmp != nullptr ? tmp : "/tmp", "left");
  ASSERT_TRUE(saved.ok()) << saved.status();
  absl::StatusOr<v1::Measurement> whole = LoadMeasurement(*saved);
  ASSERT_TRUE(whole.ok()) << whole.status();
  const std::string expected = Tables(*whole);
  ASSERT_NE(expected.find("Workers That Left"), std::string::npos) << expected;
  v1::Measurement cut = *whole;
  for (v1::WorkerSeries& w : *cut.mutable_tracking()->mutable_workers()) CutWorkerSeriesToEnds(&w);
  ASSERT_EQ(Tables(cut), expected);  // cut to the ends before #25: w2 left at 4 s, not 6 s

  std::ostringstream out;
  std::streambuf* stdout_buffer = std::cout.rdbuf(out.rdbuf());
  ShowConfig config;
  config.tables = "ascii";
  config.format = "table";
  const ExitCode code = ShowCommand(config, *saved);
  std::cout.rdbuf(stdout_buffer);
  EXPECT_EQ(code, ExitCode::kOk);
  EXPECT_EQ(out.str(), expected);
}

}  // namespace
}  // namespace roastcoffea
