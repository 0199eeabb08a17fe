#include "export/span_tables.h"

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "export/flat_formats.h"
#include "export/html_report.h"
#include "export/tables.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kStart = 1'765'000'000 * kSecond;

void AddMetric(v1::Span* span, const std::string& prefix, const std::string& activity, double value,
               const std::string& worker = "") {
  v1::FineMetric& metric = *span->add_metrics();
  metric.set_context("execute");
  metric.set_task_prefix(prefix);
  metric.set_activity(activity);
  metric.set_unit("seconds");
  metric.set_value(value);
  metric.set_worker(worker);
}

// The shape the Dask backend reads from a modern scheduler (backends/dask dask_backend_test:
// spans "held", "held/inner" and "long" around tasks `hold` and `nap`).
v1::Measurement WithSpans() {
  v1::Measurement m;
  m.mutable_metadata()->set_backend("dask");
  v1::Span& window = *m.add_spans();
  window.set_name("collect window");
  window.set_kind(v1::SPAN_KIND_COLLECT_WINDOW);
  const auto workload = [&](std::vector<std::string> path, double seconds) {
    v1::Span* span = window.add_workload_spans();
    span->set_kind(v1::SPAN_KIND_WORKLOAD);
    span->set_name(path.back());
    for (const std::string& name : path) span->add_name_path(name);
    span->set_start_unix_ns(kStart);
    span->set_end_unix_ns(kStart + static_cast<int64_t>(seconds * kSecond));
    return span;
  };
  v1::Span* held = workload({"held"}, 2.0);
  AddMetric(held, "hold", "thread-cpu", 0.25);
  AddMetric(held, "hold", "thread-noncpu", 0.5);
  // Per-worker values beside the cluster totals are the same seconds again.
  AddMetric(held, "hold", "thread-cpu", 0.25, "tcp://127.0.0.1:4001");
  v1::Span* inner = workload({"held", "inner"}, 1.5);
  AddMetric(inner, "hold", "thread-cpu", 0.25);
  inner->add_ambiguous_task_prefixes("hold");
  v1::Span* nap = workload({"long"}, 3.0);
  AddMetric(nap, "nap", "thread-noncpu", 2.75);
  v1::FineMetricsSummary& fine = *m.mutable_metrics()->mutable_fine();
  const auto total = [&](const std::string& prefix, const std::string& activity, double value) {
    v1::ActivityTotal& t = *fine.add_by_task_prefix();
    t.set_context("execute");
    t.set_task_prefix(prefix);
    t.set_activity(activity);
    t.set_unit("seconds");
    t.set_value(value);
  };
  total("hold", "thread-cpu", 0.5);
  total("hold", "thread-noncpu", 0.5);
  total("nap", "thread-noncpu", 2.75);
  total("nap", "executor", 0.25);
  return m;
}

TEST(SpanTablesTest, WorkloadSpansAndTaskPrefixesAreTables) {
  const std::vector<SummaryTable> tables = BuildSpanTables(WithSpans());
  ASSERT_EQ(tables.size(), 2u);
  EXPECT_EQ(tables[0].title, "Workload Spans");
  ASSERT_EQ(tables[0].rows.size(), 4u);  // three spans and the '*' note
  EXPECT_EQ(tables[0].rows[0],
            (std::vector<std::string>{"held", "2.00 s", "250 ms", "500 ms", "750 ms", "hold"}));
  EXPECT_EQ(tables[0].rows[1],
            (std::vector<std::string>{"  inner", "1.50 s", "250 ms", "0 s", "250 ms", "hold*"}));
  EXPECT_EQ(tables[0].rows[2][0], "long");
  EXPECT_EQ(tables[0].rows[2][3], "2.75 s");
  EXPECT_EQ(tables[1].title, "Task Prefixes");
  EXPECT_EQ(tables[1].header[2], "Off CPU (not split)");
  ASSERT_EQ(tables[1].rows.size(), 2u);
  // Largest total first.
  EXPECT_EQ(tables[1].rows[0],
            (std::vector<std::string>{"nap", "0 s", "2.75 s", "250 ms", "3.00 s"}));
  EXPECT_EQ(tables[1].rows[1],
            (std::vector<std::string>{"hold", "500 ms", "500 ms", "0 s", "1.00 s"}));
}

