// The built-in metric catalogue: the measured CPU first, the original tool's keys
// (metric_catalogue_original.cc), then ours. A new metric gets its entry here
// (docs/ARCHITECTURE.md, "How to add a metric").
#include "aggregation/metric_catalogue_entries.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "aggregation/metric_catalogue_builder.h"

namespace roastcoffea {
namespace catalogue_internal {
namespace {

const char* WhyNoCpuEfficiency(const M& m) {
  return m.cpu().has_cpu_seconds() ? "N/A (capacity unknown)" : "N/A (CPU not measured)";
}

// Where the measured CPU came from, or why there is none.
RowNote CpuSourceNote(const M& m) {
  if (m.cpu().has_cpu_seconds() && !m.cpu().cpu_source().empty()) {
    return {"measured by", m.cpu().cpu_source()};
  }
  if (!m.cpu().has_cpu_seconds() && !m.cpu().unknown_reason().empty()) {
    return {"why", m.cpu().unknown_reason()};
  }
  return {};
}

RowNote CapacitySourceNote(const M& m) {
  if (m.cpu().capacity_source().empty()) return {};
  return {"computed as", m.cpu().capacity_source()};
}

// The Resource Utilization table's one occupancy: over the tracked core-seconds when known
// (right under churn), else the original's concurrency / total cores (the same number for a
// fixed set of workers), else a saved core_efficiency whose inputs were not saved with it.
std::optional<double> OccupancyFraction(const M& m) {
  if (!WallReported(m)) return std::nullopt;
  const v1::EfficiencyMetrics& e = m.efficiency();
  if (Tracked(m) && e.has_core_efficiency_over_core_seconds_fraction()) {
    return e.core_efficiency_over_core_seconds_fraction();
  }
  if (!(Tracked(m) && CoresKnown(m))) {
    return If(e.has_core_efficiency_fraction(), e.core_efficiency_fraction());
  }
  return e.speedup_factor() / m.workers().total_cores();
}
std::string OccupancyText(const M& m, double fraction, const CellFormats& cell) {
  if (!Tracked(m)) return cell.percent(fraction);
  return cell.flag_impossible(m,
                              m.efficiency().has_core_efficiency_over_core_seconds_fraction()
                                  ? "core_efficiency_over_core_seconds"
                                  : "core_efficiency",
                              cell.percent(fraction));
}

// Measured CPU (aggregation/cpu_metrics.h): the first flat keys.
void AddHeadline(Builder& b) {
  b.Add(
       "cpu_efficiency", "CPU Efficiency", "fraction", G::kCpu,
       [](const M& m) {
         return If(m.cpu().has_cpu_efficiency_fraction(), m.cpu().cpu_efficiency_fraction());
       },
       "Measured CPU time over the core-seconds the workers had.")
      .Flat(kHeadline)
      .Row(SummaryTableId::kCpu, 1, ValueFormat::kPercent, WhyNoCpuEfficiency)
      .FlagImpossible()
      .Direction(kHigher, kFalls)
      .Compared(1, "%", 100.0)
      .Live();
  b.Add(
       "cpu_seconds", "CPU Time (measured)", "s", G::kCpu,
       [](const M& m) { return If(m.cpu().has_cpu_seconds(), m.cpu().cpu_seconds()); },
       "CPU time the run used, measured by the source named in cpu_source.")
      .Flat(kHeadline)
      .Row(SummaryTableId::kCpu, 2, ValueFormat::kDuration, JustNA)
      .Bulleted()
      .RowNoteFrom(CpuSourceNote)
      .Compared(2, "s")
      .Live();
  b.Add(
       "core_seconds_available", "Core-Seconds Available", "core*s", G::kCpu,
       [](const M& m) {
         return If(m.cpu().has_core_seconds_available(), m.cpu().core_seconds_available());
       },
       "Cores the workers had, integrated over the run.")
      .Flat(kHeadline)
      .Row(SummaryTableId::kCpu, 3, ValueFormat::kOneDecimal)
      .Bulleted()
      .RowText([](const M&, double value, const CellFormats&) {
        return absl::StrFormat("%.1f core-s", value);
      })
      .RowNoteFrom(CapacitySourceNote);
  b.Add(
       "usable_cores", "Usable Cores (average)", "cores", G::kCpu,
       [](const M& m) { return If(m.cpu().has_usable_cores(), m.cpu().usable_cores()); },
       "Core-seconds available over the elapsed time.")
      .Flat(kHeadline)
      .Row(SummaryTableId::kCpu, 4, ValueFormat::kOneDecimal)
      .Bulleted()
      .RowText(
          [](const M&, double value, const CellFormats&) { return absl::StrFormat("%.2f", value); })
      .Compared(3, "cores")
      .Live();
  b.Add(
       "event_rate_per_cpu_second_khz", "Event Rate (per CPU-second)", "kHz", G::kCpu,
       [](const M& m) {
         return If(m.cpu().has_event_rate_per_cpu_second_khz(),
                   m.cpu().event_rate_per_cpu_second_khz());
       },
       "Events per second of measured CPU time.")
      .Flat(kHeadline)
      .Row(SummaryTableId::kEvents, 3, ValueFormat::kOneDecimal)
      .Direction(kHigher, kFalls)
      .Compared(11, "kHz")
      .Live();
}

// The Thread Time Split's rows that are no flat key: blocked time and the shares of the split.
void AddProcessorSplitRows(Builder& b) {
  const auto na_when_split = [](const M& m) { return RunQueueSplit(m) ? "N/A" : nullptr; };
  b.Add(
       "processor_blocked_seconds", "Processor Blocked (I/O, locks, sleep)", "s", G::kFine,
       [](const M& m) { return If(RunQueueSplit(m), ProcessorBlockedSeconds(m)); },
       "Processor off-CPU time not spent waiting for a CPU.")
      .Row(SummaryTableId::kThreadTimeSplit, 3, ValueFormat::kDuration);
  b.Add(
       "processor_run_queue_wait_share", "Processor Waiting-for-CPU Share", "%", G::kFine,
       [](const M& m) {
         return ProcessorShare(m, RunQueueSplit(m), m.fine().processor_run_queue_wait_seconds());
       },
       "Processor time waiting for a CPU over processor thread time.")
      .Row(SummaryTableId::kThreadTimeSplit, 6, ValueFormat::kOneDecimal, na_when_split)
      .RowLabel("  Waiting for a CPU %")
      .RowText(PercentOneDecimal);
  b.Add(
       "processor_blocked_share", "Processor Blocked Share", "%", G::kFine,
       [](const M& m) { return ProcessorShare(m, RunQueueSplit(m), ProcessorBlockedSeconds(m)); },
       "Processor blocked time over processor thread time.")
      .Row(SummaryTableId::kThreadTimeSplit, 7, ValueFormat::kOneDecimal, na_when_split)
      .RowLabel("  Blocked %")
      .RowText(PercentOneDecimal);
}

// Where the chunks' wall time went (measured CPU, run queue, blocked), and the reported sum.
void AddChunkTimeSplit(Builder& b) {
  b.Add(
       "chunk_wall_seconds", "Chunk Wall Time (measured)", "s", G::kCpu,
       [](const M& m) {
         return If(m.cpu().has_chunk_wall_seconds(), m.cpu().chunk_wall_seconds());
       },
       "Wall time of the chunks that measured their CPU, summed.")
      .Flat(kHeadline);
  b.Add(
       "chunk_cpu_seconds", "Chunk CPU Time", "s", G::kCpu,
       [](const M& m) { return If(m.cpu().has_chunk_cpu_seconds(), m.cpu().chunk_cpu_seconds()); },
       "CPU time of those chunks, summed.")
      .Flat(kHeadline);
  b.Add(
       "chunk_run_queue_wait_seconds", "Chunk Time Waiting for a CPU", "s", G::kCpu,
       [](const M& m) {
         return If(m.cpu().has_chunk_run_queue_wait_seconds(),
                   m.cpu().chunk_run_queue_wait_seconds());
       },
       "Time the chunks' threads were runnable but waited for a CPU (run queue).")
      .Flat(kHeadline);
  b.Add(
       "chunk_blocked_seconds", "Chunk Time Blocked", "s", G::kCpu,
       [](const M& m) {
         return If(m.cpu().has_chunk_blocked_seconds(), m.cpu().chunk_blocked_seconds());
       },
       "Time the chunks' threads were blocked (I/O, locks, sleep).")
      .Flat(kHeadline);
  b.Add(
       "summed_chunk_wall_seconds", "Summed Chunk Wall Time (reported)", "s", G::kWorkflow,
       [](const M& m) {
         return If(m.workflow().has_summed_chunk_wall_seconds(),
                   m.workflow().summed_chunk_wall_seconds());
       },
       "Wall time summed over chunks as the engine reported it (Coffea's processtime).")
      .Flat(kHeadline)
      .Row(SummaryTableId::kTiming, 2, ValueFormat::kDuration, NotReported)
      .Compared(14, "s");
}

// Our keys that the original does not have, each written only when known.
void AddAdditions(Builder& b) {
  constexpr auto kKnown = FlatPresence::kWhenKnown;
  b.Add(
       "total_uncompressed_bytes_read", "Total Bytes Read (uncompressed)", "bytes", G::kWorkflow,
       [](const M& m) {
         return If(m.workflow().has_total_uncompressed_bytes_read(),
                   static_cast<double>(m.workflow().total_uncompressed_bytes_read()));
       },
       "Bytes the chunks read, after decompression.")
      .Flat(kAddition, kKnown)
      .Row(SummaryTableId::kThroughput, 4, ValueFormat::kBytes);
  b.Add(
       "compression_factor", "Compression Factor", "x", G::kWorkflow,
       [](const M& m) {
         return If(m.workflow().has_compression_factor(), m.workflow().compression_factor());
       },
       "Uncompressed bytes over compressed bytes read.")
      .Flat(kAddition, kKnown)
      .Row(SummaryTableId::kThroughput, 5, ValueFormat::kOneDecimal)
      .RowText([](const M&, double value, const CellFormats&) {
        return absl::StrFormat("%.2fx", value);
      });
  b.Add(
       "distinct_file_bytes", "File Bytes (distinct)", "bytes", G::kWorkflow,
       [](const M& m) {
         return If(m.workflow().has_distinct_file_bytes(),
                   static_cast<double>(m.workflow().distinct_file_bytes()));
       },
       "Bytes of the distinct files the run read.")
      .Flat(kAddition, FlatPresence::kWithFileBytes);
  b.Add(
       "read_amplification", "Read Amplification (bytes read / file bytes)", "x", G::kWorkflow,
       [](const M& m) {
         return If(m.workflow().has_read_amplification(), m.workflow().read_amplification());
       },
       "Bytes read over the files' distinct bytes: above 1, data was read again.")
      .Flat(kAddition, FlatPresence::kWithFileBytes)
      .Row(SummaryTableId::kThroughput, 3, ValueFormat::kOneDecimal, nullptr,
           [](const M& m) {
             return If(
                 m.workflow().has_read_amplification() && m.workflow().has_distinct_file_bytes(),
                 m.workflow().read_amplification());
           })
      .RowLabel("Read Amplification")
      .RowText([](const M& m, double value, const CellFormats& cell) {
        // Bytes read against the files' distinct bytes (aggregation/read_amplification.h).
        return absl::StrFormat("%.2fx (files hold %s)", value,
                               cell.bytes(static_cast<double>(m.workflow().distinct_file_bytes())));
      })
      .Direction(kLower)
      .Compared(9, "x");
}

// Our capacity and efficiency keys: tracking window, core-seconds, efficiencies.
void AddCoreSecondFigures(Builder& b);

void AddCapacityAdditions(Builder& b) {
  constexpr auto kWorkers = FlatPresence::kWithWorkers;
  b.Add(
       "window_seconds", "Tracking Window", "s", G::kWorkers,
       [](const M& m) { return If(m.has_workers(), m.workers().window_seconds()); },
       "Seconds over which the workers were tracked.")
      .Flat(kAddition, kWorkers);
  b.Add(
       "avg_workers_over_window", "Workers (Window-Averaged)", "workers", G::kWorkers,
       [](const M& m) { return If(m.has_workers(), m.workers().avg_workers_over_window()); },
       "Workers connected, averaged over the tracking window.")
      .Flat(kAddition, kWorkers);
  b.Add(
       "core_seconds", "Tracked Core-Seconds", "core*s", G::kWorkers,
       [](const M& m) {
         return If(m.has_workers() && m.workers().has_core_seconds(), m.workers().core_seconds());
       },
       "Cores of the tracked workers integrated over time.")
      .Flat(kAddition, kWorkers)
      .Row(SummaryTableId::kResources, 9, ValueFormat::kOneDecimal, nullptr,
           [](const M& m) {
             return If(Tracked(m) && m.workers().has_core_seconds(), m.workers().core_seconds());
           })
      .RowText([](const M&, double value, const CellFormats&) {
        return absl::StrFormat("%.1f core-s", value);
      });
  b.Add(
       "avg_cores_over_window", "Cores (Time-Averaged)", "cores", G::kWorkers,
       [](const M& m) {
         return If(m.has_workers() && m.workers().has_avg_cores_over_window(),
                   m.workers().avg_cores_over_window());
       },
       "Cores of the tracked workers averaged over the window.")
      .Flat(kAddition, kWorkers)
      .Live()
      .Row(SummaryTableId::kResources, 6, ValueFormat::kOneDecimal, nullptr,
           [](const M& m) {
             return If(Tracked(m) && m.workers().has_avg_cores_over_window() && !ConstantCores(m),
                       m.workers().avg_cores_over_window());
           })
      .RowText(TwoDecimals);
  AddCoreSecondFigures(b);
}

// Figures over the tracked core-seconds, and the processor's run-queue wait.
void AddCoreSecondFigures(Builder& b) {
  constexpr auto kKnown = FlatPresence::kWhenKnown;
  b.Add(
       "core_efficiency_over_core_seconds", "Worker Occupancy (over core-seconds)", "fraction",
       G::kEfficiency,
       [](const M& m) {
         return If(m.efficiency().has_core_efficiency_over_core_seconds_fraction(),
                   m.efficiency().core_efficiency_over_core_seconds_fraction());
       },
       "Summed chunk wall time over tracked core-seconds.")
      .Flat(kAddition, kKnown);
  b.Add(
       "parallel_efficiency", "Parallel Efficiency", "fraction", G::kEfficiency,
       [](const M& m) {
         return If(m.efficiency().has_parallel_efficiency_fraction(),
                   m.efficiency().parallel_efficiency_fraction());
       },
       "Speedup over the cores used.")
      .Flat(kAddition, kKnown);
  b.Add(
       "task_execution_core_efficiency", "Task Execution Core Efficiency", "fraction",
       G::kEfficiency,
       [](const M& m) {
         return If(m.efficiency().has_task_execution_core_efficiency_fraction(),
                   m.efficiency().task_execution_core_efficiency_fraction());
       },
       "Task execution time over the cores the tasks were given (TaskVine).")
      .Flat(kAddition, kKnown);
  b.Add(
       "event_rate_core_seconds_khz", "Event Rate (per core-second)", "kHz", G::kEfficiency,
       [](const M& m) {
         return If(m.efficiency().has_event_rate_core_seconds_khz(),
                   m.efficiency().event_rate_core_seconds_khz());
       },
       "Events per tracked core-second.")
      .Flat(kAddition, kKnown);
  b.Add(
       "processor_run_queue_wait_seconds", "Processor Time Waiting for a CPU", "s", G::kFine,
       [](const M& m) {
         return If(m.has_fine() && m.fine().has_processor_run_queue_wait_seconds(),
                   m.fine().processor_run_queue_wait_seconds());
       },
       "The part of processor off-CPU time spent waiting for a CPU, where the engine measured it.")
      .Flat(kAddition, kKnown)
      .Row(SummaryTableId::kThreadTimeSplit, 2, ValueFormat::kDuration, nullptr,
           [](const M& m) {
             return If(RunQueueSplit(m), m.fine().processor_run_queue_wait_seconds());
           })
      .RowLabel("Processor Waiting for a CPU (run queue)");
  AddProcessorSplitRows(b);
}

// Our keys from chunk records: retries, live memory, percentiles, time per event.
void AddTimePerEvent(Builder& b);

void AddChunkAdditions(Builder& b) {
  constexpr auto kKnown = FlatPresence::kWhenKnown;
  b.Add(
       "num_retried_chunks", "Retried Chunks", "chunks", G::kChunks,
       [](const M& m) {
         return If(m.has_chunks(), static_cast<double>(m.chunks().num_retried_chunks()));
       },
       "Chunks that were run again after a failure.")
      .Flat(kChunkAddition, FlatPresence::kWithChunks)
      .Row(SummaryTableId::kChunks, 4, ValueFormat::kThousands, nullptr,
           [](const M& m) {
             return If(m.has_chunks() && m.chunks().num_retried_chunks() > 0,
                       static_cast<double>(m.chunks().num_retried_chunks()));
           })
      .RowLabel("Retries")
      .Bulleted();
  b.Add(
       "chunk_peak_live_bytes_mean", "Chunk Peak Live Memory Mean", "bytes", G::kChunks,
       [](const M& m) {
         return If(m.chunks().peak_live_bytes().count() > 0, m.chunks().peak_live_bytes().mean());
       },
       "Mean of the chunks' peak live heap bytes.")
      .Flat(kChunkAddition, kKnown)
      // Exact and per chunk: the chunk's own thread's heap (allocation counting).
      .Row(SummaryTableId::kChunks, 8, ValueFormat::kBytes)
      .RowLabel("Mean Chunk Heap Peak (own thread)");
  b.Add(
       "chunk_peak_live_bytes_max", "Chunk Peak Live Memory Max", "bytes", G::kChunks,
       [](const M& m) {
         return If(m.chunks().peak_live_bytes().count() > 0, m.chunks().peak_live_bytes().max());
       },
       "Largest peak live heap bytes of a chunk.")
      .Flat(kChunkAddition, kKnown)
      .Row(SummaryTableId::kChunks, 9, ValueFormat::kBytes)
      .RowLabel("Max")
      .Bulleted();
  struct Percentile {
    const char* key;
    const char* label;
    MetricGetter value;
    int compare_rank;
  };
  using P = v1::Percentiles;
  static const Percentile kDurations[] = {
      {"chunk_duration_p50", "Chunk Duration p50", &DurationPercentile<&P::p50>, 25},
      {"chunk_duration_p90", "Chunk Duration p90", &DurationPercentile<&P::p90>, 0},
      {"chunk_duration_p95", "Chunk Duration p95", &DurationPercentile<&P::p95>, 26},
      {"chunk_duration_p99", "Chunk Duration p99", &DurationPercentile<&P::p99>, 27},
  };
  for (const Percentile& p : kDurations) {
    Entry entry = b.Add(p.key, p.label, "s", G::kChunks, p.value,
                        "Percentile of the successful chunks' wall time.");
    entry.Flat(kChunkAddition, kKnown).Direction(kLower, kFalls).Live();
    if (p.compare_rank > 0) entry.Compared(p.compare_rank, "s");
  }
  AddTimePerEvent(b);
}

// The chunks' wall time per event: mean, median, 99th percentile.
void AddTimePerEvent(Builder& b) {
  constexpr auto kKnown = FlatPresence::kWhenKnown;
  b.Add(
       "time_per_event_mean", "Time per Event Mean", "s", G::kChunks,
       [](const M& m) {
         const v1::DistributionStats& t = m.chunks().time_per_event_seconds();
         return If(t.count() > 0, t.mean());
       },
       "Mean of the chunks' wall time per event.")
      .Flat(kChunkAddition, kKnown)
      .Row(SummaryTableId::kChunks, 5, ValueFormat::kDuration)
      .RowLabel("Time per Event (mean)");
  b.Add(
       "time_per_event_p50", "Time per Event p50", "s", G::kChunks,
       [](const M& m) {
         const v1::DistributionStats& t = m.chunks().time_per_event_seconds();
         return If(t.count() > 0 && t.has_percentiles(), t.percentiles().p50());
       },
       "Median of the chunks' wall time per event.")
      .Flat(kChunkAddition, kKnown)
      .Row(SummaryTableId::kChunks, 6, ValueFormat::kDuration)
      .RowLabel("p50")
      .Bulleted();
  b.Add(
       "time_per_event_p99", "Time per Event p99", "s", G::kChunks,
       [](const M& m) {
         const v1::DistributionStats& t = m.chunks().time_per_event_seconds();
         return If(t.count() > 0 && t.has_percentiles(), t.percentiles().p99());
       },
       "99th percentile of the chunks' wall time per event.")
      .Flat(kChunkAddition, kKnown)
      .Row(SummaryTableId::kChunks, 7, ValueFormat::kDuration)
      .RowLabel("p99")
      .Bulleted();
}

// Figures only compare shows (derived per run for its rows).
void AddCompareOnly(Builder& b) {
  b.Add(
       "bytes_read_per_event", "Bytes Read per Event", "bytes", G::kWorkflow,
       [](const M& m) {
         return If(m.workflow().has_total_bytes_read() && m.workflow().total_events() > 0,
                   static_cast<double>(m.workflow().total_bytes_read()) /
                       static_cast<double>(m.workflow().total_events()));
       },
       "Compressed bytes read per event processed.")
      .Direction(kLower)
      .Compared(8, "bytes");
  // One occupancy, as the tables show it: over core-seconds when known, else / total cores.
  b.Add(
       "worker_occupancy", "Worker Occupancy (busy-worker concurrency / cores)", "%",
       G::kEfficiency,
       [](const M& m) {
         if (!m.workflow().has_summed_chunk_wall_seconds()) return std::optional<double>();
         if (m.efficiency().has_core_efficiency_over_core_seconds_fraction()) {
           return If(true, 100.0 * m.efficiency().core_efficiency_over_core_seconds_fraction());
         }
         return If(m.efficiency().has_core_efficiency_fraction(),
                   100.0 * m.efficiency().core_efficiency_fraction());
       },
       "Busy-worker concurrency over the cores (tracked core-seconds when known).")
      .Compared(17, "%")
      .Row(
          SummaryTableId::kResources, 8, ValueFormat::kPercent,
          [](const M& m) { return WallReported(m) ? NoWorkerTracking(m) : "N/A (not reported)"; },
          OccupancyFraction)
      .RowText(OccupancyText);
  b.Add(
       "chunk_run_queue_wait_share", "Chunk Time Waiting for a CPU (run queue)", "%", G::kCpu,
       [](const M& m) {
         return If(m.cpu().has_chunk_run_queue_wait_seconds() && m.cpu().chunk_wall_seconds() > 0,
                   100.0 * m.cpu().chunk_run_queue_wait_seconds() / m.cpu().chunk_wall_seconds());
       },
       "Share of chunk wall time the threads waited for a CPU.")
      .Direction(kLower, kFalls)
      .Compared(18, "%")
      .Live();
  b.Add(
       "chunk_blocked_share", "Chunk Time Blocked (I/O, locks, sleep)", "%", G::kCpu,
       [](const M& m) {
         return If(m.cpu().has_chunk_blocked_seconds() && m.cpu().chunk_wall_seconds() > 0,
                   100.0 * m.cpu().chunk_blocked_seconds() / m.cpu().chunk_wall_seconds());
       },
       "Share of chunk wall time the threads were blocked.")
      .Direction(kLower)
      .Compared(19, "%")
      .Live();
}

}  // namespace
}  // namespace catalogue_internal

std::vector<MetricDef> BuiltInMetrics() {
  namespace c = catalogue_internal;
  std::vector<MetricDef> metrics;
  c::Builder builder(&metrics);
  c::AddHeadline(builder);
  c::AddChunkTimeSplit(builder);
  c::AddOriginalMetrics(builder);
  c::AddAdditions(builder);
  c::AddCapacityAdditions(builder);
  c::AddChunkAdditions(builder);
  c::AddCompareOnly(builder);
  return metrics;
}

}  // namespace roastcoffea
