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

std::vector<TaskRecord> Slice(const std::vector<TaskRecord>& all, size_t from, size_t to) {
  return std::vector<TaskRecord>(all.begin() + from, all.begin() + to);
}

TEST(TaskStreamTest, TheTailIsReadOncePerRecord) {
  std::vector<TaskRecord> all = *ParseTaskStream(Fixture("get_task_stream_reply"));
  ASSERT_GE(all.size(), 39u);
  TaskStreamCursor cursor;
  EXPECT_TRUE(cursor.NextRequestArguments(false).Find("count") == nullptr);  // whole buffer
  EXPECT_EQ(cursor.Accept(Slice(all, 0, 20)).size(), 20u);
  const int64_t count = *cursor.NextRequestArguments(false).Find("count")->AsInt64();
  EXPECT_EQ(count, 16);
  // The last `count` records: 5 already read, 11 new.
  std::vector<TaskRecord> fresh = cursor.Accept(Slice(all, 15, 31));
  ASSERT_EQ(fresh.size(), 11u);
  EXPECT_EQ(fresh[0].key, all[20].key);
  EXPECT_FALSE(cursor.needs_retry());
  EXPECT_EQ(cursor.next_count(), 11 + 1 + 2);  // what arrived, plus an eighth and two
  // Nothing new: only the anchor comes back.
  EXPECT_TRUE(cursor.Accept(Slice(all, 17, 31)).empty());
  EXPECT_EQ(cursor.next_count(), 4);
}

TEST(TaskStreamTest, AFullTailWithoutTheAnchorIsAskedAgainBigger) {
  std::vector<TaskRecord> all = *ParseTaskStream(Fixture("get_task_stream_reply"));
  TaskStreamCursor cursor;
  cursor.Accept(Slice(all, 0, 20));
  cursor.Accept(Slice(all, 19, 20));  // count 4 from now on
  ASSERT_EQ(cursor.next_count(), 4);
  // 15 records arrived: the 4 newest do not reach back to record 19.
  EXPECT_TRUE(cursor.Accept(Slice(all, 31, 35)).empty());
  EXPECT_TRUE(cursor.needs_retry());
  EXPECT_EQ(cursor.next_count(), 16);
  std::vector<TaskRecord> fresh = cursor.Accept(Slice(all, 19, 35));
  EXPECT_FALSE(cursor.needs_retry());
  ASSERT_EQ(fresh.size(), 15u);
  EXPECT_EQ(fresh.front().key, all[20].key);
  EXPECT_EQ(fresh.back().key, all[34].key);
  EXPECT_FALSE(cursor.overran());
}

TEST(TaskStreamTest, ABufferThatTurnedOverIsTakenWholeAndSaidSo) {
  std::vector<TaskRecord> all = *ParseTaskStream(Fixture("get_task_stream_reply"));
  TaskStreamCursor cursor(/*max_count=*/8);
  cursor.Accept(Slice(all, 0, 4));
  EXPECT_EQ(cursor.next_count(), 8);  // never more than the buffer
  EXPECT_EQ(cursor.Accept(Slice(all, 3, 5)).size(), 1u);
  EXPECT_EQ(cursor.Accept(Slice(all, 10, 14)).size(), 0u);  // 4 of 4 asked: retry with 8
  EXPECT_TRUE(cursor.needs_retry());
  EXPECT_EQ(cursor.Accept(Slice(all, 6, 14)).size(), 8u);  // 8 = the whole buffer
  EXPECT_TRUE(cursor.overran());
}

TEST(TaskStreamTest, ANewStreamIsReadWhole) {
  std::vector<TaskRecord> all = *ParseTaskStream(Fixture("get_task_stream_reply"));
  TaskStreamCursor cursor;
  cursor.Accept(Slice(all, 0, 20));
  // Fewer records than asked for and no anchor: a restarted scheduler's stream.
  EXPECT_EQ(cursor.Accept(Slice(all, 30, 33)).size(), 3u);
  cursor.ResetForNewScheduler();
  EXPECT_TRUE(cursor.NextRequestArguments(false).Find("count") == nullptr);
}

TEST(TaskStreamTest, StartAtDropsEarlierRecordsAndIndexModeAdvances) {
  std::vector<TaskRecord> all = *ParseTaskStream(Fixture("get_task_stream_reply"));
  TaskStreamCursor cursor;
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
