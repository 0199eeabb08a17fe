#include "export/compare.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

// A run of 1e6 events on `cores` cores, taking `elapsed` seconds (default: a job of 100 s on
// one core, 10% of it serial).
v1::Measurement MakeRun(double cores, std::optional<double> elapsed_seconds = std::nullopt) {
  v1::Measurement run;
  const double elapsed = elapsed_seconds.value_or(100.0 * (0.1 + 0.9 / cores));
  auto& configuration = *run.mutable_metadata()->mutable_configuration();
  configuration["analysis"] = "sample dijet";
  configuration["chunk_size"] = "25000";
  configuration["threads"] = absl::StrCat(cores);
  run.mutable_metadata()->set_tool_version("0.1.0");
  run.mutable_metadata()->set_backend("threadpool");
  v1::AggregatedMetrics& m = *run.mutable_metrics();
  m.mutable_workflow()->set_elapsed_time_seconds(elapsed);
  m.mutable_workflow()->set_total_events(1000000);
  m.mutable_workflow()->set_event_rate_elapsed_khz(1000000 / elapsed / 1000);
  m.mutable_workers()->set_total_cores(cores);
  m.mutable_workers()->set_peak_memory_bytes(100 * 1024 * 1024);
  return run;
}

const MetricComparison& Metric(const ComparisonResult& result, const std::string& label) {
  for (const MetricComparison& metric : result.metrics) {
    if (metric.label == label) return metric;
  }
  ADD_FAILURE() << "no metric " << label;
  static const MetricComparison* const none = new MetricComparison();
  return *none;
}

ComparisonResult Compare(const std::vector<std::string>& labels,
                         const std::vector<v1::Measurement>& runs, ComparisonOptions options = {}) {
  absl::StatusOr<ComparisonResult> result = CompareRuns(labels, runs, options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : ComparisonResult();
}

TEST(PercentChangeTest, RelativeToTheBaseline) {
  EXPECT_DOUBLE_EQ(*PercentChange(10.0, 12.0), 20.0);
  EXPECT_DOUBLE_EQ(*PercentChange(-10.0, -5.0), 50.0);
  EXPECT_FALSE(PercentChange(0.0, 1.0).has_value());
  EXPECT_FALSE(PercentChange(std::nullopt, 1.0).has_value());
  EXPECT_FALSE(PercentChange(1.0, std::nan("")).has_value());
}

TEST(IsRegressionTest, DirectionAndThreshold) {
  EXPECT_TRUE(IsRegression(Better::kHigher, -10.0, 5.0));
  EXPECT_FALSE(IsRegression(Better::kHigher, 10.0, 5.0));
  EXPECT_FALSE(IsRegression(Better::kHigher, -4.0, 5.0));
  EXPECT_TRUE(IsRegression(Better::kLower, 10.0, 5.0));
  EXPECT_FALSE(IsRegression(Better::kLower, -50.0, 5.0));
  EXPECT_FALSE(IsRegression(Better::kNeither, 1000.0, 5.0));
}

TEST(CompareMetricsTest, OnlyMetricsKnownSomewhereAndUnknownIsNotZero) {
  v1::Measurement a = MakeRun(2);
  a.mutable_metrics()->mutable_cpu()->set_cpu_efficiency_fraction(0.5);
  v1::Measurement b = MakeRun(2);
  b.mutable_metrics()->mutable_workflow()->clear_total_events();
  const std::vector<ComparedMetric> metrics = CompareMetrics({a, b});
  ASSERT_FALSE(metrics.empty());
  EXPECT_EQ(metrics[0].label, "CPU Efficiency");
  EXPECT_TRUE(metrics[0].expected_with_more_cores);
  EXPECT_DOUBLE_EQ(*metrics[0].values[0], 50.0);
  EXPECT_FALSE(metrics[0].values[1].has_value());
  for (const ComparedMetric& metric : metrics) {
    EXPECT_NE(metric.label, "Failed Chunks");  // No chunk records in either run.
    if (metric.label == "Elapsed Time") {
      EXPECT_FALSE(metric.expected_with_more_cores);
    }
  }
}

TEST(ParseComparisonFormatTest, NamesTheBadValue) {
  EXPECT_EQ(*ParseComparisonFormat("csv"), ComparisonFormat::kCsv);
  EXPECT_EQ(*ParseComparisonFormat("md"), ComparisonFormat::kMarkdown);
  EXPECT_EQ(*ParseComparisonFormat("table"), ComparisonFormat::kTable);
  const absl::StatusOr<ComparisonFormat> bad = ParseComparisonFormat("xml");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "'xml'"));
}

TEST(CompareRunsTest, NeedsTwoRunsAndOneLabelEach) {
  EXPECT_FALSE(CompareRuns({"a"}, {MakeRun(1)}, {}).ok());
  EXPECT_FALSE(CompareRuns({"a"}, {MakeRun(1), MakeRun(2)}, {}).ok());
}

