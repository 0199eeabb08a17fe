#include "aggregation/workflow.h"

#include "gtest/gtest.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

v1::WorkflowReport GoldenReport() {
  // docs/reference.md §4: {bytesread 1e10, entries 1e6, processtime 100, chunks 50}, t 0 -> 50.
  v1::WorkflowReport report;
  report.set_events(1'000'000);
  report.set_compressed_bytes_read(10'000'000'000);
  report.set_process_time_seconds(100);
  report.set_chunks(50);
  return report;
}

v1::WorkflowMetrics Compute(const v1::WorkflowReport& report, double elapsed_seconds) {
  return ComputeWorkflowMetrics(&report, elapsed_seconds);
}

TEST(WorkflowMetricsTest, GoldenReport) {
  const v1::WorkflowMetrics m = Compute(GoldenReport(), 50);
  EXPECT_DOUBLE_EQ(m.elapsed_time_seconds(), 50);
  EXPECT_EQ(m.total_events(), 1'000'000);
  EXPECT_DOUBLE_EQ(m.total_cpu_time_seconds(), 100);
  EXPECT_EQ(m.total_bytes_read(), 10'000'000'000);
  EXPECT_EQ(m.num_chunks(), 50);
  EXPECT_DOUBLE_EQ(m.data_rate_gbps(), 1.6);
  EXPECT_DOUBLE_EQ(m.data_rate_mbytes_per_second(), 200);  // 1e10 / 1e6 / 50
  EXPECT_DOUBLE_EQ(m.event_rate_elapsed_khz(), 20.0);
  EXPECT_DOUBLE_EQ(m.event_rate_cpu_total_khz(), 10.0);
  EXPECT_DOUBLE_EQ(m.avg_cpu_time_per_chunk_seconds(), 2.0);
  EXPECT_DOUBLE_EQ(m.summed_chunk_wall_seconds(), 100);
  EXPECT_FALSE(m.has_total_uncompressed_bytes_read());
  EXPECT_FALSE(m.has_compression_factor());
}

TEST(WorkflowMetricsTest, NoReportLeavesEverythingReportedUnknown) {
  const v1::WorkflowMetrics m = ComputeWorkflowMetrics(nullptr, 50);
  EXPECT_DOUBLE_EQ(m.elapsed_time_seconds(), 50);
  EXPECT_FALSE(m.has_total_events());
  EXPECT_FALSE(m.has_total_bytes_read());
  EXPECT_FALSE(m.has_data_rate_gbps());
  EXPECT_FALSE(m.has_data_rate_mbytes_per_second());
  EXPECT_FALSE(m.has_event_rate_elapsed_khz());
  EXPECT_FALSE(m.has_event_rate_cpu_total_khz());
  EXPECT_FALSE(m.has_summed_chunk_wall_seconds());
  // The original's stand-in (the elapsed time) is not used: it is not CPU and not reported.
  EXPECT_FALSE(m.has_total_cpu_time_seconds());
}

TEST(WorkflowMetricsTest, CoreAggregatorFixtureRates) {
  // docs/reference.md §4 core fixture: 5e9 B, 5e5 events, 50 s CPU, 25 chunks, E 25 s.
  v1::WorkflowReport report;
  report.set_events(500'000);
  report.set_compressed_bytes_read(5'000'000'000);
  report.set_process_time_seconds(50);
  report.set_chunks(25);
  const v1::WorkflowMetrics m = Compute(report, 25);
  EXPECT_DOUBLE_EQ(m.data_rate_gbps(), 1.6);
  EXPECT_DOUBLE_EQ(m.event_rate_elapsed_khz(), 20);
  EXPECT_DOUBLE_EQ(m.event_rate_cpu_total_khz(), 10);
  EXPECT_DOUBLE_EQ(m.avg_cpu_time_per_chunk_seconds(), 2);
}

TEST(WorkflowMetricsTest, ZeroElapsedLeavesElapsedRatesUnknown) {
  const v1::WorkflowMetrics m = Compute(GoldenReport(), 0);
  EXPECT_FALSE(m.has_data_rate_gbps());
  EXPECT_FALSE(m.has_data_rate_mbytes_per_second());
  EXPECT_FALSE(m.has_event_rate_elapsed_khz());
  // The CPU rate only needs CPU time.
  EXPECT_DOUBLE_EQ(m.event_rate_cpu_total_khz(), 10);
}

TEST(WorkflowMetricsTest, ZeroProcessTimeLeavesItsRateUnknown) {
  v1::WorkflowReport report = GoldenReport();
  report.set_process_time_seconds(0);
  const v1::WorkflowMetrics m = Compute(report, 50);
  EXPECT_FALSE(m.has_event_rate_cpu_total_khz());
  EXPECT_DOUBLE_EQ(m.avg_cpu_time_per_chunk_seconds(), 0);
}

TEST(WorkflowMetricsTest, NoChunksGivesZeroAverageCpuTimePerChunk) {
  v1::WorkflowReport report = GoldenReport();
  report.clear_chunks();
  const v1::WorkflowMetrics m = Compute(report, 50);
  EXPECT_EQ(m.num_chunks(), 0);
  EXPECT_DOUBLE_EQ(m.avg_cpu_time_per_chunk_seconds(), 0);
}

TEST(WorkflowMetricsTest, MissingProcessTimeIsUnknownNotElapsed) {
  // Deviation from the original, which takes the elapsed time as total_cpu_time here.
  v1::WorkflowReport report = GoldenReport();
  report.clear_process_time_seconds();
  const v1::WorkflowMetrics m = Compute(report, 40);
  EXPECT_FALSE(m.has_total_cpu_time_seconds());
  EXPECT_FALSE(m.has_summed_chunk_wall_seconds());
  EXPECT_FALSE(m.has_event_rate_cpu_total_khz());
  EXPECT_FALSE(m.has_avg_cpu_time_per_chunk_seconds());
  EXPECT_EQ(m.total_events(), 1'000'000);
}

TEST(WorkflowMetricsTest, MissingBytesKeepsEventsAndProcessTime) {
  // Deviation from the original (which zeroes every total here): only the bytes are unknown.
  v1::WorkflowReport report = GoldenReport();
  report.clear_compressed_bytes_read();
  const v1::WorkflowMetrics m = Compute(report, 50);
  EXPECT_FALSE(m.has_total_bytes_read());
  EXPECT_FALSE(m.has_data_rate_gbps());
  EXPECT_EQ(m.total_events(), 1'000'000);
  EXPECT_DOUBLE_EQ(m.total_cpu_time_seconds(), 100);
  EXPECT_DOUBLE_EQ(m.event_rate_elapsed_khz(), 20);
}

TEST(WorkflowMetricsTest, DatasetsReplaceTheReportTotals) {
  // docs/reference.md §4: TTbar (5e5 entries, 60 s, 6e9 B) + WJets (5e5, 40 s, 4e9) -> 1e6 events,
  // 1e10 B.
  v1::WorkflowReport report;
  report.set_events(1);  // ignored, as the original ignores the report with custom metrics
  report.set_compressed_bytes_read(2);
  report.set_process_time_seconds(3);
  report.set_chunks(10);
  v1::DatasetCounters* ttbar = report.add_datasets();
  ttbar->set_dataset("TTbar");
  ttbar->set_events(500'000);
  ttbar->set_process_time_seconds(60);
  ttbar->set_compressed_bytes_read(6'000'000'000);
  ttbar->set_uncompressed_bytes_read(15'000'000'000);
  v1::DatasetCounters* wjets = report.add_datasets();
  wjets->set_dataset("WJets");
  wjets->set_events(500'000);
  wjets->set_process_time_seconds(40);
  wjets->set_compressed_bytes_read(4'000'000'000);
  wjets->set_uncompressed_bytes_read(10'000'000'000);
  const v1::WorkflowMetrics m = Compute(report, 50);
  EXPECT_EQ(m.total_events(), 1'000'000);
  EXPECT_EQ(m.total_bytes_read(), 10'000'000'000);
  EXPECT_DOUBLE_EQ(m.total_cpu_time_seconds(), 100);
  EXPECT_EQ(m.total_uncompressed_bytes_read(), 25'000'000'000);
  ASSERT_TRUE(m.has_compression_factor());
  EXPECT_DOUBLE_EQ(m.compression_factor(), 2.5);
  EXPECT_EQ(m.num_chunks(), 10);  // the report's count, as the original
  EXPECT_DOUBLE_EQ(m.avg_cpu_time_per_chunk_seconds(), 10);
}

TEST(WorkflowMetricsTest, DatasetsWithoutProcessTimeDoNotFallBackToElapsed) {
  v1::WorkflowReport report;
  report.add_datasets()->set_events(75);
  const v1::WorkflowMetrics m = Compute(report, 50);
  EXPECT_EQ(m.total_events(), 75);
  EXPECT_DOUBLE_EQ(m.total_cpu_time_seconds(), 0);
}

TEST(WorkflowMetricsTest, CompressionFactorNeedsBothByteCounts) {
  v1::WorkflowReport report = GoldenReport();
  report.set_uncompressed_bytes_read(30'000'000'000);
  const v1::WorkflowMetrics both = Compute(report, 50);
  EXPECT_EQ(both.total_uncompressed_bytes_read(), 30'000'000'000);
  ASSERT_TRUE(both.has_compression_factor());
  EXPECT_DOUBLE_EQ(both.compression_factor(), 3.0);

  report.set_compressed_bytes_read(0);
  EXPECT_FALSE(Compute(report, 50).has_compression_factor());
  report.clear_compressed_bytes_read();
  EXPECT_FALSE(Compute(report, 50).has_compression_factor());
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
