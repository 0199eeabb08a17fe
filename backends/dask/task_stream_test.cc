#include "backends/dask/task_stream.h"

#include <map>

#include "backends/dask/fixtures.h"
#include "backends/dask/wire.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea::dask {
namespace {

using ::testing::HasSubstr;

Value Fixture(const std::string& name) {
  const std::string bytes = testing::FixtureBytes(name);
  StringByteReader reader(bytes);
  return *DecodeMessage(*ReadFrames(reader));
}

TEST(TaskStreamTest, ParsesTheCapturedStream) {
  absl::StatusOr<std::vector<TaskRecord>> records =
      ParseTaskStream(Fixture("get_task_stream_reply"));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 39u);
  std::map<std::string, int> prefixes;
  std::map<std::string, int> actions;
  int erred = 0;
  for (const TaskRecord& r : *records) {
    ++prefixes[r.prefix];
    for (const StartStop& ss : r.startstops) {
      ++actions[ss.action];
      EXPECT_LE(ss.start_unix_seconds, ss.stop_unix_seconds) << r.key;
      if (ss.action == "transfer") {
        EXPECT_FALSE(ss.source.empty());
      }
    }
    if (r.status == "error") {
      ++erred;
      EXPECT_EQ(r.prefix, "boom");
      EXPECT_THAT(r.exception_text, HasSubstr("ValueError"));
    }
  }
  EXPECT_EQ(erred, 1);
  EXPECT_GT(prefixes["inc"], 0);
  EXPECT_GT(prefixes["mul"], 0);
  EXPECT_GT(prefixes["sum-aggregate"], 0);
  EXPECT_GT(actions["compute"], 0);
  EXPECT_GT(actions["transfer"], 0);
  EXPECT_EQ(records->front().key, "inc-1869629367546c5239c715fa05ca55a6");
  EXPECT_EQ(records->front().worker, "tcp://127.0.0.1:38163");
  EXPECT_EQ(records->front().nbytes, 28);
}

TEST(TaskStreamTest, FirstCallIsEmpty) {
  EXPECT_TRUE(ParseTaskStream(Fixture("get_task_stream_reply_first_call"))->empty());
}

TEST(TaskStreamTest, CursorNeverDuplicatesOverlappingBatches) {
  std::vector<TaskRecord> all = *ParseTaskStream(Fixture("get_task_stream_reply"));
  TaskStreamCursor cursor(/*overlap_seconds=*/1e9);  // everything overlaps
  std::vector<TaskRecord> first(all.begin(), all.begin() + 20);
  EXPECT_EQ(cursor.Accept(first).size(), 20u);
  const Value args = cursor.NextRequestArguments(false);
  ASSERT_NE(args.Find("start"), nullptr);
  // The scheduler returns overlapping records again, plus the new ones.
  EXPECT_EQ(cursor.Accept(all).size(), all.size() - 20);
  EXPECT_TRUE(cursor.Accept(all).empty());
}

TEST(TaskStreamTest, StartAtDropsEarlierRecordsAndIndexModeAdvances) {
  std::vector<TaskRecord> all = *ParseTaskStream(Fixture("get_task_stream_reply"));
  TaskStreamCursor cursor(10);
  cursor.StartAt(all.back().last_stop_unix_seconds + 1);
  EXPECT_TRUE(cursor.Accept(all).empty());
  TaskStreamCursor indexed;
  EXPECT_EQ(indexed.Accept(all, 39).size(), 39u);
  EXPECT_EQ(*indexed.NextRequestArguments(true).Find("start_index")->AsInt64(), 39);
}

TEST(TaskStreamTest, RejectsMalformedRecords) {
  EXPECT_THAT(ParseTaskStream(Value::Map()).status().message(), HasSubstr("not an array"));
  Value record = Value::Map();
  record.Insert(Value::Str("key"), Value::Str("x-1"));
  EXPECT_THAT(ParseTaskStream(Value::Array({record})).status().message(),
              HasSubstr("record 0 lacks key"));
  record.Insert(Value::Str("worker"), Value::Str("tcp://w:1"));
  Value ss = Value::Map();
  ss.Insert(Value::Str("action"), Value::Str("compute"));
  ss.Insert(Value::Str("start"), Value::Str("soon"));
  record.Insert(Value::Str("startstops"), Value::Array({ss}));
  EXPECT_THAT(ParseTaskStream(Value::Array({record})).status().message(),
              HasSubstr("numeric start/stop"));
}

}  // namespace
}  // namespace roastcoffea::dask