TEST(CompareRunsTest, ConfigurationBlockSaysWhatDiffers) {
  v1::Measurement b = MakeRun(2);
  b.mutable_metadata()->set_tool_version("0.2.0");
  ComparisonOptions options;
  options.unicode = false;
  const ComparisonResult result = Compare({"A", "B"}, {MakeRun(1), b}, options);
  const std::vector<std::string> lines = absl::StrSplit(result.text, '\n');
  ASSERT_GT(lines.size(), 4u);
  EXPECT_EQ(lines[0], "Configuration");
  EXPECT_TRUE(absl::StartsWith(lines[1],
                               "  same in every run: backend threadpool; analysis "
                               "sample dijet; chunk_size 25000;"))
      << result.text;
  EXPECT_TRUE(absl::StartsWith(lines[2], "    Total Events 1000000; oversubscribed no"))
      << result.text;  // wrapped before 100 columns
  EXPECT_TRUE(absl::StrContains(result.text, "  differs: tool version: A=0.1.0, B=0.2.0\n"))
      << result.text;
  EXPECT_TRUE(absl::StrContains(result.text, "  differs: threads: A=1, B=2\n")) << result.text;
  EXPECT_TRUE(absl::StrContains(result.text, "  baseline: A - 1 core, threadpool\n"))
      << result.text;
  EXPECT_TRUE(absl::StrContains(result.text, "  2: B - 2 cores, threadpool\n")) << result.text;
  // The configuration comes first in the table too.
  EXPECT_LT(result.text.find("differs:"), result.text.find("Comparison against the baseline"));
}

TEST(CompareRunsTest, RepeatsOfOneConfigurationGiveMeanAndSpread) {
  // Elapsed 10, 12 s: python3 statistics.mean = 11, statistics.stdev = 1.4142135623730951.
  const ComparisonResult result =
      Compare({"a1", "a2", "b"}, {MakeRun(2, 10.0), MakeRun(2, 12.0), MakeRun(4, 8.0)});
  ASSERT_EQ(result.groups.size(), 2u);
  EXPECT_EQ(result.groups[0].name, "a1, a2 (n=2)");
  EXPECT_EQ(result.groups[0].runs, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(result.groups[1].name, "b");
  const MetricComparison& elapsed = Metric(result, "Elapsed Time");
  ASSERT_EQ(elapsed.groups.size(), 2u);
  EXPECT_EQ(elapsed.groups[0].summary.n, 2u);
  EXPECT_DOUBLE_EQ(elapsed.groups[0].summary.mean, 11.0);
  EXPECT_NEAR(*elapsed.groups[0].summary.stddev, 1.4142135623730951, 1e-12);
  EXPECT_EQ(elapsed.groups[0].status, ChangeStatus::kBaseline);
  EXPECT_NEAR(*elapsed.groups[1].change_percent, 100.0 * (8.0 - 11.0) / 11.0, 1e-9);
  EXPECT_EQ(elapsed.groups[1].status, ChangeStatus::kOk);
  EXPECT_TRUE(absl::StrContains(result.text, "11 \u00B1 1.4")) << result.text;
}

TEST(CompareRunsTest, OnlyChangesBeyondTheNoiseAreRegressions) {
  // Baseline 10, 12 s (mean 11, s 1.414); B 12, 13 s (mean 12.5, s 0.7071, +13.6%):
  // noise = 2 sqrt(2/2 + 0.5/2) = 2.236 > 1.5, so within the noise.
  const ComparisonResult noisy =
      Compare({"a1", "a2", "b1", "b2"},
              {MakeRun(2, 10.0), MakeRun(2, 12.0), MakeRun(2, 12.0), MakeRun(2, 13.0)},
              ComparisonOptions{});
  EXPECT_EQ(noisy.groups.size(), 1u);  // same configuration: all four are repeats
  // The same data with B on a build that differs in the workload key: two configurations.
  std::vector<v1::Measurement> runs = {MakeRun(2, 10.0), MakeRun(2, 12.0), MakeRun(2, 12.0),
                                       MakeRun(2, 13.0)};
  for (size_t r = 2; r < 4; ++r) {
    (*runs[r].mutable_metadata()->mutable_configuration())["code"] = "new";
  }
  ComparisonResult result = Compare({"a1", "a2", "b1", "b2"}, runs);
  ASSERT_EQ(result.groups.size(), 2u);
  EXPECT_EQ(Metric(result, "Elapsed Time").groups[1].status, ChangeStatus::kWithinNoise);
  EXPECT_EQ(result.regressions, 0);
  EXPECT_TRUE(absl::StrContains(result.text, "(+13.6%) ~")) << result.text;
  // B at 14.0, 14.2 s (mean 14.1, s 0.1414): noise = 2 sqrt(1 + 0.01) = 2.01 < 3.1.
  runs[2].mutable_metrics()->mutable_workflow()->set_elapsed_time_seconds(14.0);
  runs[3].mutable_metrics()->mutable_workflow()->set_elapsed_time_seconds(14.2);
  result = Compare({"a1", "a2", "b1", "b2"}, runs);
  EXPECT_EQ(Metric(result, "Elapsed Time").groups[1].status, ChangeStatus::kRegression);
  EXPECT_EQ(result.regressions, 1);
  EXPECT_TRUE(result.regression_found());
  EXPECT_FALSE(result.failed());  // fail_on_regression not asked for
  ComparisonOptions fail;
  fail.fail_on_regression = true;
  EXPECT_TRUE(Compare({"a1", "a2", "b1", "b2"}, runs, fail).failed());
}

TEST(CompareRunsTest, ExplicitConfigurationsForRunsMetadataCannotTellApart) {
  // Two versions of the code, measured twice each, identical metadata.
  const std::vector<v1::Measurement> runs = {MakeRun(2, 10.0), MakeRun(2, 10.2), MakeRun(2, 12.0),
                                             MakeRun(2, 12.1)};
  const ComparisonResult automatic = Compare({"a1", "a2", "b1", "b2"}, runs);
  EXPECT_EQ(automatic.groups.size(), 1u);
  EXPECT_TRUE(absl::StrContains(automatic.text, "every run has the same configuration"))
      << automatic.text;
  ComparisonOptions gate;
  gate.fail_on_regression = true;
  const absl::StatusOr<ComparisonResult> refused =
      CompareRuns({"a1", "a2", "b1", "b2"}, runs, gate);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "BASE1,BASE2 NEW1,NEW2"))
      << refused.status();
  gate.configuration_of_run = {0, 0, 1, 1};
  const ComparisonResult grouped = Compare({"a1", "a2", "b1", "b2"}, runs, gate);
  ASSERT_EQ(grouped.groups.size(), 2u);
  EXPECT_EQ(grouped.groups[1].name, "b1, b2 (n=2)");
  // 10.1 +- 0.1414 -> 12.05 +- 0.0707: +19.3%, noise 2 sqrt(0.02/2 + 0.005/2) = 0.2236.
  EXPECT_EQ(Metric(grouped, "Elapsed Time").groups[1].status, ChangeStatus::kRegression);
  EXPECT_TRUE(grouped.failed());
  gate.configuration_of_run = {0, 1};
  EXPECT_FALSE(CompareRuns({"a1", "a2", "b1", "b2"}, runs, gate).ok());
}