TEST(SpanTablesTest, RunQueueSplitGetsItsOwnColumns) {
  v1::Measurement m = WithSpans();
  v1::ActivityTotal& t = *m.mutable_metrics()->mutable_fine()->add_by_task_prefix();
  t.set_context("execute");  // as the threadpool backend gives it
  t.set_task_prefix("hold");
  t.set_activity("thread-run-queue-wait");
  t.set_unit("seconds");
  t.set_value(0.125);
  const std::vector<SummaryTable> tables = BuildSpanTables(m);
  ASSERT_EQ(tables.size(), 2u);
  EXPECT_EQ(tables[1].header, (std::vector<std::string>{"Task prefix", "CPU", "Waiting for a CPU",
                                                        "Blocked", "Other", "Total"}));
  EXPECT_EQ(tables[1].rows[1],
            (std::vector<std::string>{"hold", "500 ms", "125 ms", "375 ms", "0 s", "1.00 s"}));
}

// A TaskVine / Work Queue run's categories have the engine's activities and no thread accounting:
// queue wait and execution as columns, the monitored CPU time as a part of execution (never
// added to the total), "N/A" where the tasks were not monitored, never a CPU split of zeros.
TEST(SpanTablesTest, EngineCategoriesShowQueueWaitExecutionAndMonitoredCpu) {
  v1::Measurement m;
  m.mutable_metadata()->set_backend("taskvine");
  const auto total = [&](const std::string& category, const std::string& activity, double value) {
    v1::ActivityTotal& t = *m.mutable_metrics()->mutable_fine()->add_by_task_prefix();
    t.set_context("taskvine");
    t.set_task_prefix(category);
    t.set_activity(activity);
    t.set_unit(activity == "bytes-in" ? "bytes" : "seconds");
    t.set_value(value);
  };
  total("processing", "queue-wait", 100);
  total("processing", "commit", 1);
  total("processing", "execute", 20);
  total("processing", "retrieve", 2);
  total("processing", "cpu-time", 15);
  total("processing", "bytes-in", 5e6);
  total("merging", "queue-wait", 1);
  total("merging", "execute", 3);
  const std::vector<SummaryTable> tables = BuildSpanTables(m);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].title, "Task Categories");
  EXPECT_EQ(tables[0].header,
            (std::vector<std::string>{"Task category", "Queue wait", "Execution", "of which CPU",
                                      "Transfers, other", "Total"}));
  ASSERT_EQ(tables[0].rows.size(), 2u);
  EXPECT_EQ(tables[0].rows[0], (std::vector<std::string>{"processing", "1m 40s", "20.0 s", "15.0 s",
                                                         "3.00 s", "2m 3s"}));
  EXPECT_EQ(tables[0].rows[1],
            (std::vector<std::string>{"merging", "1.00 s", "3.00 s", "N/A", "0 s", "4.00 s"}));
  std::map<std::string, double> rows;
  for (const FlatMetric& metric : SpanFlatMetrics(m)) rows[metric.key] = *metric.value;
  EXPECT_DOUBLE_EQ(rows.at("task_prefix.processing.queue_wait_seconds"), 100);
  EXPECT_DOUBLE_EQ(rows.at("task_prefix.processing.execute_seconds"), 20);
  EXPECT_DOUBLE_EQ(rows.at("task_prefix.processing.cpu_seconds"), 15);
  EXPECT_DOUBLE_EQ(rows.at("task_prefix.processing.other_seconds"), 3);
  EXPECT_DOUBLE_EQ(rows.at("task_prefix.processing.total_seconds"), 123);
  EXPECT_EQ(rows.count("task_prefix.merging.cpu_seconds"), 0u);  // not monitored: no figure
  EXPECT_EQ(rows.count("task_prefix.merging.off_cpu_seconds"), 0u);
}

