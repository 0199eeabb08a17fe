// ComparedPart keeps everything CompareRuns reads: every format gives the same text on the
// parts as on the whole runs, and the parts hold no chunk records or chunk timeline.
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "export/compare.h"
#include "export/test_measurement.h"
#include "gtest/gtest.h"
#include "schema/chunk_info_rows.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

TEST(ComparedPartTest, CompareRunsGivesTheSameOnThePartsAsOnTheRuns) {
  std::vector<v1::Measurement> runs;
  for (int workers : {1, 2, 3, 4}) {
    v1::Measurement run = testing_export::RichMeasurement(workers);
    (*run.mutable_metadata()->mutable_configuration())["threads"] = std::to_string(workers);
    runs.push_back(run);
  }
  runs.push_back(runs[1]);  // a repeat, for the mean and spread
  runs.back().mutable_metrics()->mutable_workflow()->set_elapsed_time_seconds(
      1.1 * runs[1].metrics().workflow().elapsed_time_seconds());
  ASSERT_GT(runs[0].chunks_size(), 0);
  ASSERT_GT(ChunkInfoSize(runs[0].metrics().chunks()), 0u);
  std::vector<v1::Measurement> parts;
  for (const v1::Measurement& run : runs) parts.push_back(ComparedPart(run));
  // Of each chunk record only what the per-chunk noise estimate reads.
  ASSERT_EQ(parts[0].chunks_size(), runs[0].chunks_size());
  EXPECT_EQ(parts[0].chunks(0).events(), runs[0].chunks(0).events());
  EXPECT_EQ(parts[0].chunks(0).cpu_seconds(), runs[0].chunks(0).cpu_seconds());
  EXPECT_TRUE(parts[0].chunks(0).file().empty());
  EXPECT_EQ(parts[0].chunks(0).sections_size(), 0);
  EXPECT_EQ(ChunkInfoSize(parts[0].metrics().chunks()), 0u);
  EXPECT_FALSE(parts[0].has_tracking());
  EXPECT_EQ(parts[0].metrics().chunks().num_chunks(), runs[0].metrics().chunks().num_chunks());
  const std::vector<std::string> labels = {"a", "b", "c", "d", "b2"};
  for (ComparisonFormat format : {ComparisonFormat::kTable, ComparisonFormat::kCsv,
                                  ComparisonFormat::kJson, ComparisonFormat::kMarkdown}) {
    ComparisonOptions options;
    options.format = format;
    absl::StatusOr<ComparisonResult> whole = CompareRuns(labels, runs, options);
    absl::StatusOr<ComparisonResult> part = CompareRuns(labels, parts, options);
    ASSERT_TRUE(whole.ok()) << whole.status();
    ASSERT_TRUE(part.ok()) << part.status();
    EXPECT_EQ(part->text, whole->text);
    EXPECT_EQ(part->regressions, whole->regressions);
    EXPECT_GT(whole->text.size(), 200u);
  }
}

}  // namespace
}  // namespace roastcoffea