// Runs that record the same code (build-id, label) and flags are repeats: the gate passes and
// says why. The same runs without a recorded identity may be two versions: refused.
TEST(CompareRunsTest, RepeatsOfKnownCodePassTheGate) {
  std::vector<v1::Measurement> runs = {MakeRun(2, 10.0), MakeRun(2, 12.0)};
  for (v1::Measurement& run : runs) {
    (*run.mutable_metadata()->mutable_configuration())["code build-id"] = "0a1b2c";
  }
  EXPECT_TRUE(RunsShareKnownCode(runs));
  ComparisonOptions gate;
  gate.fail_on_regression = true;
  const ComparisonResult result = Compare({"r1", "r2"}, runs, gate);
  ASSERT_EQ(result.groups.size(), 1u);
  EXPECT_TRUE(result.repeats_of_known_code);
  EXPECT_FALSE(result.failed());
  EXPECT_TRUE(absl::StrContains(result.text, "nothing can regress")) << result.text;
  EXPECT_TRUE(absl::StrContains(result.text, "11 \u00B1 1.4")) << result.text;
  // A label on one run only: not the same recorded identity.
  (*runs[1].mutable_metadata()->mutable_configuration())["label"] = "head";
  EXPECT_FALSE(RunsShareKnownCode(runs));
  runs[0].mutable_metadata()->mutable_configuration()->clear();
  runs[1].mutable_metadata()->mutable_configuration()->clear();
  EXPECT_FALSE(RunsShareKnownCode(runs));
  EXPECT_FALSE(CompareRuns({"r1", "r2"}, runs, gate).ok());
}

TEST(CompareRunsTest, DifferentBuildsAreNeverRepeats) {
  v1::Measurement debug = MakeRun(2, 20.0);
  debug.mutable_metadata()->mutable_tool_build()->set_build_mode("fastbuild");
  v1::Measurement opt = MakeRun(2, 10.0);
  opt.mutable_metadata()->mutable_tool_build()->set_build_mode("opt");
  const ComparisonResult result = Compare({"debug", "opt"}, {debug, opt});
  EXPECT_EQ(result.groups.size(), 2u);
  EXPECT_TRUE(absl::StrContains(result.text, "differs: tool build: debug=fastbuild, opt=opt"))
      << result.text;
}

