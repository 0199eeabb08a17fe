#include "export/report_plots.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "export/svg_plot.h"

namespace roastcoffea {
namespace {

double Seconds(int64_t unix_ns) { return static_cast<double>(unix_ns) * 1e-9; }

ChartFrame Frame(std::string title, std::string x_label, std::string y_label,
                 const ReportPlotOptions& options) {
  ChartFrame frame;
  frame.title = std::move(title);
  frame.x_label = std::move(x_label);
  frame.y_label = std::move(y_label);
  frame.max_legend_entries = options.max_legend_entries;
  frame.series_noun = "workers";
  return frame;
}

using Column = google::protobuf::RepeatedField<double>;

bool IsStep(v1::SeriesKind kind) { return kind == v1::SERIES_KIND_STEP; }

// Sample indices of a worker series in time order; samples sharing an instant keep their
// stored order (for a STEP series, the order of its changes).
std::vector<int> TimeOrder(const v1::WorkerSeries& worker) {
  std::vector<int> order(worker.time_unix_ns_size());
  for (int i = 0; i < worker.time_unix_ns_size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return worker.time_unix_ns(a) < worker.time_unix_ns(b);
  });
  return order;
}

// One line per worker of `column` (or of a value derived from the sample index), drawn as its
// kind says (STEP: steps; SAMPLED: lines).
template <typename Value>
LineChart PerWorker(const v1::TrackingData& tracking, ChartFrame frame, Value value,
                    bool (*has)(const v1::WorkerSeries&)) {
  LineChart chart{std::move(frame), true, {}};
  for (const v1::WorkerSeries& worker : tracking.workers()) {
    if (!has(worker)) continue;
    LineSeries series;
    series.name = worker.worker();
    series.step = IsStep(worker.kind());
    for (int i : TimeOrder(worker)) {
      series.x.push_back(Seconds(worker.time_unix_ns(i)));
      series.y.push_back(value(worker, i));
    }
    chart.series.push_back(std::move(series));
  }
  return chart;
}

// Every distinct instant of the workers with `has`, and the finite values of the workers there:
// a SAMPLED worker counts only at its own samples (as the original's mean timelines); a STEP
// worker counts at every instant from its first to its last sample with the value it holds
// there (its last change at or before it). *all_step: every such worker is STEP.
template <typename Value>
std::map<int64_t, std::vector<double>> ValuesByInstant(const v1::TrackingData& tracking,
                                                       Value value,
                                                       bool (*has)(const v1::WorkerSeries&),
                                                       bool* all_step) {
  std::map<int64_t, std::vector<double>> at;
  *all_step = true;
  for (const v1::WorkerSeries& worker : tracking.workers()) {
    if (!has(worker)) continue;
    for (int64_t t : worker.time_unix_ns()) at[t];
  }
  for (const v1::WorkerSeries& worker : tracking.workers()) {
    if (!has(worker)) continue;
    if (!IsStep(worker.kind())) {
      *all_step = false;
      for (int i = 0; i < worker.time_unix_ns_size(); ++i) {
        const double v = value(worker, i);
        if (std::isfinite(v)) at[worker.time_unix_ns(i)].push_back(v);
      }
      continue;
    }
    const std::vector<int> order = TimeOrder(worker);
    size_t k = 0;  // order[k - 1]: the last sample at or before the instant
    for (auto it = at.find(worker.time_unix_ns(order.front()));
         it != at.end() && it->first <= worker.time_unix_ns(order.back()); ++it) {
      while (k < order.size() && worker.time_unix_ns(order[k]) <= it->first) ++k;
      const double v = value(worker, order[k - 1]);
      if (std::isfinite(v)) it->second.push_back(v);
    }
  }
  return at;
}

// Mean and min-max across workers at every distinct timestamp (ValuesByInstant), as the
// original's mean timelines.
template <typename Value>
LineChart MeanBand(const v1::TrackingData& tracking, ChartFrame frame, Value value,
                   bool (*has)(const v1::WorkerSeries&)) {
  LineSeries series;
  series.name = "Mean";
  series.band_name = "Min-Max Range";
  for (const auto& [time, values] : ValuesByInstant(tracking, value, has, &series.step)) {
    if (values.empty()) continue;
    double sum = 0;
    for (double v : values) sum += v;
    series.x.push_back(Seconds(time));
    series.y.push_back(sum / static_cast<double>(values.size()));
    series.band_low.push_back(*std::min_element(values.begin(), values.end()));
    series.band_high.push_back(*std::max_element(values.begin(), values.end()));
  }
  LineChart chart{std::move(frame), true, {}};
  if (!series.x.empty()) chart.series.push_back(std::move(series));
  return chart;
}

bool HasMemoryAndLimit(const v1::WorkerSeries& w) {
  return w.memory_bytes_size() == w.time_unix_ns_size() &&
         w.memory_limit_bytes_size() == w.time_unix_ns_size() && w.time_unix_ns_size() > 0;
}
bool HasCpu(const v1::WorkerSeries& w) {
  return w.cpu_percent_size() == w.time_unix_ns_size() && w.time_unix_ns_size() > 0;
}
bool HasOccupancy(const v1::WorkerSeries& w) {
  return w.occupancy_seconds_size() == w.time_unix_ns_size() && w.time_unix_ns_size() > 0;
}
bool HasExecuting(const v1::WorkerSeries& w) {
  return w.executing_tasks_size() == w.time_unix_ns_size() && w.time_unix_ns_size() > 0;
}
bool HasActive(const v1::WorkerSeries& w) {
  return w.active_tasks_size() == w.time_unix_ns_size() && w.time_unix_ns_size() > 0;
}

double MemoryPercent(const v1::WorkerSeries& w, int i) {
  return w.memory_limit_bytes(i) > 0 ? 100.0 * w.memory_bytes(i) / w.memory_limit_bytes(i)
                                     : std::nan("");
}

void AddIfData(std::vector<ReportPlot>* plots, std::string id, const std::string& title,
               const LineChart& chart) {
  if (chart.series.empty()) return;
  plots->push_back({std::move(id), title, RenderLineChart(chart)});
}

struct ChunkTimes {
  double start, end, bytes;
};

std::vector<ChunkTimes> ChunkTimeline(const v1::Measurement& measurement) {
  std::vector<ChunkTimes> out;
  for (const v1::ChunkRecord& chunk : measurement.chunks()) {
    if (chunk.start_unix_ns() == 0 || chunk.end_unix_ns() < chunk.start_unix_ns()) continue;
    out.push_back({Seconds(chunk.start_unix_ns()), Seconds(chunk.end_unix_ns()),
                   static_cast<double>(chunk.compressed_bytes_read())});
  }
  if (out.empty() && measurement.metrics().has_chunks()) {
    for (const v1::ChunkInfo& info : measurement.metrics().chunks().chunk_info()) {
      out.push_back({Seconds(info.start_unix_ns()), Seconds(info.end_unix_ns()),
                     static_cast<double>(info.bytes_read())});
    }
  }
  return out;
}

// Per task prefix, the "execute" totals of `activity` in `unit`.
std::map<std::string, double> PerTask(const v1::FineMetricsSummary& fine,
                                      const std::string& activity, const std::string& unit) {
  std::map<std::string, double> out;
  for (const v1::ActivityTotal& total : fine.by_task_prefix()) {
    if (total.context() != "execute" || total.activity() != activity || total.unit() != unit) {
      continue;
    }
    out[total.task_prefix()] += total.value();
  }
  return out;
}

}  // namespace

