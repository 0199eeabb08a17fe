#include "export/report_gantt.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "aggregation/timeline.h"
#include "aggregation/worker_names.h"
#include "export/tables.h"

namespace roastcoffea {
namespace export_internal {

std::string ThousandsText(int64_t value) {
  std::string digits = absl::StrCat(value < 0 ? -value : value);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return value < 0 ? "-" + digits : digits;
}

namespace {

// Each chunk a bar (coloured by dataset, its top-level sections drawn inside, a tooltip).
void DrawEachChunk(const ReportChunks& chunks, const ChunkLanes& lanes, GanttChart* chart) {
  std::map<std::string, size_t> sections;
  for (size_t r = 0; r < lanes.lanes.size(); ++r) {
    for (const LaneChunk& lane_chunk : lanes.lanes[r].chunks) {
      const v1::ChunkRecord* chunk = chunks.record(lane_chunk.record);
      if (chunk == nullptr) continue;  // never: every record in a lane is kept at this size
      GanttBar bar;
      bar.row = r;
      bar.start = lane_chunk.start_seconds;
      bar.end = lane_chunk.end_seconds;
      bar.color = lanes.dataset_index[lane_chunk.record];
      bar.failed = chunk->status() == v1::CHUNK_STATUS_FAILED;
      bar.tooltip =
          absl::StrCat(chunk->dataset(), " ", chunk->file(), " [", chunk->entry_start(), ", ",
                       chunk->entry_stop(), "): ", FormatDuration(chunk->duration_seconds()),
                       bar.failed ? absl::StrCat(" FAILED: ", chunk->error_text()) : "");
      for (const v1::SectionSlice& slice : chunk->slices()) {
        if (slice.depth() != 0) continue;
        const auto [it, added] = sections.emplace(slice.name(), chart->slice_legend.size());
        if (added) chart->slice_legend.push_back(absl::StrCat("section ", slice.name()));
        const double from = bar.start + static_cast<double>(slice.start_offset_ns()) * 1e-9;
        bar.slices.push_back(
            {from, from + static_cast<double>(slice.duration_ns()) * 1e-9, it->second});
      }
      chart->bars.push_back(std::move(bar));
    }
  }
}

// Too many chunks to draw one by one: time bins, runs of equal bins merged; above
// kMaxGanttRows worker threads, each row is a run of consecutive threads (in name order) with
// their mean busy fraction, coloured by the dataset dominant in most of them (weighted by
// their busy fractions). Returns the note.
std::string DrawTimeBins(const ChunkLanes& lanes, GanttChart* chart) {
  const size_t per_row = (lanes.lanes.size() + kMaxGanttRows - 1) / kMaxGanttRows;
  const size_t rows = (lanes.lanes.size() + per_row - 1) / per_row;
  const int bins = static_cast<int>(std::clamp<size_t>(30000 / rows, 40, 300));
  const std::vector<LaneBins> binned = BinChunkLanes(lanes, bins);
  const double width = (lanes.last_end_seconds - lanes.first_start_seconds) / bins;
  std::vector<double> level(static_cast<size_t>(bins));
  std::vector<size_t> dataset(static_cast<size_t>(bins));
  std::vector<std::string> row_names;
  for (size_t r = 0; r < rows; ++r) {
    const size_t first = r * per_row, last = std::min(binned.size(), first + per_row);
    row_names.push_back(last - first == 1
                            ? chart->rows[first]
                            : absl::StrCat(chart->rows[first], " +", last - first - 1));
    for (size_t b = 0; b < level.size(); ++b) {
      double busy = 0;
      std::map<size_t, double> weight;  // per dominant dataset
      for (size_t lane = first; lane < last; ++lane) {
        busy += binned[lane].busy_fraction[b];
        weight[binned[lane].dominant_dataset[b]] += binned[lane].busy_fraction[b];
      }
      level[b] = std::round(busy / static_cast<double>(last - first) * 10) / 10;
      dataset[b] = SIZE_MAX;
      double best = 0;
      for (const auto& [d, w] : weight) {
        if (d != SIZE_MAX && (dataset[b] == SIZE_MAX || w > best)) dataset[b] = d, best = w;
      }
    }
    for (int b = 0; b < bins;) {
      int e = b + 1;
      while (e < bins && dataset[static_cast<size_t>(e)] == dataset[static_cast<size_t>(b)] &&
             level[static_cast<size_t>(e)] == level[static_cast<size_t>(b)]) {
        ++e;
      }
      if (dataset[static_cast<size_t>(b)] != SIZE_MAX && level[static_cast<size_t>(b)] > 0) {
        GanttBar bar;
        bar.row = r;
        bar.start = lanes.first_start_seconds + b * width;
        bar.end = lanes.first_start_seconds + e * width;
        bar.color = dataset[static_cast<size_t>(b)];
        bar.opacity = level[static_cast<size_t>(b)];
        chart->bars.push_back(std::move(bar));
      }
      b = e;
    }
  }
  chart->rows = std::move(row_names);
  if (per_row > 1) chart->frame.series_noun = absl::StrCat("rows of ", per_row, " worker threads");
  const std::string grouped =
      per_row == 1 ? std::string()
                   : absl::StrCat(" (", ThousandsText(static_cast<int64_t>(lanes.lanes.size())),
                                  " worker threads, drawn ", per_row,
                                  " consecutive ones per row in name order: their mean)");
  return absl::StrCat(ThousandsText(static_cast<int64_t>(lanes.chunk_count)), " chunks, drawn in ",
                      bins, " time bins per worker thread", grouped,
                      ": opacity "
                      "is the share of the bin spent in chunks, colour the dataset that "
                      "ran most.");
}

}  // namespace

void BuildChunkGantt(const ReportChunks& chunks, int64_t origin_unix_ns, ChartFrame frame,
                     ReportPlot* plot) {
  const ChunkLanes lanes = BuildChunkLanes(chunks.timeline(), origin_unix_ns);
  if (lanes.chunk_count == 0) return;
  GanttChart chart{std::move(frame), {}, {}};
  chart.frame.series_noun = "worker threads";
  // Across the page (scaled to 1200 px at most, to ~750 px on a narrow window, where text must
  // stay readable); as tall as its lanes need.
  chart.frame.width = 900;
  chart.frame.height = 0;
  chart.clock_time = false;
  chart.legend = lanes.datasets;
  for (std::string& name : chart.legend) {
    if (name.empty()) name = "(no dataset)";
  }
  std::vector<double> idle;
  for (const Lane& lane : lanes.lanes) {
    // The end of a long worker name tells workers apart better than its start.
    // Named as in the tables and traces ("host:pid/thread-k").
    std::string worker = WorkerThreadName(lane.worker, lane.thread_index);
    if (worker.size() > 24) worker = absl::StrCat("\u2026", worker.substr(worker.size() - 23));
    chart.rows.push_back(
        absl::StrCat(worker, lane.slot > 0 ? absl::StrCat(" (", lane.slot + 1, ")") : ""));
    const double span = lane.busy_seconds + lane.idle_seconds;
    idle.push_back(span > 0 ? 100 * lane.idle_seconds / span : 0);
  }
  if (lanes.chunk_count <= kMaxGanttChunks) {
    DrawEachChunk(chunks, lanes, &chart);
  } else {
    plot->note = DrawTimeBins(lanes, &chart);
  }
  std::vector<double> sorted = idle;
  std::sort(sorted.begin(), sorted.end());
  absl::StrAppend(
      &plot->note, plot->note.empty() ? "" : " ",
      absl::StrFormat("Idle between chunks, per worker thread: %.0f %% (min), "
                      "%.0f %% (median), %.0f %% (max) of the %s from the first "
                      "chunk start to the last end.",
                      sorted.front(), sorted[sorted.size() / 2], sorted.back(),
                      FormatDuration(lanes.last_end_seconds - lanes.first_start_seconds)));
  plot->svg = RenderGantt(chart);
}

}  // namespace export_internal
}  // namespace roastcoffea
