// End to end: what the engine's log or the user's command hands collect may be wrong, and the run
// is still saved, readable, with a warning that names the bad value (reliability study D1, D2,
// D3, D7, D16). Each test runs the real binary on a TaskVine log and a command it starts.
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/collect_runner.h"

namespace roastcoffea {
namespace {

// A finished TaskVine run with one worker and one task; `worker` is the worker's id.
std::string WriteTaskVineLog(const std::string& name, const std::string& worker) {
  const std::string path = absl::StrCat(TempDir(), "/", name, "-transactions");
  std::ofstream(path) << "1742250321362810 1 MANAGER 1 START 0\n"
                      << "1742250321400000 1 WORKER " << worker << " CONNECTION 127.0.0.1:9000\n"
                      << "1742250321494673 1 TASK 1 READY processing FIRST_RESOURCES 1 "
                      << "{\"cores\":[1,\"cores\"]}\n"
                      << "1742250321500000 1 TASK 1 RUNNING " << worker
                      << " FIRST_RESOURCES {\"cores\":[1,\"cores\"]}\n"
                      << "1742250322500000 1 TASK 1 WAITING_RETRIEVAL " << worker << "\n"
                      << "1742250322600000 1 TASK 1 RETRIEVED SUCCESS 0 {} {}\n"
                      << "1742250322700000 1 TASK 1 DONE SUCCESS 0\n"
                      << "1742250323000000 1 MANAGER 1 END 0\n";
  return path;
}

// collect over that log, with `script` (sh) as the user's command when it is not empty.
CollectOutcome RunOverLog(const std::string& log, const std::string& name,
                          const std::string& script = "") {
  std::vector<std::string> arguments = {"--backend=taskvine", "--taskvine_logs=" + log,
                                        "--output_dir=" + TempDir() + "/runs", "--name=" + name};
  if (!script.empty()) {
    arguments.insert(arguments.end(), {"--", "/bin/sh", "-c", script});
  }
  return RunCollect(arguments);
}

// `collect show` of a saved run: the saved files must read back.
CollectOutcome Show(const std::string& name) {
  return RunCollect({"show", TempDir() + "/runs/" + name, "--tables=ascii"});
}

// D1: byte 0xff in a worker id of the log and in --name made a measurement that exited 0 but
// that no later command could read ("is corrupt").
TEST(CollectBadDataTest, TextThatIsNotUtf8IsSavedAsAReadableMeasurement) {
  const std::string log = WriteTaskVineLog("utf8", std::string("w") + '\xff' + "1");
  const std::string name = std::string("bad") + '\xff' + "name";
  const CollectOutcome run = RunOverLog(log, name);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const CollectOutcome show = Show(name);
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_FALSE(absl::StrContains(show.err, "corrupt")) << show.err;
  EXPECT_TRUE(absl::StrContains(show.out, "held bytes that are not UTF-8")) << show.out;
  EXPECT_TRUE(absl::StrContains(show.out, "metadata.name")) << show.out;
}

// D2: one chunk record with t_end before t_start (duration -1) exited 2 and saved nothing; now
// that record is kept out of the figures with a warning naming it, and the run is saved.
TEST(CollectBadDataTest, AnImpossibleChunkRecordIsAWarningAndTheRunIsSaved) {
  const std::string log = WriteTaskVineLog("negative", "w1");
  const CollectOutcome run = RunOverLog(log, "negative", R"(
      echo '[{"t_start": 1742250322.0, "t_end": 1742250321.0, "duration": -1.0,
              "num_events": 10, "file": "f.root", "entry_start": 0, "entry_stop": 10},
             {"t_start": 1742250321.5, "t_end": 1742250322.5, "num_events": 10,
              "file": "f.root", "entry_start": 10, "entry_stop": 20}]' \
        > "$ROASTCOFFEA_CHUNK_RECORDS")");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "impossible value kept out of the figures")) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "duration_seconds is -1")) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "entries 0-10")) << run.err;
  const CollectOutcome show = Show("negative");
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_TRUE(absl::StrContains(show.out, "duration_seconds is -1")) << show.out;
}

// D3: $ROASTCOFFEA_REPORT and $ROASTCOFFEA_CHUNK_RECORDS made directories aborted collect
// (std::__ios_failure) after the command had finished: the run was lost.
TEST(CollectBadDataTest, ReportFilesThatAreDirectoriesAreWarnings) {
  const std::string log = WriteTaskVineLog("dirs", "w1");
  const CollectOutcome run =
      RunOverLog(log, "dirs", R"(mkdir "$ROASTCOFFEA_REPORT" "$ROASTCOFFEA_CHUNK_RECORDS")");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "report.json' is a directory, not a regular file"))
      << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "chunk_records.json' is a directory, not a regular file"))
      << run.err;
  EXPECT_FALSE(absl::StrContains(run.err, "terminate called")) << run.err;
  EXPECT_EQ(Show("dirs").exit_code, 0);
}

