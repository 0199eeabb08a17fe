// End to end: the chunk records a command hands collect ($ROASTCOFFEA_CHUNK_RECORDS) are kept as
// a table from the session's FinishRun to the save (issue #25), and every one of them reaches the
// saved measurement, the --trace timeline and the --html report.
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "ingest/coffea_json.h"
#include "schema/chunk_table.h"
#include "store/measurement_io.h"
#include "tests/collect_runner.h"

namespace roastcoffea {
namespace {

using ::google::protobuf::util::MessageDifferencer;

constexpr int kChunks = 400;

// A finished TaskVine run with one worker and one task.
std::string WriteTaskVineLog() {
  const std::string path = TempDir() + "/records-transactions";
  std::ofstream(path) << "1742250321362810 1 MANAGER 1 START 0\n"
                      << "1742250321400000 1 WORKER w1 CONNECTION 127.0.0.1:9000\n"
                      << "1742250321494673 1 TASK 1 READY processing FIRST_RESOURCES 1 "
                      << "{\"cores\":[1,\"cores\"]}\n"
                      << "1742250321500000 1 TASK 1 RUNNING w1 FIRST_RESOURCES "
                      << "{\"cores\":[1,\"cores\"]}\n"
                      << "1742250322500000 1 TASK 1 WAITING_RETRIEVAL w1\n"
                      << "1742250322600000 1 TASK 1 RETRIEVED SUCCESS 0 {} {}\n"
                      << "1742250322700000 1 TASK 1 DONE SUCCESS 0\n"
                      << "1742250323000000 1 MANAGER 1 END 0\n";
  return path;
}

// kChunks records, each of its own file (part-<i>.root), with a timing section; one failed.
std::string WriteRecords() {
  const std::string path = TempDir() + "/records.json";
  std::ofstream out(path);
  out << "[";
  for (int i = 0; i < kChunks; ++i) {
    const double start = 1742250321.5 + 0.001 * i;
    out << (i == 0 ? "" : ",\n") << "{\"dataset\": \"qcd\", "
        << "\"file\": \"part-" << i << ".root\", \"entry_start\": " << 100 * i
        << ", \"entry_stop\": " << 100 * i + 100 << ", \"num_events\": 100, "
        << "\"t_start\": " << absl::StrCat(start) << ", \"t_end\": " << absl::StrCat(start + 0.5)
        << ", \"timing\": {\"jets\": 0.25}"
        << (i == 7 ? ", \"error\": \"ValueError: bad jet\"" : "") << "}";
  }
  out << "]\n";
  return path;
}

TEST(CollectRecordsTest, EveryRecordIsSavedAndInTheTraceAndTheReport) {
  const std::string records = WriteRecords();
  const std::string trace = TempDir() + "/records.trace.json";
  const CollectOutcome run = RunCollect(
      {"--backend=taskvine", "--taskvine_logs=" + WriteTaskVineLog(),
       "--output_dir=" + TempDir() + "/runs", "--name=records", "--trace=" + trace, "--html", "--",
       "/bin/sh", "-c", "cp '" + records + "' \"$ROASTCOFFEA_CHUNK_RECORDS\""});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(absl::StrContains(run.out, "Timeline written to " + trace)) << run.out;
  EXPECT_TRUE(absl::StrContains(run.out, "HTML report written to")) << run.out;

  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(TempDir() + "/runs/records");
  ASSERT_TRUE(saved.ok()) << saved.status();
  absl::StatusOr<ChunkTableRead> input = ReadChunkRecordsAsTable(records);
  ASSERT_TRUE(input.ok()) << input.status();
  const std::vector<v1::ChunkRecord> expected = RecordsOf(input->table);
  ASSERT_EQ(expected.size(), static_cast<size_t>(kChunks));
  // The input's records, in order (the engine's one task, not among them, may follow).
  ASSERT_GE(saved->chunks_size(), kChunks);
  for (int i = 0; i < kChunks; ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(saved->chunks(i), expected[i]))
        << "record " << i << "\nsaved:    " << saved->chunks(i).ShortDebugString()
        << "\nexpected: " << expected[i].ShortDebugString();
  }
  EXPECT_EQ(saved->metrics().chunks().num_chunks(), saved->chunks_size());

  const std::string timeline = ReadFile(trace);
  const std::string report = ReadFile(TempDir() + "/runs/records.html");
  ASSERT_FALSE(timeline.empty());
  ASSERT_FALSE(report.empty());
  for (int i = 0; i < kChunks; ++i) {
    const std::string file = absl::StrCat("part-", i, ".root");
    EXPECT_TRUE(absl::StrContains(timeline, absl::StrCat("\"file\":\"", file, "\"")))
        << file << " is not in the trace";
    EXPECT_TRUE(absl::StrContains(report, absl::StrCat(file, " [", 100 * i, ", ")))
        << file << " is not in the report";
  }
}

}  // namespace
}  // namespace roastcoffea