// Modern Dask gives a prefix's seconds twice: its execute digests (thread-cpu, thread-noncpu,
// executor, other) and its task stream's compute intervals, the same seconds seen another way:
// each counted once (the execute context, as aggregation/fine_metrics.h's ThreadTimeContext),
// the task stream only where there are no digests (Dask before 2023.4).
TEST(SpanTablesTest, TheTaskStreamsSecondsAreNotCountedAgainBesideTheDigests) {
  v1::Measurement m;
  const auto total = [&](const std::string& context, const std::string& prefix,
                         const std::string& activity, double value) {
    v1::ActivityTotal& t = *m.mutable_metrics()->mutable_fine()->add_by_task_prefix();
    t.set_context(context);
    t.set_task_prefix(prefix);
    t.set_activity(activity);
    t.set_unit("seconds");
    t.set_value(value);
  };
  total("execute", "busy", "thread-cpu", 2.5);
  total("execute", "busy", "thread-noncpu", 3.75);
  total("execute", "busy", "executor", 0.5);
  total("task-stream", "busy", "compute", 6.25);
  total("task-stream", "old", "compute", 4);
  total("task-stream", "old", "transfer", 1);
  const std::vector<SummaryTable> tables = BuildSpanTables(m);
  ASSERT_EQ(tables.size(), 1u);
  ASSERT_EQ(tables[0].rows.size(), 2u);
  EXPECT_EQ(tables[0].rows[0],
            (std::vector<std::string>{"busy", "2.50 s", "3.75 s", "500 ms", "6.75 s"}));
  EXPECT_EQ(tables[0].rows[1], (std::vector<std::string>{"old", "0 s", "0 s", "5.00 s", "5.00 s"}));
  // A span's seconds by the same rule.
  v1::Span& span = *m.add_spans()->add_workload_spans();
  span.set_name("s");
  span.set_start_unix_ns(0);
  span.set_end_unix_ns(10'000'000'000);
  for (const auto& [context, activity, value] :
       std::vector<std::tuple<std::string, std::string, double>>{{"execute", "thread-cpu", 1},
                                                                 {"execute", "thread-noncpu", 2},
                                                                 {"task-stream", "compute", 3}}) {
    v1::FineMetric& metric = *span.add_metrics();
    metric.set_context(context);
    metric.set_task_prefix("busy");
    metric.set_activity(activity);
    metric.set_unit("seconds");
    metric.set_value(value);
  }
  const std::vector<SummaryTable> with_span = BuildSpanTables(m);
  ASSERT_EQ(with_span.size(), 2u);
  EXPECT_EQ(with_span[0].rows[0][4], "3.00 s");  // Total: cpu + off-cpu, not the compute again
}

TEST(SpanTablesTest, NothingWithoutSpansOrPrefixes) {
  EXPECT_TRUE(BuildSpanTables(v1::Measurement()).empty());
  EXPECT_TRUE(SpanFlatMetrics(v1::Measurement()).empty());
}

TEST(SpanTablesTest, FlatRowsHaveStableKeys) {
  std::map<std::string, std::optional<double>> rows;
  for (const FlatMetric& metric : SpanFlatMetrics(WithSpans())) {
    EXPECT_EQ(metric.unit, "s") << metric.key;
    rows[metric.key] = metric.value;
  }
  EXPECT_DOUBLE_EQ(*rows.at("span.held.duration_seconds"), 2.0);
  EXPECT_DOUBLE_EQ(*rows.at("span.held.cpu_seconds"), 0.25);
  EXPECT_DOUBLE_EQ(*rows.at("span.held/inner.total_seconds"), 0.25);
  EXPECT_DOUBLE_EQ(*rows.at("span.long.off_cpu_seconds"), 2.75);
  EXPECT_DOUBLE_EQ(*rows.at("task_prefix.nap.other_seconds"), 0.25);
  EXPECT_DOUBLE_EQ(*rows.at("task_prefix.hold.total_seconds"), 1.0);
  EXPECT_EQ(rows.count("task_prefix.hold.run_queue_wait_seconds"), 0u);
  // And in every flat format.
  const std::string csv = FormatFlatMetrics(WithSpans(), FlatFormat::kCsv);
  EXPECT_TRUE(absl::StrContains(csv, "span.held/inner.cpu_seconds,0.25,s")) << csv;
  const std::string markdown = FormatFlatMetrics(WithSpans(), FlatFormat::kMarkdown);
  EXPECT_TRUE(absl::StrContains(markdown, "#### Workload Spans")) << markdown;
}

TEST(SpanTablesTest, ShowAndTheHtmlReportCarryThem) {
  const std::string text = FormatSummaryTables(WithSpans(), TableOptions{false});
  EXPECT_TRUE(absl::StrContains(text, "Workload Spans")) << text;
  EXPECT_TRUE(absl::StrContains(text, "Task Prefixes")) << text;
  const std::string html = RenderHtmlReport(WithSpans());
  EXPECT_TRUE(absl::StrContains(html, "<h2 id=\"spans\">Spans and task prefixes</h2>"));
  EXPECT_TRUE(absl::StrContains(html, "<li><a href=\"#spans\">"));
  EXPECT_TRUE(absl::StrContains(html, "<caption>Workload Spans</caption>"));
}

}  // namespace
}  // namespace roastcoffea
