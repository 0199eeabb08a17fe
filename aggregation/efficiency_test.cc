#include "aggregation/efficiency.h"

#include <optional>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

v1::WorkflowMetrics Workflow(double elapsed, double cpu, int64_t events = 0) {
  v1::WorkflowMetrics workflow;
  workflow.set_elapsed_time_seconds(elapsed);
  workflow.set_total_cpu_time_seconds(cpu);
  workflow.set_total_events(events);
  return workflow;
}

// docs/reference.md §4 efficiency table, one test per row.
TEST(EfficiencyMetricsTest, HalfEfficient) {
  const v1::EfficiencyMetrics m = ComputeEfficiencyMetrics(Workflow(100, 400), 8.0);
  EXPECT_DOUBLE_EQ(m.core_efficiency_fraction(), 0.5);
}

TEST(EfficiencyMetricsTest, SpeedupFour) {
  EXPECT_DOUBLE_EQ(ComputeEfficiencyMetrics(Workflow(50, 200), 16.0).speedup_factor(), 4.0);
}

TEST(EfficiencyMetricsTest, CoreRate) {
  const v1::EfficiencyMetrics m = ComputeEfficiencyMetrics(Workflow(100, 400, 1'000'000), 8.0);
  EXPECT_DOUBLE_EQ(m.event_rate_core_khz(), 1.25);
}

TEST(EfficiencyMetricsTest, RealisticHighEfficiency) {
  const v1::EfficiencyMetrics m = ComputeEfficiencyMetrics(Workflow(60, 450, 5'000'000), 8.0);
  EXPECT_DOUBLE_EQ(m.core_efficiency_fraction(), 0.9375);
  EXPECT_DOUBLE_EQ(m.speedup_factor(), 7.5);
  EXPECT_NEAR(m.event_rate_core_khz(), 10.4167, 1e-4);
}

TEST(EfficiencyMetricsTest, RealisticLowEfficiency) {
  const v1::EfficiencyMetrics m = ComputeEfficiencyMetrics(Workflow(100, 150), 16.0);
  EXPECT_DOUBLE_EQ(m.core_efficiency_fraction(), 0.09375);
  EXPECT_DOUBLE_EQ(m.speedup_factor(), 1.5);
}

TEST(EfficiencyMetricsTest, NoCoresLeavesCoreMetricsUnsetButKeepsSpeedup) {
  const v1::EfficiencyMetrics m = ComputeEfficiencyMetrics(Workflow(100, 400, 10), std::nullopt);
  EXPECT_FALSE(m.has_core_efficiency_fraction());
  EXPECT_FALSE(m.has_event_rate_core_khz());
  EXPECT_DOUBLE_EQ(m.speedup_factor(), 4.0);
}

TEST(EfficiencyMetricsTest, ZeroElapsedLeavesThemUnknown) {
  const v1::EfficiencyMetrics m = ComputeEfficiencyMetrics(Workflow(0, 123, 10), 8.0);
  EXPECT_FALSE(m.has_core_efficiency_fraction());
  EXPECT_FALSE(m.has_speedup_factor());
  EXPECT_FALSE(m.has_event_rate_core_khz());
}

