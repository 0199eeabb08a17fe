#include "aggregation/cpu_metrics.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "aggregation/distribution_stats.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

ChunkColumns Columns(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks) {
  BranchCoverageAccumulator branches;
  SectionAccumulator sections;
  absl::StatusOr<ChunkColumns> columns = BuildChunkColumns(chunks, &branches, &sections);
  EXPECT_TRUE(columns.ok()) << columns.status();
  return columns.ok() ? *std::move(columns) : ChunkColumns();
}

v1::FineMetricsSummary Fine(const std::string& activity, double seconds) {
  v1::FineMetricsSummary fine;
  v1::ActivityTotal* total = fine.add_by_task_prefix();
  total->set_context("execute");
  total->set_task_prefix("processor");
  total->set_activity(activity);
  total->set_unit("seconds");
  total->set_value(seconds);
  return fine;
}

v1::WorkerMetrics Threads(double threads, double core_seconds) {
  v1::WorkerMetrics workers;
  workers.set_total_cores(threads);
  workers.set_core_seconds(core_seconds);
  return workers;
}

TEST(CpuMetricsTest, OversubscribedThreadPoolIsCappedAtUsableCpus) {
  // 4 threads on 2 usable CPUs for 10 s, 19 CPU-seconds used: 95 % of 2 cores, not of 4.
  const v1::FineMetricsSummary fine = Fine("thread-cpu", 19);
  const v1::WorkerMetrics workers = Threads(4, 40);
  CpuInputs in;
  in.elapsed_seconds = 10;
  in.fine = &fine;
  in.workers = &workers;
  in.in_process_workers = true;
  in.usable_cpus = 2;
  const v1::CpuMetrics cpu = ComputeCpuMetrics(in);
  EXPECT_DOUBLE_EQ(cpu.cpu_seconds(), 19);
  EXPECT_DOUBLE_EQ(cpu.core_seconds_available(), 20);
  EXPECT_DOUBLE_EQ(cpu.usable_cores(), 2);
  EXPECT_DOUBLE_EQ(cpu.cpu_efficiency_fraction(), 0.95);
  EXPECT_NE(cpu.capacity_source().find("2 usable CPUs"), std::string::npos);
}

TEST(CpuMetricsTest, FewerThreadsThanCpus) {
  const v1::FineMetricsSummary fine = Fine("thread-cpu", 5);
  const v1::WorkerMetrics workers = Threads(1, 10);
  CpuInputs in;
  in.elapsed_seconds = 10;
  in.fine = &fine;
  in.workers = &workers;
  in.in_process_workers = true;
  in.usable_cpus = 8;
  const v1::CpuMetrics cpu = ComputeCpuMetrics(in);
  EXPECT_DOUBLE_EQ(cpu.core_seconds_available(), 10);
  EXPECT_DOUBLE_EQ(cpu.cpu_efficiency_fraction(), 0.5);
}

TEST(CpuMetricsTest, EnginesUseTheirCoreSeconds) {
  const v1::FineMetricsSummary fine = Fine("cpu-time", 30);
  const v1::WorkerMetrics workers = Threads(6, 60);
  v1::WorkflowMetrics workflow;
  workflow.set_total_events(3'000'000);
  CpuInputs in;
  in.elapsed_seconds = 10;
  in.fine = &fine;
  in.workers = &workers;
  in.workflow = &workflow;
  const v1::CpuMetrics cpu = ComputeCpuMetrics(in);
  EXPECT_DOUBLE_EQ(cpu.cpu_seconds(), 30);
  EXPECT_EQ(cpu.cpu_source(), "resource monitor's cpu_time of the tasks");
  EXPECT_DOUBLE_EQ(cpu.core_seconds_available(), 60);
  EXPECT_DOUBLE_EQ(cpu.cpu_efficiency_fraction(), 0.5);
  EXPECT_DOUBLE_EQ(cpu.event_rate_per_cpu_second_khz(), 100);
}

TEST(CpuMetricsTest, NothingMeasuredIsUnknownWithAReason) {
  const v1::FineMetricsSummary fine = Fine("thread-noncpu", 30);
  const v1::WorkerMetrics workers = Threads(6, 60);
  CpuInputs in;
  in.elapsed_seconds = 10;
  in.fine = &fine;
  in.workers = &workers;
  const v1::CpuMetrics cpu = ComputeCpuMetrics(in);
  EXPECT_FALSE(cpu.has_cpu_seconds());
  EXPECT_FALSE(cpu.has_cpu_efficiency_fraction());
  EXPECT_FALSE(cpu.has_event_rate_per_cpu_second_khz());
  EXPECT_TRUE(cpu.has_core_seconds_available());
  EXPECT_FALSE(cpu.unknown_reason().empty());
}

