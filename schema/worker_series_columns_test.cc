#include "schema/worker_series_columns.h"

#include <vector>

#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

v1::WorkerSeries Series(int points, std::vector<double> cores) {
  v1::WorkerSeries s;
  for (int i = 0; i < points; ++i) s.add_time_unix_ns(i);
  for (double c : cores) s.add_cores(c);
  return s;
}

TEST(WorkerSeriesColumns, AValueStoredOnceStandsAtEveryPoint) {
  const v1::WorkerSeries once = Series(3, {4});
  EXPECT_TRUE(CoversPoints(once.cores(), 3));
  EXPECT_TRUE(StoredOnce(once.cores(), 3));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(ValueAt(once.cores(), i), 4);
  EXPECT_EQ(ValuesAtPoints(once.cores(), 3), (std::vector<double>{4, 4, 4}));
}

TEST(WorkerSeriesColumns, AValuePerPointReadsAsBefore) {
  const v1::WorkerSeries every = Series(3, {1, 2, 3});
  EXPECT_TRUE(CoversPoints(every.cores(), 3));
  EXPECT_FALSE(StoredOnce(every.cores(), 3));
  EXPECT_EQ(ValueAt(every.cores(), 2), 3);
  EXPECT_EQ(ValuesAtPoints(every.cores(), 3), (std::vector<double>{1, 2, 3}));
  // One point, one value: both forms at once.
  EXPECT_FALSE(StoredOnce(Series(1, {5}).cores(), 1));
  EXPECT_TRUE(CoversPoints(Series(1, {5}).cores(), 1));
}

TEST(WorkerSeriesColumns, OtherLengthsAndEmptyColumnsCoverNothing) {
  EXPECT_FALSE(CoversPoints(Series(3, {1, 2}).cores(), 3));
  EXPECT_TRUE(ValuesAtPoints(Series(3, {1, 2}).cores(), 3).empty());
  EXPECT_FALSE(CoversPoints(Series(3, {}).cores(), 3));
  EXPECT_FALSE(CoversPoints(Series(0, {4}).cores(), 0));
}

TEST(WorkerSeriesColumns, ExpandWritesTheValueAtEveryPointOfTheColumnsStoredOnce) {
  v1::WorkerSeries s = Series(3, {4});
  s.add_memory_limit_bytes(8e9);
  s.add_disk_limit_bytes(1e9);
  s.add_disk_limit_bytes(2e9);
  s.add_disk_limit_bytes(3e9);
  s.add_executing_tasks(1);  // not a column that may be stored once: left as it is
  ExpandColumnsStoredOnce(&s);
  EXPECT_EQ(std::vector<double>(s.cores().begin(), s.cores().end()),
            (std::vector<double>{4, 4, 4}));
  EXPECT_EQ(s.memory_limit_bytes_size(), 3);
  EXPECT_EQ(s.disk_limit_bytes(2), 3e9);
  EXPECT_EQ(s.executing_tasks_size(), 1);
  EXPECT_TRUE(IsStoredOnceColumn(v1::WorkerSeries::descriptor()->FindFieldByName("cores")));
  EXPECT_FALSE(
      IsStoredOnceColumn(v1::WorkerSeries::descriptor()->FindFieldByName("executing_tasks")));
}

}  // namespace
}  // namespace roastcoffea
