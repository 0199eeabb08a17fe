#include "backends/dask/task_stream.h"

#include <algorithm>
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

TEST(TaskStreamTest, ReadsOnFromTheAnchorOncePerRecord) {
  std::vector<TaskRecord> all = *ParseTaskStream(Fixture("get_task_stream_reply"));
  ASSERT_GE(all.size(), 39u);
  TaskStreamCursor cursor;
  EXPECT_TRUE(cursor.NextRequestArguments(false).Find("start") == nullptr);  // whole buffer
  EXPECT_EQ(cursor.Accept(Slice(all, 0, 20)).size(), 20u);
  const Value args = cursor.NextRequestArguments(false);
  ASSERT_NE(args.Find("start"), nullptr);
  // No time overlap: from the earliest stop of the last four records read.
  double earliest = all[19].last_stop_unix_seconds;
  for (int i = 16; i < 20; ++i) earliest = std::min(earliest, all[i].last_stop_unix_seconds);
  EXPECT_EQ(*args.Find("start")->AsDouble(), earliest);
  // The bisection may land a little before the anchor: those records are old.
  std::vector<TaskRecord> fresh = cursor.Accept(Slice(all, 17, 31));
  ASSERT_EQ(fresh.size(), 11u);
  EXPECT_EQ(fresh[0].key, all[20].key);
  EXPECT_FALSE(cursor.needs_retry());
  EXPECT_TRUE(cursor.Accept(Slice(all, 30, 31)).empty());  // nothing new: the anchor alone
}

TEST(TaskStreamTest, ABisectionPastTheAnchorIsAskedAgainFurtherBack) {
  std::vector<TaskRecord> all = *ParseTaskStream(Fixture("get_task_stream_reply"));
  TaskStreamCursor cursor;
  cursor.Accept(Slice(all, 0, 20));
  // Out-of-order stop times: the reply starts after record 19.
  EXPECT_TRUE(cursor.Accept(Slice(all, 25, 35)).empty());
  EXPECT_TRUE(cursor.needs_retry());
  EXPECT_LE(*cursor.NextRequestArguments(false).Find("start")->AsDouble(),
            all[19].last_stop_unix_seconds - 0.05);
  for (int i = 0; i < 9; ++i) cursor.Accept(Slice(all, 25, 35));  // 0.2 s, ..., 3277 s back
  EXPECT_TRUE(cursor.NextRequestArguments(false).Find("start") == nullptr);  // whole buffer
  std::vector<TaskRecord> fresh = cursor.Accept(Slice(all, 10, 35));
  EXPECT_FALSE(cursor.needs_retry());
  ASSERT_EQ(fresh.size(), 15u);
  EXPECT_EQ(fresh.front().key, all[20].key);
  EXPECT_FALSE(cursor.overran());
  EXPECT_LE(*cursor.NextRequestArguments(false).Find("start")->AsDouble(),
            all[34].last_stop_unix_seconds);
}

TEST(TaskStreamTest, AnEvictedAnchorMeansTheWholeBufferIsNewAndSaidSo) {
  std::vector<TaskRecord> all = *ParseTaskStream(Fixture("get_task_stream_reply"));
  TaskStreamCursor cursor;
  cursor.Accept(Slice(all, 0, 4));
  for (int i = 0; i < 10; ++i) cursor.Accept(Slice(all, 10, 14));
  ASSERT_TRUE(cursor.NextRequestArguments(false).Find("start") == nullptr);
  EXPECT_EQ(cursor.Accept(Slice(all, 10, 14)).size(), 4u);
  EXPECT_TRUE(cursor.overran());
  cursor.ResetForNewScheduler();
  EXPECT_TRUE(cursor.NextRequestArguments(false).Find("start") == nullptr);
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

// A peer's text (worker, prefix, error) is shown and saved cut to 200 bytes and escaped; the
// key stays whole, records are joined by it.
TEST(TaskStreamTest, PeerTextIsCutAndEscaped) {
  const std::string key = std::string(100000, 'p') + "-1";
  Value ss = Value::Map();
  ss.Insert(Value::Str("action"), Value::Str("compute\n" + std::string(1000, 'c')));
  ss.Insert(Value::Str("start"), Value::Float(1));
  ss.Insert(Value::Str("stop"), Value::Float(2));
  Value r = Value::Map();
  r.Insert(Value::Str("key"), Value::Str(key));
  r.Insert(Value::Str("worker"), Value::Str("tcp://\x1b[2J"));
  r.Insert(Value::Str("status"), Value::Str("error"));
  r.Insert(Value::Str("exception_text"), Value::Str(std::string(100000, 'x')));
  r.Insert(Value::Str("startstops"), Value::Array({ss}));
  absl::StatusOr<std::vector<TaskRecord>> records = ParseTaskStream(Value::Array({r}));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 1u);
  const TaskRecord& record = (*records)[0];
  EXPECT_EQ(record.key, key);
  EXPECT_EQ(record.prefix, std::string(200, 'p') + "...");
  EXPECT_EQ(record.worker, "tcp://\\x1b[2J");
  EXPECT_EQ(record.exception_text, std::string(200, 'x') + "...");
  ASSERT_EQ(record.startstops.size(), 1u);
  EXPECT_EQ(record.startstops[0].action, "compute\\n" + std::string(192, 'c') + "...");
}

}  // namespace
}  // namespace roastcoffea::dask