TEST(EfficiencyMetricsTest, NoSummedChunkTimeOrEventsLeavesThoseUnknown) {
  v1::WorkflowMetrics workflow = Workflow(25, 50, 500'000);
  workflow.clear_total_cpu_time_seconds();
  v1::EfficiencyMetrics m = ComputeEfficiencyMetrics(workflow, 8.0);
  EXPECT_FALSE(m.has_speedup_factor());
  EXPECT_FALSE(m.has_core_efficiency_fraction());
  EXPECT_DOUBLE_EQ(m.event_rate_core_khz(), 2.5);
  workflow.clear_total_events();
  m = ComputeEfficiencyMetrics(workflow, 8.0);
  EXPECT_FALSE(m.has_event_rate_core_khz());
}

TEST(EfficiencyMetricsTest, CoreAggregatorFixture) {
  // docs/reference.md §4: 50 s CPU, 5e5 events, E 25 s, 8 cores -> 0.25, 2.0, 2.5 kHz.
  const v1::EfficiencyMetrics m = ComputeEfficiencyMetrics(Workflow(25, 50, 500'000), 8.0);
  EXPECT_DOUBLE_EQ(m.core_efficiency_fraction(), 0.25);
  EXPECT_DOUBLE_EQ(m.speedup_factor(), 2.0);
  EXPECT_DOUBLE_EQ(m.event_rate_core_khz(), 2.5);
}

v1::FineMetric* AddMetric(v1::Span& span, const char* context, const char* activity,
                          const char* unit, double value) {
  v1::FineMetric* metric = span.add_metrics();
  metric->set_context(context);
  metric->set_activity(activity);
  metric->set_unit(unit);
  metric->set_value(value);
  return metric;
}

v1::WorkerMetrics CoreSeconds(double core_seconds) {
  v1::WorkerMetrics workers;
  workers.set_core_seconds(core_seconds);
  return workers;
}

TEST(TaskExecutionEfficiencyTest, ExecutionCoreSecondsOverTheWorkersCoreSeconds) {
  google::protobuf::RepeatedPtrField<v1::Span> spans;
  v1::Span& span = *spans.Add();
  AddMetric(span, "taskvine-run", "execute-core-seconds", "core-seconds", 120);
  AddMetric(span, "taskvine-run", "lost-task-seconds", "core-seconds", 999);
  AddMetric(span, "taskvine", "execute", "seconds", 999);
  v1::EfficiencyMetrics efficiency;
  AddTaskExecutionEfficiency(spans, CoreSeconds(480), &efficiency);
  EXPECT_DOUBLE_EQ(efficiency.task_execution_core_efficiency_fraction(), 0.25);
  // The other figures are not this function's.
  EXPECT_FALSE(efficiency.has_core_efficiency_fraction());
}

TEST(TaskExecutionEfficiencyTest, AWholeRunFigureInSeveralSpansIsCountedOnce) {
  google::protobuf::RepeatedPtrField<v1::Span> spans;
  AddMetric(*spans.Add(), "taskvine-run", "execute-core-seconds", "core-seconds", 100);
  AddMetric(*spans.Add(), "taskvine-run", "execute-core-seconds", "core-seconds", 100);
  v1::EfficiencyMetrics efficiency;
  AddTaskExecutionEfficiency(spans, CoreSeconds(400), &efficiency);
  EXPECT_DOUBLE_EQ(efficiency.task_execution_core_efficiency_fraction(), 0.25);
}

TEST(TaskExecutionEfficiencyTest, UnknownWithoutTheSumOrTheCoreSeconds) {
  google::protobuf::RepeatedPtrField<v1::Span> spans;
  v1::EfficiencyMetrics efficiency;
  AddTaskExecutionEfficiency(spans, CoreSeconds(400), &efficiency);  // no TaskVine span
  EXPECT_FALSE(efficiency.has_task_execution_core_efficiency_fraction());

  v1::Span& span = *spans.Add();
  AddMetric(span, "taskvine-run", "execute-core-seconds", "core-seconds", 100);
  AddTaskExecutionEfficiency(spans, v1::WorkerMetrics(), &efficiency);  // no tracking
  EXPECT_FALSE(efficiency.has_task_execution_core_efficiency_fraction());
  AddTaskExecutionEfficiency(spans, CoreSeconds(0), &efficiency);  // no capacity
  EXPECT_FALSE(efficiency.has_task_execution_core_efficiency_fraction());
  // A per-worker metric of that name is not the run's sum.
  span.mutable_metrics(0)->set_worker("worker-1");
  AddTaskExecutionEfficiency(spans, CoreSeconds(400), &efficiency);
  EXPECT_FALSE(efficiency.has_task_execution_core_efficiency_fraction());
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