// D16: Python's json.dump writes NaN and Infinity; one of them dropped the whole file. Now each
// costs only its own value, named with its record and key.
TEST(CollectBadDataTest, NanAndInfinityFromPythonLoseOnlyTheirValue) {
  const std::string log = WriteTaskVineLog("nan", "w1");
  const CollectOutcome run = RunOverLog(log, "nan", R"(
      echo '{"bytesread": 100, "entries": 10, "processtime": NaN, "chunks": 1}' \
        > "$ROASTCOFFEA_REPORT"
      echo '[{"t_start": 1742250321.5, "t_end": 1742250322.5, "duration": Infinity,
              "num_events": 10, "file": "f.root", "entry_start": 0, "entry_stop": 10}]' \
        > "$ROASTCOFFEA_CHUNK_RECORDS")");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "'processtime' is NaN; the value is left out")) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "record 0: 'duration' is Infinity; the value is left out"))
      << run.err;
  EXPECT_FALSE(absl::StrContains(run.err, "ignored")) << run.err;
  const CollectOutcome show = RunCollect({"show", TempDir() + "/runs/nan", "--format=csv"});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  // The report was kept: its bytes read and events are the run's.
  EXPECT_TRUE(absl::StrContains(show.out, "total_bytes_read,100,")) << show.out;
  EXPECT_TRUE(absl::StrContains(show.out, "total_events,10,")) << show.out;
}

// D7: 100,000 nested lists (200 KB) in the chunk records kept protobuf's JSON parser busy for
// minutes; the nesting is now refused before parsing, and the rest of the run is kept.
TEST(CollectBadDataTest, DeeplyNestedListsAreRefusedAndTheRunIsSaved) {
  const std::string log = WriteTaskVineLog("deep", "w1");
  const CollectOutcome run = RunOverLog(log, "deep", R"(
      awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["; for (i = 0; i < 100000; i++)
                   printf "]" }' > "$ROASTCOFFEA_CHUNK_RECORDS")");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "chunk records ignored")) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "nested too deep")) << run.err;
  EXPECT_EQ(Show("deep").exit_code, 0);
}

// N3 (reliability study 2): one record with 3 million timing sections exhausted memory
// (bad_alloc, nothing saved). Sections beyond the per-record budget are merged into
// "(overflow)" with a warning naming the record, and the run is saved.
TEST(CollectBadDataTest, ARecordWithTooManySectionsIsMergedAndTheRunIsSaved) {
  const std::string log = WriteTaskVineLog("sections", "w1");
  const CollectOutcome run = RunOverLog(log, "sections", R"(
      awk 'BEGIN { printf "[{\"t_start\": 1742250321.5, \"t_end\": 1742250322.5, ";
                   printf "\"num_events\": 10, \"file\": \"f.root\", \"entry_start\": 0, ";
                   printf "\"entry_stop\": 10, \"timing\": {";
                   for (i = 0; i < 100000; i++) printf "%s\"s%d\": 0.001", (i ? ", " : ""), i;
                   printf "}}]" }' > "$ROASTCOFFEA_CHUNK_RECORDS")");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err,
                                "record 0 (file 'f.root', entries 0-10): 99000 sections "
                                "beyond the 1000 a record keeps were merged"))
      << run.err;
  const CollectOutcome show = Show("sections");
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_TRUE(absl::StrContains(show.out, "(overflow)")) << show.out;
}

}  // namespace
}  // namespace roastcoffea
