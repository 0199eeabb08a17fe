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

// A run on `cores` cores of a job that takes 100 s on one core, 10% of it serial.
v1::Measurement MakeRun(double cores, double serial = 0.1) {
  v1::Measurement run;
  const double elapsed = 100.0 * (serial + (1 - serial) / cores);
  v1::AggregatedMetrics& m = *run.mutable_metrics();
  m.mutable_workflow()->set_elapsed_time_seconds(elapsed);
  m.mutable_workflow()->set_total_events(1000000);
  m.mutable_workflow()->set_event_rate_elapsed_khz(1000000 / elapsed / 1000);
  m.mutable_workflow()->set_total_cpu_time_seconds(100.0);
  m.mutable_workers()->set_total_cores(cores);
  m.mutable_workers()->set_peak_memory_bytes(100 * 1024 * 1024);
  m.mutable_efficiency()->set_speedup_factor(100.0 / elapsed);
  return run;
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

TEST(CompareMetricsTest, OnlyMetricsKnownSomewhere) {
  const std::vector<ComparedMetric> metrics = CompareMetrics({MakeRun(1), MakeRun(2)});
  for (const ComparedMetric& metric : metrics) {
    EXPECT_NE(metric.label, "Failed Chunks");  // No chunk records in either run.
    EXPECT_EQ(metric.values.size(), 2u);
  }
  ASSERT_FALSE(metrics.empty());
  EXPECT_EQ(metrics[0].label, "Elapsed Time");
  EXPECT_EQ(metrics[0].better, Better::kLower);
}

TEST(CompareMetricsTest, CpuEfficiencyFirstAndUnknownIsNotZero) {
  v1::Measurement a = MakeRun(2);
  a.mutable_metrics()->mutable_cpu()->set_cpu_efficiency_fraction(0.5);
  a.mutable_metrics()->mutable_cpu()->set_cpu_seconds(50);
  v1::Measurement b = MakeRun(2);
  b.mutable_metrics()->mutable_workflow()->clear_total_events();  // no report in B
  const std::vector<ComparedMetric> metrics = CompareMetrics({a, b});
  ASSERT_FALSE(metrics.empty());
  EXPECT_EQ(metrics[0].label, "CPU Efficiency");
  EXPECT_DOUBLE_EQ(*metrics[0].values[0], 50.0);
  EXPECT_FALSE(metrics[0].values[1].has_value());
  for (const ComparedMetric& metric : metrics) {
    if (metric.label != "Total Events") continue;
    EXPECT_DOUBLE_EQ(*metric.values[0], 1000000);
    EXPECT_FALSE(metric.values[1].has_value());
  }
}

TEST(FormatComparisonTest, EachRunsWarningsAreShown) {
  v1::Measurement a = MakeRun(1);
  v1::Measurement b = MakeRun(2);
  v1::Warning* warning = b.add_warnings();
  warning->set_code("unoptimized_build");
  warning->set_message("the measured code was built without optimisation");
  const std::string text = FormatComparison({"A", "B"}, {a, b}, ComparisonOptions{});
  EXPECT_TRUE(absl::StrContains(
      text, "WARNING (B): the measured code was built without optimisation\n"))
      << text;
  EXPECT_FALSE(absl::StrContains(text, "WARNING (A)")) << text;
}

TEST(FormatComparisonTest, EachRunsFindingsAreNamed) {
  v1::Measurement a = MakeRun(2);
  v1::Measurement b = MakeRun(4);
  a.mutable_metrics()->set_findings_evaluated(true);
  b.mutable_metrics()->set_findings_evaluated(true);
  v1::Finding& finding = *b.mutable_metrics()->add_findings();
  finding.set_code("cpu_starvation");
  finding.set_severity(v1::Finding::SEVERITY_CRITICAL);
  const std::string text = FormatComparison({"A", "B"}, {a, b}, ComparisonOptions{});
  EXPECT_TRUE(absl::StrContains(text, "Findings (A): none\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "Findings (B): cpu_starvation (critical)\n")) << text;
}

TEST(FitAmdahlTest, RecoversTheSerialFraction) {
  const absl::StatusOr<AmdahlFit> fit = FitAmdahl({MakeRun(1), MakeRun(2), MakeRun(4), MakeRun(8)});
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->serial_fraction, 0.1, 1e-9);
  EXPECT_NEAR(fit->single_core_seconds, 100.0, 1e-9);
  EXPECT_EQ(fit->max_cores, 8.0);
  EXPECT_NEAR(fit->predicted_speedup_at_double, 1.0 / (0.1 + 0.9 / 16.0), 1e-9);
}

TEST(FitAmdahlTest, NeedsThreeRunsOnDifferentCores) {
  EXPECT_EQ(FitAmdahl({MakeRun(1), MakeRun(2)}).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(FitAmdahl({MakeRun(2), MakeRun(2), MakeRun(2)}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // Cores from the configuration when untracked.
  std::vector<v1::Measurement> runs = {MakeRun(1), MakeRun(2), MakeRun(4)};
  for (v1::Measurement& run : runs) {
    (*run.mutable_metadata()->mutable_configuration())["threads"] =
        absl::StrCat(run.metrics().workers().total_cores());
    run.mutable_metrics()->clear_workers();
  }
  EXPECT_TRUE(FitAmdahl(runs).ok());
}

TEST(FormatComparisonTest, SideBySideWithChangesAndRegressions) {
  v1::Measurement slower = MakeRun(2);
  // The second run got slower: elapsed +50% (regression), event rate down (regression).
  slower.mutable_metrics()->mutable_workflow()->set_elapsed_time_seconds(
      slower.metrics().workflow().elapsed_time_seconds() * 1.5);
  slower.mutable_metrics()->mutable_workflow()->set_event_rate_elapsed_khz(
      slower.metrics().workflow().event_rate_elapsed_khz() / 1.5);
  ComparisonOptions options;
  options.unicode = false;
  const std::string text = FormatComparison({"base", "new\x1B"}, {MakeRun(2), slower}, options);
  EXPECT_FALSE(absl::StrContains(text, "\x1B"));
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  ASSERT_GT(lines.size(), 4u);
  EXPECT_EQ(lines[0], "Comparison against the baseline (base)");
  EXPECT_TRUE(absl::StartsWith(lines[1], "Metric")) << lines[1];
  EXPECT_TRUE(absl::StrContains(lines[1], "new?")) << lines[1];
  std::string elapsed_line;
  std::string memory_line;
  for (const std::string& line : lines) {
    if (absl::StartsWith(line, "Elapsed Time")) elapsed_line = line;
    if (absl::StartsWith(line, "Peak Memory")) memory_line = line;
  }
  EXPECT_TRUE(absl::StrContains(elapsed_line, "(+50.0%) !")) << text;
  EXPECT_TRUE(absl::StrContains(memory_line, "(+0.0%)")) << text;
  EXPECT_FALSE(absl::StrContains(memory_line, "!")) << text;
  EXPECT_TRUE(absl::StrContains(text, "(-33.3%) !")) << text;
  EXPECT_TRUE(absl::StrContains(text, "! = worse than the baseline by more than 5% (2 regressions)"))
      << text;  // elapsed and event rate
  EXPECT_FALSE(absl::StrContains(text, "Amdahl")) << text;  // Two runs: no fit attempted.
  // Every table line has its column separators at the same place.
  const size_t first_bar = lines[1].find('|');
  for (size_t i = 1; i < lines.size() && !lines[i].empty(); ++i) {
    if (i == 2) continue;  // the rule
    EXPECT_EQ(lines[i].find('|'), first_bar) << lines[i];
  }
}

TEST(FormatComparisonTest, ThreeRunsGiveTheAmdahlFit) {
  const std::string text = FormatComparison({"1", "2", "4"}, {MakeRun(1), MakeRun(2), MakeRun(4)}, {});
  EXPECT_TRUE(absl::StrContains(text, "Amdahl's law fit: serial fraction 0.100 (10.0%), "
                                      "predicted speedup at 8 cores: 4.71x"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "\u2502")) << text;
  const std::string no_fit = FormatComparison({"a", "b", "c"}, {MakeRun(2), MakeRun(2), MakeRun(2)}, {});
  EXPECT_TRUE(absl::StrContains(no_fit, "No Amdahl fit: ")) << no_fit;
}

}  // namespace
}  // namespace roastcoffea
