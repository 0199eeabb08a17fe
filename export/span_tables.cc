#include "export/span_tables.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "aggregation/fine_metrics.h"

namespace roastcoffea {
namespace {

constexpr char kCpu[] = "thread-cpu";
constexpr char kOffCpu[] = "thread-noncpu";
constexpr char kRunQueueWait[] = "thread-run-queue-wait";  // a part of thread-noncpu
// A TaskVine / Work Queue category's activities (backends/taskvine/taskvine_backend.cc): its
// tasks' time waiting in the manager's queue, executing on a worker, and the resource monitor's
// CPU time of the tasks, which is a part of their execution (never added to a total).
constexpr char kEngineQueueWait[] = "queue-wait";
constexpr char kEngineExecute[] = "execute";
constexpr char kEngineCpu[] = "cpu-time";

// Seconds of one span or prefix, by what they were.
struct ThreadSeconds {
  double cpu = 0;
  double off_cpu = 0;
  double run_queue_wait = 0;
  bool run_queue_measured = false;
  bool thread_time_measured = false;  // thread-cpu or thread-noncpu reported
  double queue_wait = 0;              // engine categories: in the manager's queue
  double execute = 0;                 // engine categories: executing on a worker
  double engine_cpu = 0;              // engine categories: monitored CPU within execute
  bool engine_cpu_measured = false;
  double other = 0;
  double Total() const { return cpu + off_cpu + queue_wait + execute + other; }
  void Add(const std::string& activity, double value) {
    if (activity == kCpu) {
      cpu += value;
      thread_time_measured = true;
    } else if (activity == kOffCpu) {
      off_cpu += value;
      thread_time_measured = true;
    } else if (activity == kRunQueueWait) {
      run_queue_wait += value;
      run_queue_measured = true;
    } else if (activity == kEngineQueueWait) {
      queue_wait += value;
    } else if (activity == kEngineExecute) {
      execute += value;
    } else if (activity == kEngineCpu) {
      engine_cpu += value;
      engine_cpu_measured = true;
    } else {
      other += value;
    }
  }
};

// Whether the prefixes are a TaskVine / Work Queue run's categories (the engine's own activities,
// no thread accounting): their table has the engine's columns, and CPU only where monitored.
bool EngineCategories(const std::vector<std::pair<std::string, ThreadSeconds>>& prefixes) {
  bool engine = false;
  for (const auto& [prefix, s] : prefixes) {
    if (s.thread_time_measured) return false;
    engine |= s.queue_wait > 0 || s.execute > 0 || s.engine_cpu_measured;
  }
  return engine;
}

struct SpanRow {
  const v1::Span* span;
  int depth;
  ThreadSeconds seconds;
};

double DurationSeconds(const v1::Span& span) {
  return span.end_unix_ns() > span.start_unix_ns()
             ? static_cast<double>(span.end_unix_ns() - span.start_unix_ns()) * 1e-9
             : 0.0;
}

std::string PathOf(const v1::Span& span) {
  return span.name_path_size() > 0 ? absl::StrJoin(span.name_path(), "/") : span.name();
}

std::vector<SpanRow> WorkloadSpans(const v1::Measurement& measurement) {
  std::vector<SpanRow> rows;
  for (const v1::Span& window : measurement.spans()) {
    for (const v1::Span& span : window.workload_spans()) {
      SpanRow row{&span, std::max(0, span.name_path_size() - 1), {}};
      // Cluster totals when the engine gives them, else the per-worker values summed (as
      // aggregation/fine_metrics.h), so no second is counted twice.
      bool any_cluster_total = false;
      for (const v1::FineMetric& metric : span.metrics()) {
        any_cluster_total |= metric.worker().empty();
      }
      // Each second once: the context that holds the thread time (the task stream's
      // intervals are the execute digests' seconds seen another way).
      const std::string only = aggregation_internal::ThreadTimeContext([&](absl::string_view c) {
        for (const v1::FineMetric& metric : span.metrics()) {
          if (metric.unit() == "seconds" && metric.context() == c) return true;
        }
        return false;
      });
      for (const v1::FineMetric& metric : span.metrics()) {
        if (metric.unit() != "seconds" || metric.worker().empty() != any_cluster_total) continue;
        if (!only.empty() && metric.context() != only) continue;
        row.seconds.Add(metric.activity(), metric.value());
      }
      rows.push_back(row);
    }
  }
  return rows;
}

std::vector<std::pair<std::string, ThreadSeconds>> TaskPrefixes(
    const v1::Measurement& measurement) {
  std::map<std::string, ThreadSeconds> by_prefix;
  if (measurement.metrics().has_fine()) {
    // Per prefix, each second once: the context that holds its thread time (Dask's task
    // stream's compute is its execute digests' seconds again).
    std::map<std::string, std::set<std::string>> contexts;
    for (const v1::ActivityTotal& total : measurement.metrics().fine().by_task_prefix()) {
      if (total.unit() == "seconds") contexts[total.task_prefix()].insert(total.context());
    }
    std::map<std::string, std::string> only;
    for (const auto& [prefix, of_prefix] : contexts) {
      only[prefix] =
          aggregation_internal::ThreadTimeContext([&of_prefix = of_prefix](absl::string_view c) {
            return of_prefix.count(std::string(c));
          });
    }
    for (const v1::ActivityTotal& total : measurement.metrics().fine().by_task_prefix()) {
      if (total.unit() != "seconds") continue;
      const std::string& context = only[total.task_prefix()];
      if (!context.empty() && total.context() != context) continue;
      by_prefix[total.task_prefix()].Add(total.activity(), total.value());
    }
  }
  std::vector<std::pair<std::string, ThreadSeconds>> out(by_prefix.begin(), by_prefix.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second.Total() > b.second.Total();
  });
  return out;
}

std::string Seconds(double value) { return FormatDuration(value); }

}  // namespace

