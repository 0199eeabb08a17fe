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
  series.add_memory_bytes(7);  // not one per row: cleared
  CutWorkerSeriesToEnds(&series);
  EXPECT_EQ(std::vector<int64_t>(series.time_unix_ns().begin(), series.time_unix_ns().end()),
            (std::vector<int64_t>{10, 40, 50}));
  // Row 3 (time 40) is the last before the final instant 50, whose row 4 ties with it.
  EXPECT_EQ(std::vector<double>(series.executing_tasks().begin(), series.executing_tasks().end()),
            (std::vector<double>{0, 3, 5}));
  EXPECT_EQ(series.cores_size(), 3);
  EXPECT_EQ(series.memory_bytes_size(), 0);
  EXPECT_EQ(series.worker(), "w1");
  EXPECT_EQ(series.kind(), v1::SERIES_KIND_STEP);
}

TEST(CutWorkerSeriesToEndsTest, KeepsTheFirstSlotTheLastTaskAndTheLatestMessage) {
  // No cores until row 2 (the capacity timeline starts there); the last task runs at row 5
  // (it ends at row 6's instant); the latest message is at row 4.
  v1::WorkerSeries series = Steps({10, 20, 30, 40, 50, 60, 70, 80, 90, 100});
  for (int i = 0; i < 10; ++i) {
    series.set_cores(i, i < 2 ? 0 : 4);
    series.set_executing_tasks(i, i == 5 ? 2 : 0);
    series.add_last_seen_unix_seconds(i == 4 ? 99 : i);
  }
  CutWorkerSeriesToEnds(&series);
  EXPECT_EQ(std::vector<int64_t>(series.time_unix_ns().begin(), series.time_unix_ns().end()),
            (std::vector<int64_t>{10, 30, 50, 60, 70, 90, 100}));
  EXPECT_EQ(std::vector<double>(series.last_seen_unix_seconds().begin(),
                                series.last_seen_unix_seconds().end()),
            (std::vector<double>{0, 2, 99, 5, 6, 8, 9}));
}

TEST(CutWorkerSeriesToEndsTest, RowsTiedAtAnInstantKeepTheOneThatHolds) {
  // At instant 20 row 2 holds (its 4 cores), not row 1 (0 cores).
  v1::WorkerSeries series = Steps({10, 20, 20, 30, 40, 50});
  series.set_cores(0, 0);
  series.set_cores(1, 0);
  for (int i = 0; i < 6; ++i) series.set_executing_tasks(i, 0);
  CutWorkerSeriesToEnds(&series);
  EXPECT_EQ(std::vector<double>(series.cores().begin(), series.cores().end()),
            (std::vector<double>{0, 4, 4, 4}));
  EXPECT_EQ(std::vector<int64_t>(series.time_unix_ns().begin(), series.time_unix_ns().end()),
            (std::vector<int64_t>{10, 20, 40, 50}));
}

TEST(CutWorkerSeriesToEndsTest, SeriesItCannotCutExactlyAreKeptWhole) {
  v1::WorkerSeries fractional = Steps({10, 20, 30, 40, 50});
  fractional.set_cores(2, 0.5);
  v1::WorkerSeries unordered = Steps({10, 30, 20, 40, 50});
  v1::WorkerSeries messages = Steps({10, 20, 30, 40, 50});
  messages.add_last_seen_unix_seconds(7);  // not one per row
  for (const v1::WorkerSeries& whole : {fractional, unordered, messages}) {
    v1::WorkerSeries series = whole;
    CutWorkerSeriesToEnds(&series);
    EXPECT_EQ(series.SerializeAsString(), whole.SerializeAsString());
  }
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

// Series parsed one after the other into one reused message, as a load does: each one's ends
// are those CutWorkerSeriesToEnds makes of it, nothing carried over from the one before; what it
// keeps whole (short, out of order) is copied whole.
TEST(TakeWorkerSeriesEndsTest, EachSeriesOfAReusedMessageIsCutAsAlone) {
  v1::WorkerSeries unordered = Steps({10, 30, 20, 40, 50});
  v1::WorkerSeries with_memory = Steps({1, 2, 3, 4, 5, 6, 7});
  for (int i = 0; i < 7; ++i) with_memory.add_memory_bytes(100 + i);
  with_memory.set_worker("w2");
  const std::vector<v1::WorkerSeries> series = {Steps({10, 20, 30, 40, 50, 60, 70, 80}),
                                                Steps({5, 6}), unordered, with_memory,
                                                Steps({10, 20, 30, 40})};
  v1::WorkerSeries reused;
  for (size_t i = 0; i < series.size(); ++i) {
    reused.Clear();
    ASSERT_TRUE(reused.MergeFromString(series[i].SerializeAsString()));
    v1::WorkerSeries ends;
    ends.set_host("left from before");  // overwritten
    TakeWorkerSeriesEnds(&reused, &ends);
    v1::WorkerSeries expected = series[i];
    CutWorkerSeriesToEnds(&expected);
    EXPECT_EQ(ends.SerializeAsString(), expected.SerializeAsString()) << i;
  }
}

// Cores stored once for the series (schema/worker_series_columns.h) cut as the same cores at
// every row: the same rows are kept, the value stays stored once.
TEST(CutWorkerSeriesToEndsTest, CoresStoredOnceCutAsAtEveryRow) {
  v1::WorkerSeries every = Steps({10, 20, 30, 40, 50, 50, 60});
  for (int i = 0; i < every.time_unix_ns_size(); ++i) every.add_last_seen_unix_seconds(i);
  v1::WorkerSeries once = every;
  once.mutable_cores()->Truncate(1);
  CutWorkerSeriesToEnds(&every);
  CutWorkerSeriesToEnds(&once);
  ASSERT_LT(every.time_unix_ns_size(), 7);
  EXPECT_EQ(std::vector<int64_t>(once.time_unix_ns().begin(), once.time_unix_ns().end()),
            std::vector<int64_t>(every.time_unix_ns().begin(), every.time_unix_ns().end()));
  EXPECT_EQ(std::vector<double>(once.executing_tasks().begin(), once.executing_tasks().end()),
            std::vector<double>(every.executing_tasks().begin(), every.executing_tasks().end()));
  ASSERT_EQ(once.cores_size(), 1);
  EXPECT_EQ(once.cores(0), 4);
}

}  // namespace
}  // namespace roastcoffea