TEST(CpuMetricsTest, ChunkSplitAndChunkCpuFallback) {
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks;
  v1::ChunkRecord* a = chunks.Add();
  a->set_duration_seconds(1.0);
  a->set_cpu_seconds(0.5);
  a->set_run_queue_wait_seconds(0.3);
  v1::ChunkRecord* b = chunks.Add();
  b->set_duration_seconds(2.0);
  b->set_cpu_seconds(1.0);
  b->set_run_queue_wait_seconds(1.5);      // clock skew: blocked clamps at 0
  v1::ChunkRecord* killed = chunks.Add();  // no CPU reading (killed): out of the split
  killed->set_duration_seconds(5.0);
  CpuInputs in;
  in.elapsed_seconds = 2;
  ChunkColumns columns = Columns(chunks);
  in.chunks = &columns;
  v1::CpuMetrics cpu = ComputeCpuMetrics(in);
  EXPECT_DOUBLE_EQ(cpu.chunk_wall_seconds(), 3.0);
  EXPECT_DOUBLE_EQ(cpu.chunk_cpu_seconds(), 1.5);
  EXPECT_DOUBLE_EQ(cpu.chunk_run_queue_wait_seconds(), 1.8);
  EXPECT_DOUBLE_EQ(cpu.chunk_blocked_seconds(), 0.2);
  // No fine metrics: the chunks' CPU stands in, and says so.
  EXPECT_DOUBLE_EQ(cpu.cpu_seconds(), 1.5);
  EXPECT_NE(cpu.cpu_source().find("chunk records"), std::string::npos);
  EXPECT_FALSE(cpu.has_core_seconds_available());

  // A record of the split without a run-queue reading: waiting and blocked are unknown.
  v1::ChunkRecord* c = chunks.Add();
  c->set_duration_seconds(1.0);
  c->set_cpu_seconds(0.25);
  columns = Columns(chunks);
  cpu = ComputeCpuMetrics(in);
  EXPECT_DOUBLE_EQ(cpu.chunk_wall_seconds(), 4.0);
  EXPECT_FALSE(cpu.has_chunk_run_queue_wait_seconds());
  EXPECT_FALSE(cpu.has_chunk_blocked_seconds());
}

TEST(CpuMetricsTest, ChunksWithoutCpuOrWaitLeaveThoseUnknown) {
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks;
  chunks.Add()->set_duration_seconds(1.0);
  const ChunkColumns columns = Columns(chunks);
  CpuInputs in;
  in.chunks = &columns;
  const v1::CpuMetrics cpu = ComputeCpuMetrics(in);
  EXPECT_DOUBLE_EQ(cpu.chunk_wall_seconds(), 1.0);
  EXPECT_FALSE(cpu.has_chunk_cpu_seconds());
  EXPECT_FALSE(cpu.has_chunk_run_queue_wait_seconds());
  EXPECT_FALSE(cpu.has_chunk_blocked_seconds());
  EXPECT_FALSE(cpu.has_cpu_seconds());
}

TEST(CpuMetricsTest, ChunkSplitSumsEqualCompensatedSumsOfTheValues) {
  // The split's one-pass running sums against CompensatedSum over the same values, bit for bit,
  // on records whose values span 12 orders of magnitude (where rounding order shows).
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> exponent(-6, 6);
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks;
  std::vector<double> wall, cpu_seconds, wait, blocked;
  for (int i = 0; i < 20000; ++i) {
    v1::ChunkRecord* chunk = chunks.Add();
    const double duration = std::pow(10.0, exponent(rng));
    chunk->set_duration_seconds(duration);
    chunk->set_run_queue_wait_seconds(duration * 0.1);
    if (i % 7 == 3) continue;  // no CPU measured: left out of the split
    chunk->set_cpu_seconds(duration * 0.6);
    wall.push_back(duration);
    cpu_seconds.push_back(duration * 0.6);
    wait.push_back(duration * 0.1);
    blocked.push_back(std::max(0.0, duration - duration * 0.6 - duration * 0.1));
  }
  const ChunkColumns columns = Columns(chunks);
  CpuInputs in;
  in.chunks = &columns;
  const v1::CpuMetrics cpu = ComputeCpuMetrics(in);
  EXPECT_EQ(cpu.chunk_wall_seconds(), CompensatedSum(wall));
  EXPECT_EQ(cpu.chunk_cpu_seconds(), CompensatedSum(cpu_seconds));
  EXPECT_EQ(cpu.chunk_run_queue_wait_seconds(), CompensatedSum(wait));
  EXPECT_EQ(cpu.chunk_blocked_seconds(), CompensatedSum(blocked));
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