std::vector<ReportPlot> BuildReportPlots(const v1::Measurement& measurement,
                                         const ReportPlotOptions& options) {
  std::vector<ReportPlot> plots;
  const v1::AggregatedMetrics& metrics = measurement.metrics();
  const char* kTime = "Time (UTC)";

  if (measurement.has_tracking()) {
    const v1::TrackingData& tracking = measurement.tracking();
    if (tracking.worker_count_size() > 0 &&
        tracking.worker_count_size() == tracking.worker_count_time_unix_ns_size()) {
      std::vector<std::pair<int64_t, int32_t>> samples;
      for (int i = 0; i < tracking.worker_count_size(); ++i) {
        samples.emplace_back(tracking.worker_count_time_unix_ns(i), tracking.worker_count(i));
      }
      // By time only, stably: STEP samples at one instant are changes in their stored order.
      std::stable_sort(samples.begin(), samples.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      LineSeries series{"Workers", {}, {}, true};
      series.step = IsStep(tracking.worker_count_kind());
      for (const auto& [time, count] : samples) {
        series.x.push_back(Seconds(time));
        series.y.push_back(count);
      }
      LineChart chart{Frame("Worker Count Over Time", kTime, "Number of Workers", options), true,
                      {std::move(series)}};
      AddIfData(&plots, "worker-count", chart.frame.title, chart);
    }
    ChartFrame percent = Frame("Memory Utilization Over Time", kTime, "Memory Utilization (%)", options);
    percent.y_min = 0;
    percent.y_max = 100;
    AddIfData(&plots, "memory-utilization", percent.title,
              MeanBand(tracking, percent, MemoryPercent, HasMemoryAndLimit));
    percent.title = "Memory Utilization Per Worker Over Time";
    AddIfData(&plots, "memory-per-worker", percent.title,
              PerWorker(tracking, percent, MemoryPercent, HasMemoryAndLimit));
    // CPU percent can exceed 100 for multi-threaded workers: clipped, as the original does.
    const auto cpu = [](const v1::WorkerSeries& w, int i) { return std::min(w.cpu_percent(i), 100.0); };
    percent.title = "CPU Utilization Over Time";
    percent.y_label = "CPU Utilization (%)";
    AddIfData(&plots, "cpu-utilization", percent.title, MeanBand(tracking, percent, cpu, HasCpu));
    percent.title = "CPU Utilization Per Worker Over Time";
    AddIfData(&plots, "cpu-per-worker", percent.title, PerWorker(tracking, percent, cpu, HasCpu));
    AddIfData(&plots, "occupancy", "Worker Occupancy Over Time",
              PerWorker(tracking,
                        Frame("Worker Occupancy Over Time", kTime,
                              "Occupancy (seconds of queued work)", options),
                        [](const v1::WorkerSeries& w, int i) { return w.occupancy_seconds(i); },
                        HasOccupancy));
    AddIfData(&plots, "executing-tasks", "Executing Tasks Per Worker Over Time",
              PerWorker(tracking,
                        Frame("Executing Tasks Per Worker Over Time", kTime,
                              "Number of Executing Tasks", options),
                        [](const v1::WorkerSeries& w, int i) { return w.executing_tasks(i); },
                        HasExecuting));
    AddIfData(&plots, "active-tasks", "Worker Activity Over Time",
              PerWorker(tracking,
                        Frame("Worker Activity Over Time", kTime, "Number of Active Tasks", options),
                        [](const v1::WorkerSeries& w, int i) { return w.active_tasks(i); },
                        HasActive));
    // The sum over workers at every instant (STEP workers: of the values they hold).
    bool active_steps = false;
    const auto active = [](const v1::WorkerSeries& w, int i) { return w.active_tasks(i); };
    LineSeries total{"Total Active Tasks"};
    total.fill = true;
    for (const auto& [time, values] : ValuesByInstant(tracking, active, HasActive, &active_steps)) {
      double sum = 0;
      for (double v : values) sum += v;
      total.x.push_back(Seconds(time));
      total.y.push_back(sum);
    }
    total.step = active_steps;
    if (!total.x.empty()) {
      AddIfData(&plots, "total-active-tasks", "Total Active Tasks Over Time",
                LineChart{Frame("Total Active Tasks Over Time", kTime, "Total Active Tasks", options),
                          true, {std::move(total)}});
    }
  }

  // Throughput: 100 samples; each chunk reads uniformly over its duration.
  const std::vector<ChunkTimes> timeline = ChunkTimeline(measurement);
  if (!timeline.empty()) {
    double first = timeline.front().start;
    double last = timeline.front().end;
    for (const ChunkTimes& chunk : timeline) {
      first = std::min(first, chunk.start);
      last = std::max(last, chunk.end);
    }
    LineSeries series{"Data Rate"};
    series.fill = true;
    constexpr int kSamples = 100;
    for (int s = 0; s < kSamples; ++s) {
      const double t = first + (last - first) * s / (kSamples - 1);
      double gbps = 0;
      for (const ChunkTimes& chunk : timeline) {
        if (chunk.end > chunk.start && chunk.start <= t && t <= chunk.end) {
          gbps += chunk.bytes * 8 / 1e9 / (chunk.end - chunk.start);
        }
      }
      series.x.push_back(t);
      series.y.push_back(gbps);
    }
    AddIfData(&plots, "throughput", "Data Throughput Over Time",
              LineChart{Frame("Data Throughput Over Time", kTime, "Data Rate (Gbps, decimal)", options),
                        true, {std::move(series)}});
  }

  std::vector<double> durations;
  std::vector<double> events;
  std::vector<double> event_durations;
  std::vector<double> branches;
  std::vector<double> accessed;
  std::vector<double> accessed_uncompressed;
  bool any_branches = false;
  bool any_accessed = false;
  for (const v1::ChunkRecord& chunk : measurement.chunks()) {
    if (chunk.status() == v1::CHUNK_STATUS_FAILED) continue;
    durations.push_back(chunk.duration_seconds());
    if (chunk.events() > 0) {
      events.push_back(static_cast<double>(chunk.events()));
      event_durations.push_back(chunk.duration_seconds());
    }
    branches.push_back(chunk.accessed_branches_size());
    any_branches = any_branches || chunk.accessed_branches_size() > 0;
    accessed.push_back(static_cast<double>(chunk.accessed_bytes()) / 1e6);
    accessed_uncompressed.push_back(static_cast<double>(chunk.accessed_uncompressed_bytes()) / 1e6);
    any_accessed = any_accessed || chunk.accessed_bytes() > 0;
  }
  if (!durations.empty()) {
    HistogramChart chart{Frame("Chunk Runtime Distribution", "Runtime (seconds)",
                               "Number of Chunks", options),
                         durations};
    chart.value_unit = "s";
    plots.push_back({"runtime-distribution", chart.frame.title, RenderHistogram(chart)});
  }
  if (!events.empty()) {
    ScatterChart chart{Frame("Chunk Runtime vs Number of Events", "Events per Chunk",
                             "Runtime (seconds)", options),
                       events, event_durations};
    plots.push_back({"runtime-vs-events", chart.frame.title, RenderScatter(chart)});
  }
  if (metrics.has_branches() && metrics.branches().compression_ratios_size() > 0) {
    HistogramChart chart{Frame("Compression Ratio Distribution Across Files",
                               "Compression Ratio (compressed/uncompressed)", "Number of Files",
                               options),
                         {metrics.branches().compression_ratios().begin(),
                          metrics.branches().compression_ratios().end()}};
    chart.bins = 20;
    chart.value_decimals = 3;
    plots.push_back({"compression-ratio", chart.frame.title, RenderHistogram(chart)});
  }
  if (metrics.has_branches() && metrics.branches().bytes_read_percent_per_file_size() > 0) {
    HistogramChart chart{Frame("Bytes Read Percentage Distribution", "Bytes Read (%)",
                               "Number of Files", options),
                         {metrics.branches().bytes_read_percent_per_file().begin(),
                          metrics.branches().bytes_read_percent_per_file().end()}};
    chart.bins = 20;
    chart.value_decimals = 1;
    chart.value_unit = "%";
    plots.push_back({"bytes-read-percent", chart.frame.title, RenderHistogram(chart)});
  }
  std::vector<std::string> chunk_names;
  for (size_t i = 0; i < branches.size(); ++i) chunk_names.push_back(absl::StrCat(i));
  if (any_branches) {
    BarChart chart{Frame("Branches Accessed Per Chunk", "Chunk Index", "Branches Accessed", options),
                   chunk_names, {{"Branches", branches}}};
    plots.push_back({"branches-per-chunk", chart.frame.title, RenderBarChart(chart)});
  }
  if (any_accessed) {
    BarChart chart{Frame("Bytes Accessed Per Chunk (Compressed vs Uncompressed)", "Chunk Index",
                         "Bytes (MB, decimal)", options),
                   chunk_names,
                   {{"Compressed (on-disk)", accessed},
                    {"Uncompressed (in-memory)", accessed_uncompressed}}};
    plots.push_back({"bytes-per-chunk", chart.frame.title, RenderBarChart(chart)});
  }

  if (metrics.has_fine()) {
    const v1::FineMetricsSummary& fine = metrics.fine();
    const std::map<std::string, double> cpu = PerTask(fine, "thread-cpu", "seconds");
    const std::map<std::string, double> io = PerTask(fine, "thread-noncpu", "seconds");
    std::set<std::string> prefixes;
    for (const auto& [prefix, value] : cpu) {
      if (value > 0) prefixes.insert(prefix);
    }
    for (const auto& [prefix, value] : io) {
      if (value > 0) prefixes.insert(prefix);
    }
    prefixes.erase("N/A");
    if (!prefixes.empty()) {
      BarChart chart{Frame("CPU vs I/O Time per Task", "Task", "Time (seconds)", options), {}, {}};
      BarGroup cpu_group{"CPU Time", {}};
      BarGroup io_group{"I/O Time", {}};
      for (const std::string& prefix : prefixes) {
        chart.categories.push_back(prefix);
        cpu_group.values.push_back(cpu.count(prefix) ? cpu.at(prefix) : 0);
        io_group.values.push_back(io.count(prefix) ? io.at(prefix) : 0);
      }
      chart.groups = {cpu_group, io_group};
      plots.push_back({"task-cpu-io", chart.frame.title, RenderBarChart(chart)});
    }
    const std::map<std::string, double> disk = PerTask(fine, "disk-read", "bytes");
    BarChart bytes_chart{Frame("Bytes Read per Task", "Task", "Bytes Read (GB, decimal)", options),
                         {}, {{"Disk Read", {}}}};
    for (const auto& [prefix, value] : disk) {
      if (value <= 0) continue;
      bytes_chart.categories.push_back(prefix);
      bytes_chart.groups[0].values.push_back(value / 1e9);
    }
    if (!bytes_chart.categories.empty()) {
      plots.push_back({"task-bytes-read", bytes_chart.frame.title, RenderBarChart(bytes_chart)});
    }
    std::map<std::string, std::pair<double, double>> overhead;
    for (const char* activity : {"compress", "decompress"}) {
      for (const auto& [prefix, value] : PerTask(fine, activity, "seconds")) {
        overhead[prefix].first += value;
      }
    }
    for (const char* activity : {"serialize", "deserialize"}) {
      for (const auto& [prefix, value] : PerTask(fine, activity, "seconds")) {
        overhead[prefix].second += value;
      }
    }
    BarChart overhead_chart{Frame("Compression & Serialization Overhead per Task", "Task",
                                  "Time (seconds)", options),
                            {}, {{"Compression", {}}, {"Serialization", {}}}};
    for (const auto& [prefix, values] : overhead) {
      if (values.first <= 0 && values.second <= 0) continue;
      overhead_chart.categories.push_back(prefix);
      overhead_chart.groups[0].values.push_back(values.first);
      overhead_chart.groups[1].values.push_back(values.second);
    }
    if (!overhead_chart.categories.empty()) {
      plots.push_back({"task-overhead", overhead_chart.frame.title, RenderBarChart(overhead_chart)});
    }
  }

  // Summaries. The original put a percentage and a factor on one axis; here each bar is
  // labelled with its value and unit in the category name.
  {
    BarChart chart{Frame("Efficiency Metrics Summary", "", "Value", options), {}, {{"Value", {}}}};
    chart.value_labels = true;
    const v1::EfficiencyMetrics& efficiency = metrics.efficiency();
    if (efficiency.has_core_efficiency_fraction()) {
      chart.categories.push_back("Core Efficiency (%)");
      chart.groups[0].values.push_back(100 * efficiency.core_efficiency_fraction());
    }
    if (efficiency.has_parallel_efficiency_fraction()) {
      chart.categories.push_back("Parallel Efficiency (%)");
      chart.groups[0].values.push_back(100 * efficiency.parallel_efficiency_fraction());
    }
    chart.categories.push_back("Speedup Factor (x)");
    chart.groups[0].values.push_back(efficiency.speedup_factor());
    plots.push_back({"efficiency-summary", chart.frame.title, RenderBarChart(chart)});
  }
  if (metrics.has_workers()) {
    const v1::WorkerMetrics& workers = metrics.workers();
    BarChart chart{Frame("Resource Utilization Summary", "", "Value", options), {}, {{"Value", {}}}};
    chart.value_labels = true;
    chart.categories.push_back("Avg Workers");
    chart.groups[0].values.push_back(workers.avg_workers());
    if (workers.has_total_cores()) {
      chart.categories.push_back("Total Cores");
      chart.groups[0].values.push_back(workers.total_cores());
    }
    if (workers.peak_memory_bytes() > 0) {
      chart.categories.push_back("Peak Memory (GB)");
      chart.groups[0].values.push_back(workers.peak_memory_bytes() / 1e9);
    }
    plots.push_back({"resource-summary", chart.frame.title, RenderBarChart(chart)});
  }

  // Gantt: one lane per (worker, thread).
  std::map<std::pair<std::string, int64_t>, size_t> lanes;
  for (const v1::ChunkRecord& chunk : measurement.chunks()) {
    if (chunk.start_unix_ns() == 0) continue;
    lanes.emplace(std::make_pair(chunk.worker(), chunk.thread_index()), 0);
  }
  if (!lanes.empty()) {
    GanttChart chart{Frame("Chunks per Worker Thread", kTime, "Worker / thread", options), {}, {}};
    chart.frame.series_noun = "worker threads";
    for (auto& [key, index] : lanes) {
      index = chart.rows.size();
      chart.rows.push_back(absl::StrCat(key.first.empty() ? "worker" : key.first, " #", key.second));
    }
    for (const v1::ChunkRecord& chunk : measurement.chunks()) {
      if (chunk.start_unix_ns() == 0) continue;
      GanttBar bar;
      bar.row = lanes.at({chunk.worker(), chunk.thread_index()});
      bar.start = Seconds(chunk.start_unix_ns());
      bar.end = Seconds(chunk.end_unix_ns());
      bar.failed = chunk.status() == v1::CHUNK_STATUS_FAILED;
      bar.tooltip = absl::StrCat(chunk.dataset(), " ", chunk.file(), " [", chunk.entry_start(), ", ",
                                 chunk.entry_stop(), ") ", chunk.duration_seconds(), " s",
                                 bar.failed ? absl::StrCat(" FAILED: ", chunk.error_text()) : "");
      chart.bars.push_back(std::move(bar));
    }
    plots.push_back({"chunk-gantt", chart.frame.title, RenderGantt(chart)});
  }
  return plots;
}

}  // namespace roastcoffea