TEST(CompareRunsTest, SingleRunsWithoutChunksHaveNoNoiseEstimateAndNoGate) {
  v1::Measurement slower = MakeRun(2, 15.0);
  (*slower.mutable_metadata()->mutable_configuration())["code"] = "new";
  ComparisonOptions gate;
  gate.fail_on_regression = true;
  ComparisonResult result = Compare({"a", "b"}, {MakeRun(2, 10.0), slower}, gate);
  EXPECT_EQ(Metric(result, "Elapsed Time").groups[1].status, ChangeStatus::kNoNoiseEstimate);
  EXPECT_EQ(result.regressions, 0);
  EXPECT_FALSE(result.failed());
  EXPECT_TRUE(absl::StrContains(result.text, "(+50.0%) ?")) << result.text;
  EXPECT_TRUE(absl::StrContains(result.text, "but no noise estimate (2):")) << result.text;
  EXPECT_FALSE(absl::StrContains(result.text, "(+50.0%) \u25BC")) << result.text;
  // 10 s / 15 s per 1e6 events: 1.50x slower, and the line says there is no noise estimate.
  ASSERT_EQ(result.verdicts.size(), 1u);
  EXPECT_EQ(result.verdicts[0],
            "b ran 1.50x slower than a (elapsed time per event; one run each and no chunk "
            "records: no noise estimate)");
  // The user asks for a plain threshold: it alone decides.
  gate.threshold_given = true;
  result = Compare({"a", "b"}, {MakeRun(2, 10.0), slower}, gate);
  EXPECT_EQ(Metric(result, "Elapsed Time").groups[1].status, ChangeStatus::kRegression);
  EXPECT_EQ(Metric(result, "Event Rate (Elapsed Time)").groups[1].status,
            ChangeStatus::kRegression);
  EXPECT_EQ(result.regressions, 2);
  EXPECT_TRUE(result.failed());
  EXPECT_TRUE(absl::StrContains(result.text, "(+50.0%) \u25BC")) << result.text;
  EXPECT_TRUE(absl::StrContains(result.text, "the threshold alone decides")) << result.text;
}

TEST(CompareRunsTest, MetricsExpectedToFallWithMoreCoresAreNotRegressions) {
  v1::Measurement one = MakeRun(1);
  v1::Measurement two = MakeRun(2);
  one.mutable_metrics()->mutable_cpu()->set_cpu_efficiency_fraction(0.9);
  two.mutable_metrics()->mutable_cpu()->set_cpu_efficiency_fraction(0.5);
  two.mutable_metrics()->mutable_workers()->set_peak_memory_bytes(200 * 1024 * 1024);
  ComparisonResult result = Compare({"one", "two"}, {one, two});
  EXPECT_EQ(Metric(result, "CPU Efficiency").groups[1].status,
            ChangeStatus::kExpectedWithMoreCores);
  EXPECT_EQ(Metric(result, "Peak Memory").groups[1].status, ChangeStatus::kExpectedWithMoreCores);
  EXPECT_EQ(Metric(result, "Elapsed Time").groups[1].status, ChangeStatus::kOk);
  EXPECT_EQ(result.regressions, 0);
  // A study with the largest core count as the baseline: slower on fewer cores, as expected.
  result = Compare({"two", "one"}, {two, one});
  EXPECT_EQ(Metric(result, "Elapsed Time").groups[1].status, ChangeStatus::kExpectedWithFewerCores);
  EXPECT_EQ(Metric(result, "Event Rate (Elapsed Time)").groups[1].status,
            ChangeStatus::kExpectedWithFewerCores);
  EXPECT_EQ(result.regressions, 0);
  // The same drop on the same cores is a regression.
  v1::Measurement same = MakeRun(1);
  same.mutable_metrics()->mutable_cpu()->set_cpu_efficiency_fraction(0.5);
  (*same.mutable_metadata()->mutable_configuration())["code"] = "new";
  ComparisonOptions threshold;
  threshold.threshold_given = true;
  result = Compare({"one", "same"}, {one, same}, threshold);
  EXPECT_EQ(Metric(result, "CPU Efficiency").groups[1].status, ChangeStatus::kRegression);
}

TEST(CompareRunsTest, AmdahlFitRefusedWithTwoCoreCounts) {
  const ComparisonResult result = Compare({"a", "b", "c"}, {MakeRun(1), MakeRun(2), MakeRun(2)});
  EXPECT_FALSE(result.fit.has_value());
  EXPECT_TRUE(absl::StrContains(result.text,
                                "no Amdahl fit: it needs runs on at least 3 distinct core "
                                "counts (two points always fit), have 2 (1,\n    2)\n"))
      << result.text;
  // One core count: no scaling study, no sentence.
  EXPECT_FALSE(absl::StrContains(Compare({"a", "b"}, {MakeRun(2), MakeRun(2)}).text, "Amdahl"));
}

TEST(CompareRunsTest, AmdahlFitRefusedForMixedWorkloads) {
  v1::Measurement bigger = MakeRun(4);
  bigger.mutable_metrics()->mutable_workflow()->set_total_events(2000000);
  const ComparisonResult result = Compare({"a", "b", "c"}, {MakeRun(1), MakeRun(2), bigger});
  EXPECT_FALSE(result.fit.has_value());
  EXPECT_TRUE(absl::StrContains(result.no_fit_reason, "runs a and c measure different workloads"))
      << result.no_fit_reason;
  EXPECT_TRUE(absl::StrContains(result.no_fit_reason, "events=1000000 vs")) << result.no_fit_reason;
}

