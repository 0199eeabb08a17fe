// End to end: `collect compare` of the real binary for scaling studies and CI: the
// configuration block, --format=csv|json|markdown, --html_output with the scaling plot, and
// --fail_on_regression's exit status 5.
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "tests/collect_runner.h"

namespace roastcoffea {
namespace {

// A saved run of 600000 events on `threads` threads taking `elapsed` seconds.
std::string SaveRun(const std::string& name, double threads, double elapsed,
                    const std::string& code = "v1") {
  v1::Measurement run;
  run.mutable_metadata()->set_name(name);
  run.mutable_metadata()->set_tool_version("0.1.0");
  auto& configuration = *run.mutable_metadata()->mutable_configuration();
  configuration["threads"] = absl::StrCat(threads);
  configuration["analysis"] = "sample dijet";
  configuration["code"] = code;
  v1::AggregatedMetrics& m = *run.mutable_metrics();
  m.mutable_workflow()->set_elapsed_time_seconds(elapsed);
  m.mutable_workflow()->set_total_events(600000);
  m.mutable_workflow()->set_event_rate_elapsed_khz(600.0 / elapsed);
  const std::string parent = TempDir() + "/compare_runs";
  absl::StatusOr<std::string> saved = SaveMeasurement(run, parent, name);
  EXPECT_TRUE(saved.ok()) << saved.status();
  return parent + "/" + name;
}

TEST(CollectCompareCiTest, FailOnRegressionExitsFive) {
  // Baseline 10.0, 10.2 s; new code 12.0, 12.1 s: +19.3%, far beyond the noise.
  const std::string a1 = SaveRun("ci_a1", 2, 10.0);
  const std::string a2 = SaveRun("ci_a2", 2, 10.2);
  const std::string b1 = SaveRun("ci_b1", 2, 12.0, "v2");
  const std::string b2 = SaveRun("ci_b2", 2, 12.1, "v2");
  CollectOutcome gate =
      RunCollect({"compare", a1, a2, b1, b2, "--tables=ascii", "--fail_on_regression"});
  EXPECT_EQ(gate.exit_code, 5) << gate.err << gate.out;
  EXPECT_TRUE(absl::StrContains(gate.out, "differs: code: ")) << gate.out;
  EXPECT_TRUE(absl::StrContains(gate.out, "(+19.3%) !")) << gate.out;
  // Without the flag the same comparison exits 0.
  EXPECT_EQ(RunCollect({"compare", a1, a2, b1, b2}).exit_code, 0);
  // Metadata that cannot tell two code versions apart: each version's runs as one argument.
  const std::string c1 = SaveRun("ci_c1", 2, 10.0);
  const std::string c2 = SaveRun("ci_c2", 2, 10.2);
  const std::string d1 = SaveRun("ci_d1", 2, 12.0);
  const std::string d2 = SaveRun("ci_d2", 2, 12.1);
  CollectOutcome grouped = RunCollect(
      {"compare", c1 + "," + c2, d1 + "," + d2, "--tables=ascii", "--fail_on_regression"});
  EXPECT_EQ(grouped.exit_code, 5) << grouped.err << grouped.out;
  EXPECT_TRUE(absl::StrContains(grouped.out, "(+19.3%) !")) << grouped.out;
  // Without the commas they are all repeats of unknown code (no build-id, no label): they may be
  // two versions, so the gate is refused (exit 2) and says how to label them.
  CollectOutcome repeats = RunCollect({"compare", c1, c2, d1, d2, "--fail_on_regression"});
  EXPECT_EQ(repeats.exit_code, 2) << repeats.err;
  EXPECT_TRUE(absl::StrContains(repeats.err, "comma-separated")) << repeats.err;
  EXPECT_TRUE(absl::StrContains(repeats.err, "--label=VERSION")) << repeats.err;
  // Within the noise: baseline 10, 12 s; new 12.5, 13 s (+13.6%, noise 2.3 s): not a regression.
  const std::string n1 = SaveRun("noise_a1", 2, 10.0);
  const std::string n2 = SaveRun("noise_a2", 2, 12.0);
  const std::string n3 = SaveRun("noise_b1", 2, 12.0, "v2");
  const std::string n4 = SaveRun("noise_b2", 2, 13.0, "v2");
  CollectOutcome noisy =
      RunCollect({"compare", n1, n2, n3, n4, "--tables=ascii", "--fail_on_regression"});
  EXPECT_EQ(noisy.exit_code, 0) << noisy.out;
  EXPECT_TRUE(absl::StrContains(noisy.out, "(+13.6%) ~")) << noisy.out;
}

TEST(CollectCompareCiTest, FormatsForScripts) {
  const std::string a = SaveRun("fmt_a", 1, 10.0);
  const std::string b = SaveRun("fmt_b", 1, 12.0, "v2");
  // One run per side and no chunk records: no noise estimate, so no regression ...
  CollectOutcome unknown = RunCollect({"compare", a, b, "--format=csv", "--fail_on_regression"});
  EXPECT_EQ(unknown.exit_code, 0) << unknown.err;
  EXPECT_TRUE(absl::StrContains(unknown.out, ",1,12,,20,no_noise_estimate\n")) << unknown.out;
  // ... unless the threshold is given explicitly: then it alone decides.
  CollectOutcome csv = RunCollect({"compare", a, b, "--format=csv", "--regression_threshold=5"});
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_TRUE(absl::StartsWith(
      csv.out, "metric,unit,configuration,runs,n,mean,stddev,change_percent,status\n"))
      << csv.out;
  EXPECT_TRUE(absl::StrContains(csv.out, "Elapsed Time,s,2,")) << csv.out;
  EXPECT_TRUE(absl::StrContains(csv.out, ",1,12,,20,regression\n")) << csv.out;
  CollectOutcome json = RunCollect({"compare", a, b, "--format=json", "--regression_threshold=5"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(absl::StrContains(json.out, "\"regressions\": 2,")) << json.out;
  CollectOutcome markdown =
      RunCollect({"compare", a, b, "--format=markdown", "--regression_threshold=5"});
  EXPECT_EQ(markdown.exit_code, 0) << markdown.err;
  EXPECT_TRUE(absl::StrContains(markdown.out, "| Elapsed Time | s | 10 | 12 (+20.0%) \u25BC |"))
      << markdown.out;
  CollectOutcome bad = RunCollect({"compare", a, b, "--format=xml"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(bad.err, "--format")) << bad.err;
}

TEST(CollectCompareCiTest, ScalingStudyWithHtmlPlot) {
  // 600000 events, 20% serial: 120 s x (0.2 + 0.8 / n) on 1, 2, 4 threads.
  const std::vector<std::string> dirs = {SaveRun("s1", 1, 120.0), SaveRun("s2", 2, 72.0),
                                         SaveRun("s4", 4, 48.0)};
  const std::string html = TempDir() + "/scaling.html";
  CollectOutcome compare =
      RunCollect({"compare", dirs[0], dirs[1], dirs[2], "--html_output=" + html});
  EXPECT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_TRUE(absl::StrContains(compare.out, "serial fraction 0.200 (20.0%), R^2 1.0000"))
      << compare.out;
  EXPECT_TRUE(absl::StrContains(compare.out, "predicted speedup at 8 cores: 3.33x")) << compare.out;
  const std::string page = ReadFile(html);
  EXPECT_TRUE(absl::StartsWith(page, "<!DOCTYPE html>")) << page.substr(0, 200);
  EXPECT_TRUE(absl::StrContains(page, "<svg")) << page.size();
  EXPECT_TRUE(absl::StrContains(page, "Amdahl s=0.200")) << page.size();
  // Two core counts: the fit is refused with a sentence.
  CollectOutcome two = RunCollect({"compare", dirs[0], dirs[1]});
  EXPECT_TRUE(absl::StrContains(two.out, "no Amdahl fit: it needs runs on at least 3")) << two.out;
}

// A real run of the sample analysis: 3 datasets x 2 files x 20000 events in chunks of
// `chunk_size`, under `label` ("": no --label).
std::string RealRun(const std::string& name, const std::string& label, int chunk_size) {
  const std::string output = TempDir() + "/real_runs";
  const CollectOutcome run =
      RunCollect({"--threads=2", "--events_per_file=20000", "--files_per_dataset=2",
                  absl::StrCat("--chunk_size=", chunk_size), "--interval=0.05",
                  "--cache_dir=" + TempDir() + "/cache", "--output_dir=" + output, "--name=" + name,
                  label.empty() ? "--tables=ascii" : "--label=" + label, "--tables=ascii"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return output + "/" + name;
}

// Two runs of the same binary with the same flags and no --label: the same code build-id, so
// they are repeats. Without the gate they are shown with their spread; with it the gate passes
// (exit 0) and says why, instead of refusing (exit 2) as it does for runs of unknown code.
TEST(CollectCompareRealRunsTest, TwoRunsOfTheSameBinaryAreRepeats) {
  const std::string first = RealRun("same_1", "", 5000);
  const std::string second = RealRun("same_2", "", 5000);
  const CollectOutcome shown = RunCollect({"compare", first, second, "--tables=ascii"});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_TRUE(absl::StrContains(shown.out, "(n=2)")) << shown.out;
  // The note is wrapped to the width: read it as one line.
  const auto unwrapped = [](const std::string& text) {
    return absl::StrReplaceAll(text, {{"\n    ", " "}});
  };
  EXPECT_TRUE(absl::StrContains(unwrapped(shown.out), "they are repeats, shown with their spread"))
      << shown.out;
  const CollectOutcome gate =
      RunCollect({"compare", first, second, "--tables=ascii", "--fail_on_regression"});
  EXPECT_EQ(gate.exit_code, 0) << gate.out << gate.err;
  EXPECT_TRUE(
      absl::StrContains(unwrapped(gate.out), "--fail_on_regression passes, as nothing can regress"))
      << gate.out;
}

TEST(CollectCompareRealRunsTest, IdenticalCodeIsNoRegressionAndARealSlowdownIsCaught) {
  // Same code, same flags, two labels (a CI job comparing base and head): one run each.
  const std::string base = RealRun("base", "base", 5000);
  const std::string head = RealRun("head", "head", 5000);
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(base);
  ASSERT_TRUE(saved.ok()) << saved.status();
  const auto& configuration = saved->metadata().configuration();
  ASSERT_EQ(configuration.count("label"), 1u);
  EXPECT_EQ(configuration.at("label"), "base");
  // collect is the analysis: its own ELF build-id (sha1 or md5 in hex).
  ASSERT_EQ(configuration.count("code build-id"), 1u);
  EXPECT_TRUE(configuration.at("code build-id").size() == 40 ||
              configuration.at("code build-id").size() == 32)
      << configuration.at("code build-id");
  const std::string html = TempDir() + "/real_compare.html";
  const CollectOutcome same = RunCollect(
      {"compare", base, head, "--fail_on_regression", "--tables=ascii", "--html_output=" + html});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_TRUE(absl::StrContains(same.out, "differs: label: ")) << same.out;
  EXPECT_TRUE(absl::StrContains(same.out, "Chunk CPU Time per Event")) << same.out;
  const CollectOutcome same_json = RunCollect({"compare", base, head, "--format=json"});
  EXPECT_TRUE(absl::StrContains(same_json.out, "\"verdicts\": [\"" + head + " ran "))
      << same_json.out;
  EXPECT_TRUE(absl::StrContains(same_json.out, "(per-chunk estimate: Chunk CPU Time per Event"))
      << same_json.out;
  const std::string page = ReadFile(html);
  EXPECT_TRUE(absl::StrContains(page, "<b>Verdict:</b>")) << page.size();
  EXPECT_TRUE(absl::StrContains(page, "Findings (")) << page.size();
  // Chunks of 1000 events re-read the compressed columns: more CPU per event in every chunk,
  // caught by the rank test over the chunks.
  const std::string slow = RealRun("small_chunks", "head", 1000);
  const CollectOutcome caught =
      RunCollect({"compare", base, slow, "--fail_on_regression", "--tables=ascii"});
  EXPECT_EQ(caught.exit_code, 5) << caught.out << caught.err;
  // Its Data Rate rose from re-reading: marked, not an improvement.
  EXPECT_TRUE(absl::StrContains(caught.out, "^ = not an improvement (1)")) << caught.out;
  // The regression is the per-chunk row, decided by its named rank test.
  const CollectOutcome json = RunCollect({"compare", base, slow, "--format=json"});
  const size_t row = json.out.find("{\"metric\": \"Chunk CPU Time per Event\"");
  ASSERT_NE(row, std::string::npos) << json.out;
  const std::string chunk_row = json.out.substr(row, json.out.find("]}", row) - row);
  EXPECT_TRUE(absl::StrContains(chunk_row, "\"test\": \"Mann-Whitney U over chunks\""))
      << chunk_row;
  EXPECT_TRUE(absl::StrContains(chunk_row, "\"status\": \"regression\"")) << chunk_row;
  EXPECT_TRUE(absl::StrContains(json.out, "x slower than " + base)) << json.out;
}

}  // namespace
}  // namespace roastcoffea
