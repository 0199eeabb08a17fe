// RunModel's chunk rows (run_model_chunks.cc): TakeChunkRows, which frees the tasks block by
// block as their rows are made, gives the records ChunkRecords gives on a copy of the model,
// over several blocks of task ids and a sparse one, with failures, monitored attempts,
// unfinished tasks, another category and concurrent tasks on multi-core workers (slots).
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "backends/taskvine/run_model.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "schema/chunk_table.h"

namespace roastcoffea {
namespace taskvine {
namespace {

using ::google::protobuf::util::MessageDifferencer;

constexpr int64_t kStartUs = 1742250330000000;
constexpr int kWorkers = 3;

std::string WorkerName(int64_t w) { return absl::StrFormat("worker-%032x", w); }

// The lines of a run of `tasks` tasks (ids 1..tasks, then one far beyond the dense ids), in
// time order. Task i runs on worker i % 3 from kStartUs + 1000 i for 8 ms: three at once per
// worker. Every 10th is of category "accumulating", every 97th fails (exit code 1), every 5th
// is monitored, the last 7 never reach DONE.
std::vector<std::string> RunLines(int64_t tasks) {
  std::vector<std::pair<int64_t, std::string>> events;
  const auto at = [&](int64_t us, std::string line) {
    events.emplace_back(us, absl::StrCat(us, " 4242 ", line));
  };
  at(kStartUs, "MANAGER 4242 START 0");
  for (int w = 0; w < kWorkers; ++w) {
    at(kStartUs + 1 + w, absl::StrCat("WORKER ", WorkerName(w), " CONNECTION 10.0.0.", w, ":9000"));
    at(kStartUs + 10 + w,
       absl::StrCat("WORKER ", WorkerName(w),
                    " RESOURCES {\"memory\":[8000,\"MB\"],\"disk\":[70001,\"MB\"],"
                    "\"cores\":[3,\"cores\"]}"));
  }
  std::vector<int64_t> ids;
  for (int64_t i = 1; i <= tasks; ++i) ids.push_back(i);
  ids.push_back(int64_t{1} << 30);  // sparse: beyond the dense ids
  for (size_t k = 0; k < ids.size(); ++k) {
    const int64_t id = ids[k];
    const int64_t t = kStartUs + 100000 + 1000 * static_cast<int64_t>(k);
    const std::string worker = WorkerName(static_cast<int64_t>(k) % kWorkers);
    const char* category = k % 10 == 9 ? "accumulating" : "processing";
    const double ts = static_cast<double>(t) * 1e-6;
    at(t, absl::StrCat("TASK ", id, " READY ", category, " FIRST_RESOURCES 1 {}"));
    at(t + 10, absl::StrCat("TASK ", id, " RUNNING ", worker, " FIRST_RESOURCES {\"cores\":[1,",
                            "\"cores\"]}"));
    if (k + 7 >= ids.size() && k + 1 != ids.size()) continue;  // unfinished
    at(t + 8000, absl::StrCat("TASK ", id, " WAITING_RETRIEVAL ", worker));
    const std::string monitored =
        k % 5 == 0 ? ",\"cpu_time\":[0.0021,\"s\"],\"memory\":[530,\"MB\"]" : "";
    at(t + 8100,
       absl::StrFormat("TASK %d RETRIEVED SUCCESS 0 {} {\"time_worker_start\":[%.6f,\"s\"],"
                       "\"time_worker_end\":[%.6f,\"s\"]%s}",
                       id, ts + 0.0001, ts + 0.0075, monitored));
    at(t + 8200, absl::StrCat("TASK ", id, " DONE SUCCESS ", k % 97 == 96 ? 1 : 0));
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> lines;
  for (auto& [us, line] : events) lines.push_back(std::move(line));
  lines.push_back(absl::StrCat(events.back().first + 1, " 4242 MANAGER 4242 END 0"));
  return lines;
}

RunModel ModelOf(const std::vector<std::string>& lines) {
  RunModel model;
  int64_t number = 0;
  for (const std::string& line : lines) model.ConsumeTransactionLine(line, ++number);
  model.MarkLogComplete();
  return model;
}

TEST(ChunkRows, TakingThemFreesTheTasksAndGivesTheSameRecords) {
  RunModel taken = ModelOf(RunLines(3 * 4096 + 100));  // four dense blocks and a sparse id
  ASSERT_EQ(taken.malformed_count(), 0);
  const RunModel copy = taken;
  const std::vector<v1::ChunkRecord> expected = copy.ChunkRecords("processing");
  // The run exercises what the rows carry.
  int failed = 0, monitored = 0, third_slot = 0;
  for (const v1::ChunkRecord& record : expected) {
    failed += record.status() == v1::CHUNK_STATUS_FAILED;
    monitored += record.memory_peak_bytes() > 0;
    third_slot += record.thread_index() == 2;
  }
  EXPECT_GT(failed, 50);
  EXPECT_GT(monitored, 1000);
  EXPECT_GT(third_slot, 1000);
  EXPECT_EQ(expected.back().task_id(), absl::StrCat(int64_t{1} << 30));

  ChunkTable table;
  taken.TakeChunkRows("processing", &table);
  EXPECT_TRUE(taken.tasks().empty());
  ASSERT_EQ(table.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_TRUE(MessageDifferencer::Equals(table.Record(i), expected[i]))
        << i << ":\n"
        << table.Record(i).DebugString() << "expected:\n"
        << expected[i].DebugString();
  }
}

TEST(ChunkRows, AppendedAfterOtherRowsTheyGetTheirOwnSlots) {
  const RunModel model = ModelOf(RunLines(50));
  const std::vector<v1::ChunkRecord> expected = model.ChunkRecords("processing");
  ChunkTable table;
  v1::ChunkRecord earlier;  // on the same worker at the same time, in a table of its own
  earlier.set_worker(expected.front().worker());
  earlier.set_start_unix_ns(expected.front().start_unix_ns());
  earlier.set_end_unix_ns(expected.front().end_unix_ns());
  table.Append(earlier);
  model.AppendChunkRows("processing", &table);
  EXPECT_FALSE(model.tasks().empty());  // const: the tasks stay
  ASSERT_EQ(table.size(), expected.size() + 1);
  EXPECT_EQ(table.Int(chunk_field::kThreadIndex, 0), 0);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(table.Record(i + 1), expected[i])) << i;
  }
}

// Slots follow time order, not the rows' order: rows out of time order are put in it first
// (rows already in it skip that sort).
TEST(ChunkRows, SlotsFollowTimeOrderWhateverTheRowOrder) {
  std::vector<v1::ChunkRecord> records(4);
  const int64_t spans[][2] = {{30, 40}, {10, 35}, {20, 25}, {50, 60}};
  for (size_t i = 0; i < records.size(); ++i) {
    records[i].set_worker(WorkerName(1));
    records[i].set_start_unix_ns(spans[i][0]);
    records[i].set_end_unix_ns(spans[i][1]);
  }
  AssignSlots(records);
  // In time order: 10-35 takes slot 0, 20-25 slot 1, 30-40 slot 1 again (free since 25).
  EXPECT_EQ(records[0].thread_index(), 1);
  EXPECT_EQ(records[1].thread_index(), 0);
  EXPECT_EQ(records[2].thread_index(), 1);
  EXPECT_EQ(records[3].thread_index(), 0);
  // Already in time order: the same rule.
  std::vector<v1::ChunkRecord> ordered = {records[1], records[2], records[0], records[3]};
  for (v1::ChunkRecord& record : ordered) record.clear_thread_index();
  AssignSlots(ordered);
  EXPECT_EQ(ordered[0].thread_index(), 0);
  EXPECT_EQ(ordered[1].thread_index(), 1);
  EXPECT_EQ(ordered[2].thread_index(), 1);
  EXPECT_EQ(ordered[3].thread_index(), 0);
}

}  // namespace
}  // namespace taskvine
}  // namespace roastcoffea
