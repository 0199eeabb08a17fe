#include "export/report_plots.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "aggregation/timeline.h"
#include "aggregation/worker_names.h"
#include "export/report_gantt.h"
#include "export/report_mean_band.h"
#include "export/report_worker_lines.h"
#include "export/svg_plot.h"
#include "export/tables.h"
#include "schema/chunk_info_rows.h"

namespace roastcoffea {
namespace {

constexpr char kTime[] = "Time since start (s)";
constexpr double kMiB = 1024.0 * 1024.0;

struct Context {
  const v1::Measurement& measurement;  // its own chunks are not read: `chunks` stand for them
  const ReportChunks& chunks;
  const ReportPlotOptions& options;
  int64_t origin_unix_ns;
  const ReportWorkerLines* workers = nullptr;  // the per-worker charts' lines
  // One time range for every time axis, so that the plots of the grid line up.
  double time_low = 0;
  double time_high = 0;
};

// From the origin (or the earliest instant, when earlier) to the last instant the
// measurement knows: its elapsed time, a chunk's end or a tracking sample.
void SetTimeRange(Context* context) {
  const v1::Measurement& m = context->measurement;
  const int64_t origin = context->origin_unix_ns;
  double low = 0;
  double high = m.metadata().elapsed_seconds();
  const auto add = [&](int64_t t) {
    const double s = SecondsSince(origin, t);
    low = std::min(low, s);
    high = std::max(high, s);
  };
  for (const TimelineChunks::Chunk& chunk : context->chunks.timeline().chunks()) {
    if (chunk.start_unix_ns == 0) continue;
    add(chunk.start_unix_ns);
    add(chunk.end_unix_ns);
  }
  for (int64_t t : m.tracking().worker_count_time_unix_ns()) add(t);
  for (const v1::WorkerSeries& worker : m.tracking().workers()) {
    for (int64_t t : worker.time_unix_ns()) add(t);
  }
  if (m.metrics().has_chunks()) {
    ForEachChunkInfo(m.metrics().chunks(), [&](const ChunkInfoRow& info) {
      if (info.start_unix_ns == 0) return;
      add(info.start_unix_ns);
      add(info.end_unix_ns);
    });
  }
  context->time_low = low;
  context->time_high = high;
}

// Fills plot->svg or plot->note; leaves both empty when the plot does not apply.
using Builder = void (*)(const Context&, ReportPlot*);

ChartFrame Frame(const ReportPlot& plot, std::string x_label, std::string y_label,
                 const Context& context) {
  ChartFrame frame;
  frame.title = plot.title;
  frame.x_label = std::move(x_label);
  frame.y_label = std::move(y_label);
  // Two plots side by side on a wide page; scaled down (viewBox) on a narrow one.
  frame.width = 680;
  frame.height = 360;
  frame.max_legend_entries = context.options.max_legend_entries;
  frame.series_noun = "workers";
  if (frame.x_label == kTime && context.time_high > context.time_low) {
    frame.x_min = context.time_low;
    frame.x_max = context.time_high;
  }
  return frame;
}

std::string Thousands(int64_t value) { return export_internal::ThousandsText(value); }

std::string Number(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return Thousands(static_cast<int64_t>(value));
  }
  return absl::StrFormat("%.3g", value);
}

bool IsStep(v1::SeriesKind kind) { return kind == v1::SERIES_KIND_STEP; }

bool AllEqual(const std::vector<double>& values) {
  for (double v : values) {
    if (v != values.front()) return false;
  }
  return true;
}

// Per-worker lines up to the legend's size; above it the mean and min-max band, or the sum
// over workers for counts (183 workers running 0 or 1 task read best as the number of tasks
// running): export/report_worker_lines.h. Constant data becomes a sentence.
void WorkerChart(const Context& context, ReportPlot* plot, WorkerFigure figure,
                 const std::string& y_label, const std::string& what, const std::string& unit) {
  const WorkerLines& lines = context.workers->lines(figure);
  if (lines.series == 0) return;
  if (lines.constant) {
    plot->note = absl::StrCat(what, ": ", Number(lines.constant_value), unit,
                              " for every worker at every sample (", lines.series,
                              lines.series == 1 ? " series)." : " series).");
    return;
  }
  LineChart chart{Frame(*plot, kTime, y_label, context), false, lines.lines};
  if (lines.band) {
    plot->note = figure == WorkerFigure::kExecuting || figure == WorkerFigure::kActive
                     ? absl::StrCat("The sum over ", lines.series, " workers.")
                     : absl::StrCat("Mean and range across ", lines.series, " workers.");
    absl::StrAppend(&plot->note, lines.note.empty() ? "" : " ", lines.note);
  }
  plot->svg = RenderLineChart(chart);
}

void WorkerCount(const Context& context, ReportPlot* plot) {
  const v1::TrackingData& tracking = context.measurement.tracking();
  if (tracking.worker_count_size() == 0 ||
      tracking.worker_count_size() != tracking.worker_count_time_unix_ns_size()) {
    return;
  }
  std::vector<std::pair<int64_t, int32_t>> samples;
  for (int i = 0; i < tracking.worker_count_size(); ++i) {
    samples.emplace_back(tracking.worker_count_time_unix_ns(i), tracking.worker_count(i));
  }
  // By time only, stably: STEP samples at one instant are changes in their stored order.
  std::stable_sort(samples.begin(), samples.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  LineSeries series{"Workers"};
  series.step = IsStep(tracking.worker_count_kind());
  for (const auto& [time, count] : samples) {
    series.x.push_back(SecondsSince(context.origin_unix_ns, time));
    series.y.push_back(count);
  }
  if (AllEqual(series.y)) {
    plot->note = absl::StrCat(Number(series.y.front()), " workers throughout the run.");
    return;
  }
  plot->svg = RenderLineChart(
      LineChart{Frame(*plot, kTime, "Number of Workers", context), false, {std::move(series)}});
}

void Memory(const Context& context, ReportPlot* plot) {
  const WorkerLines& lines = context.workers->lines(WorkerFigure::kMemory);
  if (lines.series == 0) return;
  const double peak = lines.peak, x_low = lines.x_low, x_high = lines.x_high;
  // The limits the workers report (their last, > 0), drawn when they are on the plot's scale.
  const std::set<double>& limits = context.workers->memory_limits_mib();
  LineChart chart{Frame(*plot, kTime, "Resident Memory (MiB)", context), false, lines.lines};
  if (lines.band) {
    plot->note = absl::StrCat("Mean and range across ", lines.series, " workers.");
    absl::StrAppend(&plot->note, lines.note.empty() ? "" : " ", lines.note);
  }
  if (!limits.empty()) {
    const double limit = *limits.rbegin();
    if (limit <= 4 * peak && limits.size() <= 3) {
      for (double l : limits) {
        LineSeries line;
        line.name = absl::StrCat("Limit ", FormatBytes(l * kMiB));
        line.dashed = true;
        line.x = {x_low, x_high};
        line.y = {l, l};
        chart.series.push_back(std::move(line));
      }
    } else {
      absl::StrAppend(&plot->note, plot->note.empty() ? "" : " ", "Memory limit ",
                      FormatBytes(limit * kMiB),
                      limits.size() > 1 ? " (the largest of the workers')" : " per worker",
                      absl::StrFormat(", %.0fx the peak of ", limit / std::max(peak, 1e-9)),
                      FormatBytes(peak * kMiB), ": not drawn, it would flatten the curves.");
    }
  }
  plot->svg = RenderLineChart(chart);
}

void CpuPlot(const Context& context, ReportPlot* plot) {
  WorkerChart(context, plot, WorkerFigure::kCpu, "CPU Utilization (% of one core)",
              "CPU utilization", " %");
}
void OccupancyPlot(const Context& context, ReportPlot* plot) {
  WorkerChart(context, plot, WorkerFigure::kOccupancy, "Occupancy (seconds of queued work)",
              "Occupancy", " s");
}
void ExecutingPlot(const Context& context, ReportPlot* plot) {
  WorkerChart(context, plot, WorkerFigure::kExecuting, "Number of Executing Tasks",
              "Executing tasks", "");
}
void ActivePlot(const Context& context, ReportPlot* plot) {
  if (!context.workers->any_active()) return;
  if (context.workers->active_equals_executing()) {
    plot->note = "No task waited on a worker: active tasks equal executing tasks at every sample.";
    return;
  }
  WorkerChart(context, plot, WorkerFigure::kActive, "Number of Active Tasks", "Active tasks", "");
}

void ChunkGantt(const Context& context, ReportPlot* plot) {
  // Lanes name themselves: no y label to collide with them.
  export_internal::BuildChunkGantt(context.chunks, context.origin_unix_ns,
                                   Frame(*plot, kTime, "", context), plot);
}

// A quarter of the chunk count, within [10, 200].
int ChunkTimeBins(const Context& context) {
  return static_cast<int>(std::clamp<size_t>(context.chunks.size() / 4, 10, 200));
}

void RunningChunks(const Context& context, ReportPlot* plot) {
  StepTimeline running = RunningChunksTimeline(context.chunks.timeline(), context.origin_unix_ns);
  if (running.value.empty()) return;
  // Thousands of starts and ends read as a barcode: a time-weighted mean per bin instead.
  const int bins = ChunkTimeBins(context);
  if (running.value.size() > 400) {
    running = BinnedMean(running, bins);
    plot->note = absl::StrCat("Time-weighted mean in ", bins, " time bins.");
  }
  LineSeries series{"Chunks running"};
  series.step = true;
  series.fill = true;
  series.x = running.time_seconds;
  series.y = running.value;
  plot->svg = RenderLineChart(
      LineChart{Frame(*plot, kTime, "Chunks Running", context), false, {std::move(series)}});
}

void Throughput(const Context& context, ReportPlot* plot) {
  const int bins = ChunkTimeBins(context);
  const StepTimeline rate = ReadRateTimeline(context.measurement, context.chunks.timeline(),
                                             context.origin_unix_ns, bins);
  if (rate.value.empty()) return;
  LineSeries series{"Data Rate"};
  series.step = true;
  series.fill = true;
  series.x = rate.time_seconds;
  for (double bytes_per_second : rate.value) series.y.push_back(bytes_per_second / 1e6);
  plot->svg = RenderLineChart(
      LineChart{Frame(*plot, kTime, "Data Rate (MB/s, compressed bytes read)", context),
                false,
                {std::move(series)}});
  plot->note = absl::StrCat(
      "Bytes read by the chunks (their records), each spread evenly over "
      "its run time, in ",
      bins, " time bins.");
}

// Calls `visit(i)` for each chunk that did not fail, in the records' order.
template <typename Visit>
void ForEachSucceeded(const ReportChunks& chunks, Visit visit) {
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (!chunks.failed(i)) visit(i);
  }
}

// A histogram, or a sentence when every value is the same.
void Histogram(const Context& context, ReportPlot* plot, std::vector<double> values,
               const std::string& x_label, const std::string& y_label, const std::string& what,
               const std::string& unit, int bins, int decimals, bool log_x_when_wide = false) {
  if (values.empty()) return;
  if (AllEqual(values)) {
    plot->note = absl::StrCat(what, ": ", absl::StrFormat("%.*f", decimals, values.front()), unit,
                              " for all ", Thousands(static_cast<int64_t>(values.size())), ".");
    return;
  }
  HistogramChart chart{Frame(*plot, x_label, y_label, context), std::move(values)};
  chart.bins = bins;
  chart.value_decimals = decimals;
  chart.value_unit = unit;
  chart.log_x_when_wide = log_x_when_wide;
  plot->svg = RenderHistogram(chart);
}

void RuntimeDistribution(const Context& context, ReportPlot* plot) {
  std::vector<double> durations;
  const ReportChunks& chunks = context.chunks;
  ForEachSucceeded(chunks, [&](size_t i) { durations.push_back(chunks.duration_seconds(i)); });
  Histogram(context, plot, std::move(durations), "Runtime (seconds)", "Number of Chunks",
            "Chunk runtime", " s", 30, 3, /*log_x_when_wide=*/true);
}

void RuntimeVsEvents(const Context& context, ReportPlot* plot) {
  std::vector<double> events;
  std::vector<double> durations;
  const ReportChunks& chunks = context.chunks;
  ForEachSucceeded(chunks, [&](size_t i) {
    if (chunks.events(i) <= 0) return;
    events.push_back(static_cast<double>(chunks.events(i)));
    durations.push_back(chunks.duration_seconds(i));
  });
  if (events.empty()) return;
  if (AllEqual(events)) {
    plot->note = absl::StrCat("Every chunk has ", Number(events.front()),
                              " events: runtime against events has no spread to show "
                              "(see Chunk Runtime Distribution).");
    return;
  }
  // A few distinct sizes (the last chunk of each file is shorter) make vertical stripes and a
  // meaningless trend: the median runtime of each size says it better.
  std::map<double, std::vector<double>> by_events;
  for (size_t i = 0; i < events.size(); ++i) by_events[events[i]].push_back(durations[i]);
  if (by_events.size() <= 4) {
    std::vector<std::string> parts;
    for (auto& [count, runtimes] : by_events) {
      std::sort(runtimes.begin(), runtimes.end());
      const size_t n = runtimes.size();
      const double median =
          n % 2 == 1 ? runtimes[n / 2] : (runtimes[n / 2 - 1] + runtimes[n / 2]) / 2;
      parts.push_back(absl::StrCat(Thousands(static_cast<int64_t>(runtimes.size())),
                                   runtimes.size() == 1 ? " chunk of " : " chunks of ",
                                   Number(count), " events: median ", FormatDuration(median)));
    }
    plot->note =
        absl::StrCat("Only ", by_events.size(), " chunk sizes: ", absl::StrJoin(parts, "; "), ".");
    return;
  }
  ScatterChart chart{Frame(*plot, "Events per Chunk", "Runtime (seconds)", context), {}, {}};
  const size_t step = (events.size() + kMaxScatterPoints - 1) / kMaxScatterPoints;
  for (size_t i = 0; i < events.size(); i += step) {
    chart.x.push_back(events[i]);
    chart.y.push_back(durations[i]);
  }
  if (step > 1) {
    plot->note = absl::StrCat("One chunk in ", step, " drawn (of ",
                              Thousands(static_cast<int64_t>(events.size())), ").");
  }
  plot->svg = RenderScatter(chart);
}

void BytesPerDataset(const Context& context, ReportPlot* plot) {
  // Summed per interned dataset, each in the records' order, then put in name order.
  const ReportChunks& chunks = context.chunks;
  std::vector<std::pair<double, double>> by_id(chunks.timeline().dataset_names().size());
  std::vector<bool> seen(by_id.size(), false);
  bool any = false;
  bool any_uncompressed = false;
  ForEachSucceeded(chunks, [&](size_t i) {
    const uint32_t id = chunks.timeline().chunks()[i].dataset;
    seen[id] = true;
    by_id[id].first += static_cast<double>(chunks.compressed_bytes_read(i)) / kMiB;
    by_id[id].second += static_cast<double>(chunks.uncompressed_bytes_read(i)) / kMiB;
    any = any || chunks.compressed_bytes_read(i) > 0;
    any_uncompressed = any_uncompressed || chunks.uncompressed_bytes_read(i) > 0;
  });
  if (!any) return;
  std::map<std::string, std::pair<double, double>> by_dataset;
  for (size_t id = 0; id < by_id.size(); ++id) {
    if (seen[id]) by_dataset[chunks.timeline().dataset_names()[id]] = by_id[id];
  }
  BarChart chart{Frame(*plot, "Dataset", "Bytes Read (MiB)", context), {}, {}};
  chart.value_labels = true;
  chart.groups.push_back({"Compressed (on disk)", {}});
  if (any_uncompressed) chart.groups.push_back({"Uncompressed", {}});
  for (const auto& [dataset, bytes] : by_dataset) {
    chart.categories.push_back(dataset.empty() ? "(no dataset)" : dataset);
    chart.groups[0].values.push_back(bytes.first);
    if (any_uncompressed) chart.groups[1].values.push_back(bytes.second);
  }
  plot->svg = RenderBarChart(chart);
  plot->note = "From the chunk records of successful chunks.";
}

void BranchesPerChunk(const Context& context, ReportPlot* plot) {
  std::vector<double> branches;
  bool any = false;
  const ReportChunks& chunks = context.chunks;
  ForEachSucceeded(chunks, [&](size_t i) {
    branches.push_back(chunks.accessed_branches(i));
    any = any || chunks.accessed_branches(i) > 0;
  });
  if (!any) return;
  Histogram(context, plot, std::move(branches), "Branches Accessed", "Number of Chunks",
            "Branches accessed per chunk", "", 20, 1);
}

void BytesAccessedPerChunk(const Context& context, ReportPlot* plot) {
  std::vector<double> accessed;
  bool any = false;
  const ReportChunks& chunks = context.chunks;
  ForEachSucceeded(chunks, [&](size_t i) {
    accessed.push_back(static_cast<double>(chunks.accessed_bytes(i)) / kMiB);
    any = any || chunks.accessed_bytes(i) > 0;
  });
  if (!any) return;
  Histogram(context, plot, std::move(accessed), "Bytes Accessed (MiB, compressed)",
            "Number of Chunks", "Bytes accessed per chunk", " MiB", 30, 2);
}

void CompressionRatio(const Context& context, ReportPlot* plot) {
  const v1::AggregatedMetrics& metrics = context.measurement.metrics();
  if (!metrics.has_branches() || metrics.branches().compression_ratios_size() == 0) return;
  Histogram(context, plot,
            {metrics.branches().compression_ratios().begin(),
             metrics.branches().compression_ratios().end()},
            "Compression Ratio (compressed/uncompressed)", "Number of Files", "Compression ratio",
            "", 20, 3);
}

void BytesReadPercent(const Context& context, ReportPlot* plot) {
  const v1::AggregatedMetrics& metrics = context.measurement.metrics();
  if (!metrics.has_branches() || metrics.branches().bytes_read_percent_per_file_size() == 0) {
    return;
  }
  Histogram(context, plot,
            {metrics.branches().bytes_read_percent_per_file().begin(),
             metrics.branches().bytes_read_percent_per_file().end()},
            "Bytes Read (% of the file)", "Number of Files", "Bytes read", " %", 20, 1);
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

// Thread time per task prefix: CPU, and off CPU split into waiting for a CPU (run queue) and
// blocked where the engine measured the run queue (the thread pool); otherwise "off CPU (not
// split)", since Dask's thread-noncpu holds run-queue, GIL and lock waits as well as I/O.
void TaskCpuIo(const Context& context, ReportPlot* plot) {
  if (!context.measurement.metrics().has_fine()) return;
  const v1::FineMetricsSummary& fine = context.measurement.metrics().fine();
  const std::map<std::string, double> cpu = PerTask(fine, "thread-cpu", "seconds");
  const std::map<std::string, double> off_cpu = PerTask(fine, "thread-noncpu", "seconds");
  const std::map<std::string, double> run_queue = PerTask(fine, "thread-run-queue-wait", "seconds");
  std::set<std::string> prefixes;
  for (const auto& [prefix, value] : cpu) {
    if (value > 0) prefixes.insert(prefix);
  }
  for (const auto& [prefix, value] : off_cpu) {
    if (value > 0) prefixes.insert(prefix);
  }
  prefixes.erase("N/A");
  if (prefixes.empty()) return;
  const auto value_of = [](const std::map<std::string, double>& values, const std::string& key) {
    auto it = values.find(key);
    return it != values.end() ? it->second : 0.0;
  };
  BarChart chart{Frame(*plot, "Task", "Time (seconds)", context), {}, {}};
  chart.stacked = true;
  BarGroup cpu_group{"CPU", {}};
  BarGroup run_queue_group{"Waiting for a CPU (run queue)", {}};
  BarGroup blocked_group{"Blocked (I/O, locks, sleep)", {}};
  BarGroup off_cpu_group{"Off CPU (not split)", {}};
  for (const std::string& prefix : prefixes) {
    chart.categories.push_back(prefix);
    cpu_group.values.push_back(value_of(cpu, prefix));
    const double off = value_of(off_cpu, prefix);
    const double waiting = std::min(off, value_of(run_queue, prefix));
    run_queue_group.values.push_back(waiting);
    blocked_group.values.push_back(std::max(0.0, off - waiting));
    off_cpu_group.values.push_back(off);
  }
  if (run_queue.empty()) {
    chart.groups = {cpu_group, off_cpu_group};
  } else {
    chart.groups = {cpu_group, run_queue_group, blocked_group};
  }
  plot->svg = RenderBarChart(chart);
}

void TaskOverhead(const Context& context, ReportPlot* plot) {
  if (!context.measurement.metrics().has_fine()) return;
  const v1::FineMetricsSummary& fine = context.measurement.metrics().fine();
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
  BarChart chart{Frame(*plot, "Task", "Time (seconds)", context),
                 {},
                 {{"Compression", {}}, {"Serialization", {}}}};
  for (const auto& [prefix, values] : overhead) {
    if (values.first <= 0 && values.second <= 0) continue;
    chart.categories.push_back(prefix);
    chart.groups[0].values.push_back(values.first);
    chart.groups[1].values.push_back(values.second);
  }
  if (chart.categories.empty()) return;
  plot->svg = RenderBarChart(chart);
}

struct PlotSpec {
  const char* id;
  const char* title;
  const char* group;
  Builder build;
};

constexpr char kWorkers[] = "Workers over time";
constexpr char kChunkTimes[] = "Chunks over time";
constexpr char kChunks[] = "Chunks";
constexpr char kFiles[] = "Files";
constexpr char kFine[] = "Fine metrics";

constexpr PlotSpec kPlots[] = {
    {"worker-count", "Worker Count Over Time", kWorkers, WorkerCount},
    {"memory", "Memory Over Time", kWorkers, Memory},
    {"cpu", "CPU Utilization Over Time", kWorkers, CpuPlot},
    {"occupancy", "Worker Occupancy Over Time", kWorkers, OccupancyPlot},
    {"executing-tasks", "Executing Tasks Per Worker Over Time", kWorkers, ExecutingPlot},
    {"active-tasks", "Active Tasks (Executing + Queued) Per Worker Over Time", kWorkers,
     ActivePlot},
    {"chunk-gantt", "Chunks per Worker Thread", kChunkTimes, ChunkGantt},
    {"running-chunks", "Chunks Running Over Time", kChunkTimes, RunningChunks},
    {"throughput", "Data Throughput Over Time", kChunkTimes, Throughput},
    {"runtime-distribution", "Chunk Runtime Distribution", kChunks, RuntimeDistribution},
    {"runtime-vs-events", "Chunk Runtime vs Number of Events", kChunks, RuntimeVsEvents},
    {"bytes-per-dataset", "Bytes Read per Dataset", kChunks, BytesPerDataset},
    {"branches-per-chunk", "Branches Accessed Per Chunk", kChunks, BranchesPerChunk},
    {"bytes-accessed-per-chunk", "Bytes Accessed Per Chunk", kChunks, BytesAccessedPerChunk},
    {"compression-ratio", "Compression Ratio Distribution Across Files", kFiles, CompressionRatio},
    {"bytes-read-percent", "Bytes Read Percentage Distribution", kFiles, BytesReadPercent},
    {"task-cpu-io", "CPU and Off-CPU Time per Task", kFine, TaskCpuIo},
    {"task-overhead", "Compression & Serialization Overhead per Task", kFine, TaskOverhead},
};

}  // namespace

std::vector<ReportPlot> BuildReportPlots(const v1::Measurement& measurement,
                                         const ReportPlotOptions& options) {
  return BuildReportPlots(measurement, ReportChunksOf(measurement), options);
}

std::vector<ReportPlot> BuildReportPlots(const v1::Measurement& measurement,
                                         const ReportChunks& chunks,
                                         const ReportPlotOptions& options) {
  Context context{measurement, chunks, options,
                  TimelineOriginUnixNs(measurement, chunks.timeline())};
  std::optional<ReportWorkerLines> own_lines;
  context.workers = options.worker_lines;
  if (context.workers == nullptr) {
    own_lines.emplace(
        ReportWorkerLinesOf(measurement, context.origin_unix_ns, options.max_legend_entries));
    context.workers = &*own_lines;
  }
  SetTimeRange(&context);
  std::vector<ReportPlot> plots;
  for (const PlotSpec& spec : kPlots) {
    ReportPlot plot{spec.id, spec.title, spec.group, {}, {}};
    spec.build(context, &plot);
    if (!plot.svg.empty() || !plot.note.empty()) plots.push_back(std::move(plot));
  }
  return plots;
}

}  // namespace roastcoffea