std::vector<SummaryTable> BuildSpanTables(const v1::Measurement& measurement) {
  std::vector<SummaryTable> tables;
  const std::vector<SpanRow> spans = WorkloadSpans(measurement);
  if (!spans.empty()) {
    SummaryTable table;
    table.title = "Workload Spans";
    table.header = {"Span", "Duration", "CPU", "Off CPU (not split)", "Total", "Task prefixes"};
    table.right_aligned = {false, true, true, true, true, false};
    bool any_ambiguous = false;
    for (const SpanRow& row : spans) {
      std::set<std::string> ambiguous(row.span->ambiguous_task_prefixes().begin(),
                                      row.span->ambiguous_task_prefixes().end());
      std::set<std::string> prefixes;
      for (const v1::FineMetric& metric : row.span->metrics()) {
        prefixes.insert(ambiguous.count(metric.task_prefix()) > 0
                            ? absl::StrCat(metric.task_prefix(), "*")
                            : metric.task_prefix());
      }
      any_ambiguous |= !ambiguous.empty();
      table.rows.push_back({absl::StrCat(std::string(2 * row.depth, ' '), row.span->name()),
                            Seconds(DurationSeconds(*row.span)), Seconds(row.seconds.cpu),
                            Seconds(row.seconds.off_cpu), Seconds(row.seconds.Total()),
                            absl::StrJoin(prefixes, ", ")});
    }
    if (any_ambiguous) {
      table.rows.push_back({"* also ran in other spans: totals over them", "", "", "", "", ""});
    }
    tables.push_back(std::move(table));
  }
  const std::vector<std::pair<std::string, ThreadSeconds>> prefixes = TaskPrefixes(measurement);
  if (!prefixes.empty()) {
    bool split = false;
    for (const auto& [prefix, seconds] : prefixes) split |= seconds.run_queue_measured;
    const bool engine = EngineCategories(prefixes);
    SummaryTable table;
    table.title = measurement.metadata().backend() == "taskvine" ||
                          measurement.metadata().backend() == "workqueue"
                      ? "Task Categories"
                      : "Task Prefixes";
    if (engine) {
      // No thread accounting: a CPU / off-CPU split of zeros would be a false one.
      table.header = {"Task category", "Queue wait",       "Execution",
                      "of which CPU",  "Transfers, other", "Total"};
    } else if (split) {
      table.header = {"Task prefix", "CPU", "Waiting for a CPU", "Blocked", "Other", "Total"};
    } else {
      table.header = {"Task prefix", "CPU", "Off CPU (not split)", "Other", "Total"};
    }
    table.right_aligned = std::vector<bool>(table.header.size(), true);
    table.right_aligned[0] = false;
    for (size_t i = 0; i < prefixes.size() && i < kMaxTaskPrefixRows; ++i) {
      const auto& [prefix, s] = prefixes[i];
      if (engine) {
        table.rows.push_back({prefix, Seconds(s.queue_wait), Seconds(s.execute),
                              s.engine_cpu_measured ? Seconds(s.engine_cpu) : "N/A",
                              Seconds(s.cpu + s.off_cpu + s.other), Seconds(s.Total())});
      } else if (split) {
        const double waiting = std::min(s.off_cpu, s.run_queue_wait);
        table.rows.push_back({prefix, Seconds(s.cpu), Seconds(waiting),
                              Seconds(std::max(0.0, s.off_cpu - waiting)),
                              Seconds(s.queue_wait + s.execute + s.other), Seconds(s.Total())});
      } else {
        table.rows.push_back({prefix, Seconds(s.cpu), Seconds(s.off_cpu),
                              Seconds(s.queue_wait + s.execute + s.other), Seconds(s.Total())});
      }
    }
    if (prefixes.size() > kMaxTaskPrefixRows) {
      std::vector<std::string> more(table.header.size());
      more[0] = absl::StrCat("(", prefixes.size() - kMaxTaskPrefixRows, " more)");
      table.rows.push_back(std::move(more));
    }
    tables.push_back(std::move(table));
  }
  return tables;
}

