// End to end: `collect show --format=...` and `collect compare` of the real binary on saved
// measurements (ours, written with SaveMeasurement, and one in the original Python tool's
// roastcoffea_measurement_v1 layout).
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "tests/collect_runner.h"

namespace roastcoffea {
namespace {

using Outcome = CollectOutcome;

// A saved run of `threads` threads, 120 s of single-core work with 20% serial.
std::string SaveRun(const std::string& name, double threads) {
  v1::Measurement run;
  run.mutable_metadata()->set_name(name);
  (*run.mutable_metadata()->mutable_configuration())["threads"] = absl::StrCat(threads);
  const double elapsed = 120.0 * (0.2 + 0.8 / threads);
  v1::AggregatedMetrics& m = *run.mutable_metrics();
  m.mutable_workflow()->set_elapsed_time_seconds(elapsed);
  m.mutable_workflow()->set_total_events(600000);
  m.mutable_workflow()->set_event_rate_elapsed_khz(600.0 / elapsed);
  m.mutable_efficiency()->set_speedup_factor(120.0 / elapsed);
  const std::string parent = TempDir() + "/runs";
  absl::StatusOr<std::string> saved = SaveMeasurement(run, parent, name);
  EXPECT_TRUE(saved.ok()) << saved.status();
  return parent + "/" + name;
}

std::string WriteLegacyRun() {
  const std::string dir = TempDir() + "/2026-01-01_12-00-00";
  mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/metrics.json")
      << "{\n  \"total_events\": 600000,\n  \"elapsed_time_seconds\": 120.0,\n"
         "  \"event_rate_elapsed_khz\": 5.0,\n  \"wall_time\": 120.0,\n"
         "  \"speedup_factor\": 1.0,\n  \"chunk_duration_std\": NaN,\n"
         "  \"raw_span_metrics\": {\"('execute', 'P', 'thread-cpu', 'seconds')\": 1.5,\n"
         "    \"('execute', 'P', 'thread-noncpu', 'seconds')\": 0.5},\n"
         "  \"processor_cpu_time_seconds\": 1.5,\n  \"processor_io_wait_time_seconds\": 0.5\n}";
  std::ofstream(dir + "/start_end_time.txt") << "100.25,220.25\n";
  std::ofstream(dir + "/metadata.json")
      << "{\n  \"timestamp\": \"2026-01-01T12:02:00\",\n  \"elapsed_time_seconds\": 120.0,\n"
         "  \"format\": \"roastcoffea_measurement_v1\"\n}";
  return dir;
}

TEST(CollectShowFormatTest, FlatFormatsForScripts) {
  const std::string dir = SaveRun("formats", 2);
  Outcome csv = RunCollect({"show", dir, "--format=csv"});
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_TRUE(absl::StartsWith(csv.out, "key,value,unit\n")) << csv.out;
  EXPECT_TRUE(absl::StrContains(csv.out, "\ntotal_events,600000,events\n")) << csv.out;
  Outcome json = RunCollect({"show", dir, "--format=json"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(absl::StrContains(json.out, "\"measurement\": \"formats\"")) << json.out;
  // Keyed: jq .metrics.total_events.value
  EXPECT_TRUE(
      absl::StrContains(json.out, "\"total_events\": {\"value\": 600000, \"unit\": \"events\"}"))
      << json.out;
  Outcome markdown = RunCollect({"show", dir, "--format=markdown"});
  EXPECT_EQ(markdown.exit_code, 0) << markdown.err;
  // The human tables, for a pull-request comment.
  EXPECT_TRUE(absl::StrContains(markdown.out, "| Total Events | 600,000 |")) << markdown.out;
  Outcome bad = RunCollect({"show", dir, "--format=xml"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(bad.err, "--format")) << bad.err;
}

// The flat metrics own stdout; --trace still writes the timeline, and says so on stderr.
TEST(CollectShowFormatTest, FlatFormatsWriteTheTraceToo) {
  const std::string dir = SaveRun("formats-trace", 2);
  for (const char* format : {"csv", "json"}) {
    const std::string trace = absl::StrCat(TempDir(), "/flat-", format, ".json");
    Outcome outcome = RunCollect(
        {"show", dir, absl::StrCat("--format=", format), absl::StrCat("--trace=", trace)});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
    EXPECT_FALSE(ReadFile(trace).empty()) << format << ": no trace written; " << outcome.err;
    EXPECT_TRUE(absl::StrContains(outcome.err, trace)) << outcome.err;
    EXPECT_FALSE(absl::StrContains(outcome.out, "Timeline")) << outcome.out;
  }
}

// A measurement's own file names its directory.
TEST(CollectShowFormatTest, AMeasurementsFileNamesItsDirectory) {
  const std::string dir = SaveRun("by-file", 2);
  for (const char* file : {"/measurement.json", "/measurement.pb"}) {
    Outcome outcome = RunCollect({"show", dir + file, "--format=csv"});
    EXPECT_EQ(outcome.exit_code, 0) << file << ": " << outcome.err;
    EXPECT_TRUE(absl::StrContains(outcome.out, "\ntotal_events,600000,events\n")) << outcome.out;
  }
}

// The default report path beside a read-only (or otherwise unwritable) measurement falls back
// to the current directory, as `profile` does, and says so. (A directory in the report's place
// makes the default fail even for root, whom permission bits do not stop.)
TEST(CollectReportTest, FallsBackWhenTheDefaultPlaceIsNotWritable) {
  const std::string dir = SaveRun("report-fallback", 2);
  ASSERT_EQ(mkdir((dir + ".html").c_str(), 0755), 0);
  Outcome outcome = RunCollect({"report", dir});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_TRUE(absl::StrContains(outcome.err, "cannot write the report to " + dir + ".html"))
      << outcome.err;
  const std::string prefix = "HTML report written to ";
  const size_t at = outcome.out.find(prefix);
  ASSERT_NE(at, std::string::npos) << outcome.out;
  const std::string written =
      outcome.out.substr(at + prefix.size(), outcome.out.find('\n', at) - at - prefix.size());
  EXPECT_TRUE(absl::EndsWith(written, "/report-fallback.html")) << written;
  EXPECT_TRUE(absl::StrContains(ReadFile(written), "<html")) << written;
  std::remove(written.c_str());
}

TEST(CollectShowFormatTest, ShowsTheOriginalToolsDirectory) {
  const std::string dir = WriteLegacyRun();
  Outcome show = RunCollect({"show", dir, "--tables=ascii"});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_TRUE(absl::StrContains(show.out, "Measurement: 2026-01-01_12-00-00")) << show.out;
  EXPECT_TRUE(absl::StrContains(show.out, "| Total Events ")) << show.out;
  EXPECT_TRUE(absl::StrContains(show.out, "600,000")) << show.out;
  EXPECT_TRUE(absl::StrContains(show.out, "Fine Metrics\n")) << show.out;
  EXPECT_TRUE(absl::StrContains(show.out, "| Processor CPU Time ")) << show.out;
}

TEST(CollectCompareTest, SideBySideRegressionsAndAmdahl) {
  const std::vector<std::string> dirs = {SaveRun("t1", 1), SaveRun("t2", 2), SaveRun("t4", 4),
                                         WriteLegacyRun()};
  Outcome compare = RunCollect({"compare", dirs[0], dirs[1], dirs[2], "--tables=ascii"});
  EXPECT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_TRUE(absl::StrContains(compare.out, "Elapsed Time")) << compare.out;
  EXPECT_TRUE(absl::StrContains(compare.out, "(-40.0%)")) << compare.out;  // 120 s -> 72 s
  EXPECT_TRUE(absl::StrContains(compare.out, "serial fraction 0.200 (20.0%)")) << compare.out;
  EXPECT_TRUE(absl::StrContains(compare.out, "predicted speedup at 8 cores: 3.33x")) << compare.out;
  // The legacy run compares too; it is slower than the 2-thread baseline, but one run per side
  // without chunk records has no noise estimate ("?") ...
  Outcome mixed = RunCollect({"compare", dirs[1], dirs[3], "--tables=ascii"});
  EXPECT_EQ(mixed.exit_code, 0) << mixed.err;
  EXPECT_TRUE(absl::StrContains(mixed.out, "(+66.7%) ?")) << mixed.out;
  // ... unless the threshold is given: then it is a regression by the threshold alone.
  mixed = RunCollect({"compare", dirs[1], dirs[3], "--tables=ascii", "--regression_threshold=5"});
  EXPECT_EQ(mixed.exit_code, 0) << mixed.err;
  EXPECT_TRUE(absl::StrContains(mixed.out, "(+66.7%) !")) << mixed.out;
  Outcome alone = RunCollect({"compare", dirs[0]});
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(alone.err, "two or more")) << alone.err;
  Outcome missing = RunCollect({"compare", dirs[0], TempDir() + "/nope"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(missing.err, "nope")) << missing.err;
}

}  // namespace
}  // namespace roastcoffea