TEST(CompareRunsTest, AmdahlFitFromThreeCoreCountsMatchesAnIndependentComputation) {
  // Times per event (s) 10e-6, 6.2e-6, 3.9e-6, 4.1e-6, 3.1e-6 on 1, 2, 4, 4, 8 cores (1e6
  // events each). python3, closed-form least squares of y = a + b / n: s = 0.20643431635388723,
  // R^2 = 0.9983381122940004, t1 = 1.0042307692307695e-05 s, speedup at 16 cores
  // 3.9057591623036676; measured speedup at 8 cores t1 / 3.1e-6 = 3.2394540942928047.
  std::vector<v1::Measurement> runs = {MakeRun(1, 10.0), MakeRun(2, 6.2), MakeRun(4, 3.9),
                                       MakeRun(4, 4.1), MakeRun(8, 3.1)};
  // An oversubscribed run (its warning) is left out and named.
  v1::Measurement oversubscribed = MakeRun(16, 9.0);
  oversubscribed.add_warnings()->set_code("oversubscribed");
  runs.push_back(oversubscribed);
  const ComparisonResult result = Compare({"r1", "r2", "r4a", "r4b", "r8", "r16"}, runs);
  ASSERT_TRUE(result.fit.has_value()) << result.no_fit_reason;
  EXPECT_NEAR(result.fit->serial_fraction, 0.20643431635388723, 1e-9);
  EXPECT_NEAR(result.fit->r_squared, 0.9983381122940004, 1e-9);
  EXPECT_EQ(result.fit->excluded, std::vector<std::string>{"r16"});
  EXPECT_TRUE(absl::StrContains(
      result.text,
      "Amdahl's law fit of the time per event vs cores (5 runs on 4 core counts):\n"
      "  serial fraction 0.206 (20.6%), R\u00B2 0.9983, 1-core time per event 10.04 us\n"
      "  predicted speedup at 16 cores: 3.91x\n"))
      << result.text;
  EXPECT_TRUE(absl::StrContains(result.text,
                                "left out as oversubscribed (more threads than "
                                "usable CPUs): r16\n"))
      << result.text;
  EXPECT_TRUE(absl::StrContains(
      result.text, "  8 cores: speedup against the fitted 1-core time: measured 3.24x, Amdahl"))
      << result.text;
  // Against the measured 1-core time: 10 / 6.2 = 1.61, 10 / 4.0 = 2.50, 10 / 3.1 = 3.23,
  // 10 / 9 = 1.11; at 4 cores (s = 0.1414e-6, n = 2; 1 core borrows it) the standard error
  // 2.5 sqrt((0.1414 / 10)^2 / 1 + (0.1414 / 4)^2 / 2) = 0.0718.
  EXPECT_TRUE(
      absl::StrContains(result.text,
                        "Measured speedup against 1 core (time per event, mean \u00B1 standard "
                        "error): 2 cores 1.61x;\n    4 cores 2.50 \u00B1 0.07x; 8 cores 3.23x; "
                        "16 cores (oversubscribed) 1.11x\n"))
      << result.text;
  ASSERT_EQ(result.speedups.size(), 5u);
  EXPECT_EQ(result.speedups[0].speedup.value, 1.0);  // the reference itself
  EXPECT_FALSE(result.speedups[0].speedup.standard_error.has_value());
  EXPECT_NEAR(*result.speedups[2].speedup.standard_error, 0.0718, 1e-4);
}

TEST(RunOversubscribedTest, WarningOrMoreThreadsThanUsableCpus) {
  v1::Measurement run = MakeRun(4);
  EXPECT_FALSE(RunOversubscribed(run));
  run.mutable_metadata()->mutable_host_facts()->set_usable_cpus(2);
  EXPECT_TRUE(RunOversubscribed(run));
  run.mutable_metadata()->mutable_host_facts()->set_usable_cpus(8);
  EXPECT_FALSE(RunOversubscribed(run));
}

TEST(CompareRunsTest, CsvHasOneRowPerMetricAndConfiguration) {
  ComparisonOptions options;
  options.format = ComparisonFormat::kCsv;
  options.threshold_given = true;
  v1::Measurement slower = MakeRun(2, 15.0);
  (*slower.mutable_metadata()->mutable_configuration())["code"] = "new,\"x\"";
  const ComparisonResult result = Compare({"a", "b"}, {MakeRun(2, 10.0), slower}, options);
  const std::vector<std::string> lines = absl::StrSplit(result.text, '\n');
  EXPECT_EQ(lines[0], "metric,unit,configuration,runs,n,mean,stddev,change_percent,status");
  EXPECT_TRUE(absl::StrContains(result.text, "Elapsed Time,s,baseline,a,1,10,,,baseline\n"))
      << result.text;
  EXPECT_TRUE(absl::StrContains(result.text, "Elapsed Time,s,2,b,1,15,,50,regression\n"))
      << result.text;
  EXPECT_EQ(lines.size(), 1 + 2 * result.metrics.size() + 1);  // header, rows, final ""
}

