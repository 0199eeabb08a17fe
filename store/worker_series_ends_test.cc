#include "store/worker_series_ends.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

// A step series at `times`, executing i tasks at row i, on 4 cores.
v1::WorkerSeries Steps(const std::vector<int64_t>& times) {
  v1::WorkerSeries series;
  series.set_worker("w1");
  series.set_kind(v1::SERIES_KIND_STEP);
  for (size_t i = 0; i < times.size(); ++i) {
    series.add_time_unix_ns(times[i]);
    series.add_executing_tasks(static_cast<double>(i));
    series.add_cores(4);
  }
  return series;
}

TEST(CutWorkerSeriesToEndsTest, KeepsFirstLastBeforeTheEndAndLastRows) {
  v1::WorkerSeries series = Steps({10, 20, 30, 40, 50, 50});
  series.add_last_seen_unix_seconds(7);  // not one per row: cleared
  CutWorkerSeriesToEnds(&series);
  EXPECT_EQ(std::vector<int64_t>(series.time_unix_ns().begin(), series.time_unix_ns().end()),
            (std::vector<int64_t>{10, 40, 50}));
  // Row 3 (time 40) is the last before the final instant 50, whose row 4 ties with it.
  EXPECT_EQ(std::vector<double>(series.executing_tasks().begin(), series.executing_tasks().end()),
            (std::vector<double>{0, 3, 5}));
  EXPECT_EQ(series.cores_size(), 3);
  EXPECT_EQ(series.last_seen_unix_seconds_size(), 0);
  EXPECT_EQ(series.worker(), "w1");
  EXPECT_EQ(series.kind(), v1::SERIES_KIND_STEP);
}

TEST(CutWorkerSeriesToEndsTest, ShortSeriesAreKeptWhole) {
  const v1::WorkerSeries whole = Steps({10, 20, 30});
  v1::WorkerSeries series = whole;
  CutWorkerSeriesToEnds(&series);
  EXPECT_EQ(series.SerializeAsString(), whole.SerializeAsString());
}

TEST(CutWorkerSeriesToEndsTest, EveryRowAtTheFinalInstantKeepsFirstAndLast) {
  v1::WorkerSeries series = Steps({50, 50, 50, 50});
  CutWorkerSeriesToEnds(&series);
  EXPECT_EQ(std::vector<double>(series.executing_tasks().begin(), series.executing_tasks().end()),
            (std::vector<double>{0, 3}));
}

TEST(CutWorkerSeriesToEndsTest, CutIsIdempotent) {
  v1::WorkerSeries series = Steps({10, 20, 30, 40, 50});
  CutWorkerSeriesToEnds(&series);
  const std::string once = series.SerializeAsString();
  CutWorkerSeriesToEnds(&series);
  EXPECT_EQ(series.SerializeAsString(), once);
}

}  // namespace
}  // namespace roastcoffea