std::vector<FlatMetric> SpanFlatMetrics(const v1::Measurement& measurement) {
  std::vector<FlatMetric> out;
  for (const SpanRow& row : WorkloadSpans(measurement)) {
    const std::string key = absl::StrCat("span.", PathOf(*row.span), ".");
    out.push_back({key + "duration_seconds", DurationSeconds(*row.span), "s"});
    out.push_back({key + "cpu_seconds", row.seconds.cpu, "s"});
    out.push_back({key + "off_cpu_seconds", row.seconds.off_cpu, "s"});
    out.push_back({key + "total_seconds", row.seconds.Total(), "s"});
  }
  const std::vector<std::pair<std::string, ThreadSeconds>> prefixes = TaskPrefixes(measurement);
  const bool engine = EngineCategories(prefixes);
  for (const auto& [prefix, s] : prefixes) {
    const std::string key = absl::StrCat("task_prefix.", prefix, ".");
    if (engine) {
      out.push_back({key + "queue_wait_seconds", s.queue_wait, "s"});
      out.push_back({key + "execute_seconds", s.execute, "s"});
      if (s.engine_cpu_measured) out.push_back({key + "cpu_seconds", s.engine_cpu, "s"});
      out.push_back({key + "other_seconds", s.cpu + s.off_cpu + s.other, "s"});
      out.push_back({key + "total_seconds", s.Total(), "s"});
      continue;
    }
    out.push_back({key + "cpu_seconds", s.cpu, "s"});
    out.push_back({key + "off_cpu_seconds", s.off_cpu, "s"});
    if (s.run_queue_measured) {
      out.push_back({key + "run_queue_wait_seconds", std::min(s.off_cpu, s.run_queue_wait), "s"});
    }
    out.push_back({key + "other_seconds", s.queue_wait + s.execute + s.other, "s"});
    out.push_back({key + "total_seconds", s.Total(), "s"});
  }
  return out;
}

}  // namespace roastcoffea