TEST(CompareRunsTest, JsonAndMarkdown) {
  v1::Measurement slower = MakeRun(2, 15.0);
  (*slower.mutable_metadata()->mutable_configuration())["code"] = "new";
  ComparisonOptions options;
  options.format = ComparisonFormat::kJson;
  options.threshold_given = true;
  const std::string json = Compare({"a", "b"}, {MakeRun(2, 10.0), slower}, options).text;
  EXPECT_TRUE(absl::StrContains(json, "\"runs\": [\"a\", \"b\"],")) << json;
  EXPECT_TRUE(absl::StrContains(json,
                                "{\"key\": \"code\", \"differs\": true, \"values\": "
                                "[\"\", \"new\"]}"))
      << json;
  EXPECT_TRUE(absl::StrContains(json,
                                "{\"metric\": \"Elapsed Time\", \"unit\": \"s\", "
                                "\"better\": \"lower\", \"expected_with_more_cores\": false, "
                                "\"expected_with_fewer_cores\": true"))
      << json;
  EXPECT_TRUE(absl::StrContains(json,
                                "{\"n\": 1, \"mean\": 15, \"stddev\": null, "
                                "\"change_percent\": 50, \"status\": \"regression\", "
                                "\"standard_error\": null, \"p_value\": null}"))
      << json;
  EXPECT_TRUE(absl::StrContains(json, "\"regressions\": 2,")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"amdahl_fit\": null,")) << json;
  EXPECT_EQ(json.back(), '\n');
  options.format = ComparisonFormat::kMarkdown;
  const std::string markdown = Compare({"a", "b|c"}, {MakeRun(2, 10.0), slower}, options).text;
  EXPECT_TRUE(absl::StrContains(markdown, "## Configuration\n")) << markdown;
  EXPECT_TRUE(absl::StrContains(markdown, "- **code** (differs): a=N/A, b\\|c=new\n")) << markdown;
  EXPECT_TRUE(absl::StrContains(markdown, "| Metric | Unit | a | b\\|c |\n|---|---|---:|---:|\n"))
      << markdown;
  EXPECT_TRUE(absl::StrContains(markdown, "| Elapsed Time | s | 10 | 15 (+50.0%) \u25BC |"))
      << markdown;
}

TEST(CompareRunsTest, EachRunsWarningsAndFindingsAreShown) {
  v1::Measurement a = MakeRun(2);
  v1::Measurement b = MakeRun(4);
  v1::Warning* warning = b.add_warnings();
  warning->set_code("unoptimized_build");
  warning->set_message("the measured code was built without optimisation");
  a.mutable_metrics()->set_findings_evaluated(true);
  b.mutable_metrics()->set_findings_evaluated(true);
  v1::Finding& finding = *b.mutable_metrics()->add_findings();
  finding.set_code("cpu_starvation");
  finding.set_severity(v1::Finding::SEVERITY_CRITICAL);
  const std::string text = Compare({"A", "B"}, {a, b}).text;
  EXPECT_TRUE(
      absl::StrContains(text, "WARNING (B): the measured code was built without optimisation\n"))
      << text;
  EXPECT_FALSE(absl::StrContains(text, "WARNING (A)")) << text;
  EXPECT_TRUE(absl::StrContains(text, "Findings (A): none\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "Findings (B): cpu_starvation (critical)\n")) << text;
}

TEST(CompareRunsTest, TableColumnsLineUpAndControlCharactersAreReplaced) {
  ComparisonOptions options;
  options.unicode = false;
  v1::Measurement changed = MakeRun(2, 10.5);
  (*changed.mutable_metadata()->mutable_configuration())["code"] = "new";
  const std::string text = Compare({"base", "new\x1B"}, {MakeRun(2, 10.0), changed}, options).text;
  EXPECT_FALSE(absl::StrContains(text, "\x1B"));
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  size_t header = 0;
  while (header < lines.size() && !absl::StartsWith(lines[header], "Metric")) ++header;
  ASSERT_LT(header + 2, lines.size()) << text;
  const size_t first_bar = lines[header].find('|');
  for (size_t i = header; i < lines.size() && !lines[i].empty(); ++i) {
    if (i == header + 1) continue;  // the rule
    EXPECT_EQ(lines[i].find('|'), first_bar) << lines[i];
  }
  EXPECT_TRUE(absl::StrContains(text, "(+5.0%)")) << text;  // not worse than 5%: no marker
  EXPECT_FALSE(absl::StrContains(text, "(+5.0%) !")) << text;
}

TEST(FormatComparisonTest, IsCompareRunsTextOrTheReason) {
  EXPECT_EQ(FormatComparison({"a", "b"}, {MakeRun(1), MakeRun(2)}, {}),
            Compare({"a", "b"}, {MakeRun(1), MakeRun(2)}).text);
  EXPECT_EQ(FormatComparison({"a"}, {MakeRun(1)}, {}), "compare needs at least two runs, got 1\n");
}

}  // namespace
}  // namespace roastcoffea

