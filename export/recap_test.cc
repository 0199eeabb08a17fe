#include "export/recap.h"

#include <string>

#include "absl/strings/match.h"
#include "export/test_measurement.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(RecapTest, HeadlineFiguresAndTheTopFinding) {
  v1::Measurement m = testing_export::RichMeasurement();
  v1::AggregatedMetrics& metrics = *m.mutable_metrics();
  metrics.clear_findings();
  metrics.set_findings_evaluated(true);
  v1::Finding& first = *metrics.add_findings();
  first.set_severity(v1::Finding::SEVERITY_CRITICAL);
  first.set_title("CPU starvation: chunk threads waited for a CPU 40% of their time");
  metrics.add_findings()->set_title("second");
  TableOptions options;
  options.unicode = false;
  const std::string recap = FormatRecap(m, options);
  EXPECT_THAT(recap, StartsWith("Recap: ")) << recap;
  // The summary tables' own cells.
  const std::string tables = FormatSummaryTables(m, options);
  for (const char* label : {"Total Events", "Event Rate (Elapsed Time)", "CPU Efficiency"}) {
    EXPECT_TRUE(absl::StrContains(tables, label)) << label;
  }
  EXPECT_THAT(recap, HasSubstr(" events in "));
  EXPECT_THAT(recap, HasSubstr("CPU efficiency "));
  EXPECT_THAT(recap,
              HasSubstr("Top finding: CRITICAL CPU starvation: chunk threads waited for a CPU 40% "
                        "of their time (1 of 2, all in Findings above)\n"));
}

TEST(RecapTest, NoFindingAndUnknownFindings) {
  v1::Measurement m = testing_export::RichMeasurement();
  m.mutable_metrics()->clear_findings();
  m.mutable_metrics()->set_findings_evaluated(true);
  EXPECT_THAT(FormatRecap(m, TableOptions()), HasSubstr("Findings: none fired\n"));
  m.mutable_metrics()->set_findings_evaluated(false);  // an old measurement: unknown, not none
  EXPECT_FALSE(absl::StrContains(FormatRecap(m, TableOptions()), "Findings"));
  EXPECT_EQ(FormatRecap(v1::Measurement(), TableOptions()).find("Top finding"), std::string::npos);
}

}  // namespace
}  // namespace roastcoffea