namespace roastcoffea {
namespace {

// `chunks` chunk records of 1000 events each: chunk i takes base + spread * ((i * 7) % 10) / 10
// CPU-seconds (a fixed, repeatable scatter), and wall time 1.5x its CPU time.
void AddChunks(v1::Measurement* run, int chunks, double base, double spread) {
  for (int i = 0; i < chunks; ++i) {
    v1::ChunkRecord& chunk = *run->add_chunks();
    chunk.set_events(1000);
    const double cpu = base + spread * ((i * 7) % 10) / 10.0;
    chunk.set_cpu_seconds(cpu);
    chunk.set_duration_seconds(1.5 * cpu);
  }
}

TEST(CompareRunsTest, ChunksAreANoiseEstimateOfOneRun) {
  // One run per side, 200 chunks each. Same code: the same per-chunk CPU times, a busier host
  // (elapsed +30%): no gate on the run metrics, and the chunk row is within the noise.
  v1::Measurement base = MakeRun(2, 10.0);
  v1::Measurement busy = MakeRun(2, 13.0);
  AddChunks(&base, 200, 0.010, 0.002);
  AddChunks(&busy, 200, 0.010, 0.002);
  (*busy.mutable_metadata()->mutable_configuration())["code build-id"] = "ab12";
  ComparisonOptions gate;
  gate.fail_on_regression = true;
  ComparisonResult result = Compare({"base", "busy"}, {base, busy}, gate);
  const MetricComparison& chunks = Metric(result, "Chunk CPU Time per Event");
  EXPECT_EQ(chunks.test, "Mann-Whitney U over chunks");
  EXPECT_EQ(chunks.groups[1].status, ChangeStatus::kOk);
  ASSERT_TRUE(chunks.groups[1].p_value.has_value());
  EXPECT_NEAR(*chunks.groups[1].p_value, 1.0, 1e-9);  // identical samples: z = 0
  EXPECT_EQ(Metric(result, "Elapsed Time").groups[1].status, ChangeStatus::kNoNoiseEstimate);
  EXPECT_FALSE(result.failed()) << result.text;
  // Mean over chunks: 10 + 2 * 0.45 = 10.9 us per event in both.
  EXPECT_NEAR(chunks.groups[0].summary.mean, 10.9, 1e-9);
  ASSERT_EQ(result.verdicts.size(), 1u);
  EXPECT_EQ(result.verdicts[0],
            "busy ran 1.00 \u00B1 0.01x faster than base (per-chunk estimate: Chunk CPU Time per "
            "Event, mean \u00B1 standard error over 200 and 200 chunks): within the noise");
  // A real slowdown of every chunk by 20%: the rank test catches it and names itself.
  v1::Measurement slow = MakeRun(2, 12.0);
  AddChunks(&slow, 200, 0.012, 0.0024);
  (*slow.mutable_metadata()->mutable_configuration())["code build-id"] = "cd34";
  result = Compare({"base", "slow"}, {base, slow}, gate);
  EXPECT_EQ(Metric(result, "Chunk CPU Time per Event").groups[1].status, ChangeStatus::kRegression);
  EXPECT_EQ(result.regressions, 1);
  EXPECT_TRUE(result.failed());
  EXPECT_TRUE(absl::StrContains(result.text, "Mann-Whitney")) << result.text;
  EXPECT_TRUE(absl::StrContains(result.verdicts[0], "slow ran 1.20 \u00B1 0.0"))
      << result.verdicts[0];
  EXPECT_TRUE(absl::StrContains(result.verdicts[0], "x slower than base")) << result.verdicts[0];
}

TEST(CompareRunsTest, CodeIdentityMakesConfigurationsNotRepeats) {
  // The same flags, two builds of the analysis (or two labels): two configurations.
  std::vector<v1::Measurement> runs = {MakeRun(2, 10.0), MakeRun(2, 12.0)};
  (*runs[0].mutable_metadata()->mutable_configuration())["code build-id"] = "aaaa";
  (*runs[1].mutable_metadata()->mutable_configuration())["code build-id"] = "bbbb";
  ComparisonOptions gate;
  gate.fail_on_regression = true;
  ComparisonResult result = Compare({"base", "head"}, runs, gate);
  EXPECT_EQ(result.groups.size(), 2u);
  EXPECT_TRUE(absl::StrContains(result.text, "differs: code build-id: base=aaaa, head=bbbb"))
      << result.text;
  (*runs[1].mutable_metadata()->mutable_configuration())["code build-id"] = "aaaa";
  (*runs[1].mutable_metadata()->mutable_configuration())["label"] = "head";
  EXPECT_EQ(Compare({"base", "head"}, runs, gate).groups.size(), 2u);
  // The same build and no label: repeats of known code, so the gate passes, saying why.
  runs[1].mutable_metadata()->mutable_configuration()->erase("label");
  result = Compare({"base", "head"}, runs, gate);
  EXPECT_EQ(result.groups.size(), 1u);
  EXPECT_FALSE(result.failed());
}

TEST(CompareRunsTest, VerdictFromRepeatsHasTheRatioAndItsUncertainty) {
  // Elapsed per event: base 10, 10.2 s; head 5, 5.1 s: ratio 10.1 / 5.05 = 2.00; python3:
  // 2 * sqrt((0.1414/10.1)^2 / 2 + (0.0707/5.05)^2 / 2) = 0.028.
  std::vector<v1::Measurement> runs = {MakeRun(2, 10.0), MakeRun(2, 10.2), MakeRun(2, 5.0),
                                       MakeRun(2, 5.1)};
  ComparisonOptions options;
  options.configuration_of_run = {0, 0, 1, 1};
  const ComparisonResult result = Compare({"a1", "a2", "b1", "b2"}, runs, options);
  ASSERT_EQ(result.verdicts.size(), 1u);
  EXPECT_EQ(result.verdicts[0],
            "b1, b2 (n=2) ran 2.00 \u00B1 0.03x faster than a1, a2 (n=2) (elapsed time per "
            "event, mean of 2 and 2 runs)");
  EXPECT_TRUE(absl::StrContains(result.text, "Verdict: b1, b2 (n=2) ran 2.00")) << result.text;
  // ASCII tables say "+-"; markdown carries the line for a pull-request comment.
  options.unicode = false;
  EXPECT_TRUE(absl::StrContains(Compare({"a1", "a2", "b1", "b2"}, runs, options).text,
                                "ran 2.00 +- 0.03x faster"));
  options.format = ComparisonFormat::kMarkdown;
  EXPECT_TRUE(absl::StrContains(Compare({"a1", "a2", "b1", "b2"}, runs, options).text,
                                "**Verdict:** b1, b2 (n=2) ran 2.00 \u00B1 0.03x faster"));
}

TEST(CompareRunsTest, BytesReadRowsAndDataRateFromRereadingIsNoImprovement) {
  v1::Measurement base = MakeRun(2, 10.0);
  v1::Measurement small_chunks = MakeRun(2, 10.0);
  (*small_chunks.mutable_metadata()->mutable_configuration())["chunk_size"] = "2000";
  base.mutable_metrics()->mutable_workflow()->set_total_bytes_read(100 << 20);
  base.mutable_metrics()->mutable_workflow()->set_data_rate_gbps(0.7);
  small_chunks.mutable_metrics()->mutable_workflow()->set_total_bytes_read(440 << 20);
  small_chunks.mutable_metrics()->mutable_workflow()->set_data_rate_gbps(1.6);
  // No read amplification recorded: bytes read per event decides (4.4x).
  ComparisonResult result = Compare({"cs25000", "cs2000"}, {base, small_chunks});
  EXPECT_NEAR(Metric(result, "Bytes Read").groups[1].summary.mean, 440, 1e-9);
  // 100 MiB / 1e6 events = 104.8576 bytes per event.
  EXPECT_NEAR(Metric(result, "Bytes Read per Event").groups[0].summary.mean, 104.8576, 1e-9);
  EXPECT_EQ(Metric(result, "Data Rate").groups[1].status, ChangeStatus::kFromRereading);
  EXPECT_TRUE(absl::StrContains(result.text, "(+128.6%) ^")) << result.text;
  EXPECT_TRUE(absl::StrContains(result.text, "^ = not an improvement (1):")) << result.text;
  ASSERT_EQ(result.rereading_notes.size(), 1u);
  // 440 MiB / 1e6 events = 461.37 bytes per event.
  EXPECT_EQ(result.rereading_notes[0],
            "cs2000: Data Rate +128.6% while bytes read per event went from 104.9 to 461.4");
  // The read amplification, when known on both sides, decides instead.
  base.mutable_metrics()->mutable_workflow()->set_read_amplification(1.0);
  small_chunks.mutable_metrics()->mutable_workflow()->set_read_amplification(1.02);
  result = Compare({"cs25000", "cs2000"}, {base, small_chunks});
  EXPECT_EQ(Metric(result, "Data Rate").groups[1].status, ChangeStatus::kOk);
  EXPECT_EQ(Metric(result, "Read Amplification (bytes read / file bytes)").groups[1].summary.mean,
            1.02);
  small_chunks.mutable_metrics()->mutable_workflow()->set_read_amplification(4.4);
  result = Compare({"cs25000", "cs2000"}, {base, small_chunks});
  EXPECT_EQ(Metric(result, "Data Rate").groups[1].status, ChangeStatus::kFromRereading);
  EXPECT_TRUE(absl::StrContains(result.text, "read amplification went from 1 to 4.4"))
      << result.text;
}

TEST(CompareRunsTest, TableFitsOneHundredColumns) {
  // Three configurations with long names and spreads: the table is split and the metric names
  // wrap, every line at most 100 columns.
  std::vector<v1::Measurement> runs;
  for (int r = 0; r < 6; ++r) {
    v1::Measurement run = MakeRun(2, 10.0 + 0.37 * r);
    run.mutable_metrics()->mutable_efficiency()->set_core_efficiency_fraction(0.5 + 0.01 * r);
    run.mutable_metrics()->mutable_workflow()->set_summed_chunk_wall_seconds(12 + r);
    AddChunks(&run, 20, 0.01 + 0.001 * r, 0.002);
    runs.push_back(run);
  }
  ComparisonOptions options;
  options.configuration_of_run = {0, 0, 1, 1, 2, 2};
  const ComparisonResult result = Compare({"baseline-run-one", "baseline-run-two", "candidate-a-1",
                                           "candidate-a-2", "candidate-b-1", "candidate-b-2"},
                                          runs, options);
  for (absl::string_view line : absl::StrSplit(result.text, '\n')) {
    size_t columns = 0;  // UTF-8 code points: every character here is one column wide
    for (unsigned char c : line) columns += (c & 0xC0) != 0x80 ? 1 : 0;
    EXPECT_LE(columns, 100u) << line;
  }
  EXPECT_TRUE(absl::StrContains(result.text, "Worker Occupancy")) << result.text;
  EXPECT_TRUE(absl::StrContains(result.text, "candidate-b-1, candidate-b-2 (n=2)")) << result.text;
}

}  // namespace
}  // namespace roastcoffea
