// The original tool's flat keys in the metric catalogue, in its order (docs/reference.md
// §2.1-§2.6).
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "aggregation/metric_catalogue_builder.h"

namespace roastcoffea {
namespace catalogue_internal {
namespace {

// A fine figure `Field` as a Thread Time Split row: shown when positive (and, for a part of an
// overhead, when the overhead `Parent` is).
template <double (v1::FineMetricsSummary::*Field)() const>
std::optional<double> Positive(const M& m) {
  return If(Split(m) && (m.fine().*Field)() > 0.0, (m.fine().*Field)());
}
template <double (v1::FineMetricsSummary::*Field)() const,
          double (v1::FineMetricsSummary::*Parent)() const>
std::optional<double> PositiveUnder(const M& m) {
  return If(Split(m) && (m.fine().*Parent)() > 0.0 && (m.fine().*Field)() > 0.0,
            (m.fine().*Field)());
}

// A statistic of the chunk records when some chunk gave it (count > 0).
template <const v1::DistributionStats& (v1::ChunkMetrics::*Stats)() const,
          double (v1::DistributionStats::*Field)() const>
std::optional<double> Known(const M& m) {
  const v1::DistributionStats& stats = (m.chunks().*Stats)();
  return If(m.has_chunks() && stats.count() > 0, (stats.*Field)());
}

bool SharedProcessRss(const M& m) {
  return m.chunks().memory_delta_source() == v1::MEMORY_SOURCE_SHARED_PROCESS_RSS;
}
// Other threads' allocations and frees are in a shared process's RSS: say so, not attribute it.
std::string MemoryDeltaLabel(const M& m) {
  return SharedProcessRss(m) ? "Mean Process RSS Delta per Chunk"
                             : "Mean Memory Delta (process RSS)";
}
std::string MemoryDeltaText(const M& m, double bytes, const CellFormats& cell) {
  return SharedProcessRss(m) ? cell.bytes(bytes) + " (shared process: not attributable to chunks)"
                             : cell.bytes(bytes);
}

// No worker has ever used 0 bytes: zero means the backend does not measure memory use
// (TaskVine logs give limits only), which must not read as a measured zero.
bool MemoryMeasured(const M& m) {
  return Tracked(m) &&
         (m.workers().peak_memory_bytes() > 0.0 || m.workers().avg_memory_per_worker_bytes() > 0.0);
}
const char* MemoryUnknown(const M& m) {
  return Tracked(m) ? "N/A (not measured by this backend)" : NoWorkerTracking(m);
}
// Thread-pool "workers" are threads of one process: its resident memory, counted once.
std::string MemoryScope(const M& m) {
  const v1::WorkerMetrics& w = m.workers();
  if (!w.memory_is_process_wide()) return "(per worker)";
  return absl::StrCat("(process RSS, shared by ", w.threads_sharing_memory(),
                      w.threads_sharing_memory() == 1 ? " thread)" : " threads)");
}

// The original's "Event Rate (Total CPU)", shown only where the summed chunk wall time it divides
// by was reported.
std::optional<double> RateOverReportedWall(const M& m) {
  return If(
      m.workflow().has_summed_chunk_wall_seconds() && m.workflow().has_event_rate_cpu_total_khz(),
      m.workflow().event_rate_cpu_total_khz());
}

// Events per tracked core, shown only where the events are known.
std::optional<double> CoreRateOfEvents(const M& m) {
  return If(m.workflow().has_total_events() && m.efficiency().has_event_rate_core_khz(),
            m.efficiency().event_rate_core_khz());
}

const char* WhyNoCoreRate(const M& m) {
  return m.workflow().has_total_events() ? "N/A (no worker tracking)" : "N/A (not reported)";
}

// The original tool's workflow keys.
void AddWorkflow(Builder& b) {
  b.Add(
       "data_rate_gbps", "Data Rate", "Gbps", G::kWorkflow,
       [](const M& m) {
         return If(m.workflow().has_data_rate_gbps(), m.workflow().data_rate_gbps());
       },
       "Compressed bytes read per elapsed second.")
      .Flat(kOriginal)
      .Row(SummaryTableId::kThroughput, 1, ValueFormat::kOneDecimal,
           [](const M&) { return "N/A (bytes read not reported)"; })
      .RowText([](const M& m, double gbps, const CellFormats&) {
        // Older producers may not fill the MB/s field; it is the same rate in other units.
        const double mbytes_per_second = m.workflow().has_data_rate_mbytes_per_second()
                                             ? m.workflow().data_rate_mbytes_per_second()
                                             : gbps * 1000.0 / 8.0;
        return absl::StrFormat("%.2f Gbps (%.1f MB/s)", gbps, mbytes_per_second);
      })
      .Direction(kHigher, kGains)
      .Compared(6, "Gbps")
      .Live();
  b.Add(
       "total_events", "Total Events", "events", G::kWorkflow,
       [](const M& m) {
         return If(m.workflow().has_total_events(),
                   static_cast<double>(m.workflow().total_events()));
       },
       "Events processed.")
      .Flat(kOriginal)
      .Row(SummaryTableId::kEvents, 1, ValueFormat::kThousands, NotReported)
      .Compared(5, "events")
      .Live();
  b.Add(
       "event_rate_elapsed_khz", "Event Rate (Elapsed Time)", "kHz", G::kWorkflow,
       [](const M& m) {
         return If(m.workflow().has_event_rate_elapsed_khz(),
                   m.workflow().event_rate_elapsed_khz());
       },
       "Events per elapsed second.")
      .Flat(kOriginal)
      .Row(SummaryTableId::kEvents, 2, ValueFormat::kOneDecimal, NotReported)
      .Direction(kHigher, kGains)
      .Compared(10, "kHz")
      .Live();
  b.Add(
       "event_rate_cpu_total_khz", "Event Rate (per summed chunk wall time)", "kHz", G::kWorkflow,
       [](const M& m) {
         return If(m.workflow().has_event_rate_cpu_total_khz(),
                   m.workflow().event_rate_cpu_total_khz());
       },
       "Events per second of chunk wall time summed over chunks (the original's 'Total CPU').")
      .Flat(kOriginal)
      .Row(SummaryTableId::kEvents, 4, ValueFormat::kOneDecimal, nullptr, RateOverReportedWall)
      .Direction(kHigher, kFalls)
      .Compared(12, "kHz", 1.0, RateOverReportedWall);
  b.Add(
       "elapsed_time_seconds", "Elapsed Time", "s", G::kWorkflow,
       [](const M& m) { return If(true, m.workflow().elapsed_time_seconds()); },
       "Wall time from the run's start to its end.")
      .Flat(kOriginal)
      .Row(SummaryTableId::kTiming, 1, ValueFormat::kDuration)
      .Direction(kLower, kGains)
      .Compared(4, "s")
      .Live();
}

// The original's workflow totals.
void AddWorkflowTotals(Builder& b) {
  b.Add(
       "total_cpu_time", "Total CPU Time (reported)", "s", G::kWorkflow,
       [](const M& m) {
         return If(m.workflow().has_total_cpu_time_seconds(),
                   m.workflow().total_cpu_time_seconds());
       },
       "The original's total_cpu_time: summed chunk wall time, under its old name.")
      .Flat(kOriginal);
  b.Add(
       "num_chunks", "Total Chunks", "chunks", G::kWorkflow,
       [](const M& m) {
         // Chunk records override the report's chunk count, in the same slot.
         return If(true, static_cast<double>(m.has_chunks() ? m.chunks().num_chunks()
                                                            : m.workflow().num_chunks()));
       },
       "Chunks processed (chunk records when present, else the engine's report).")
      .Flat(kOriginal)
      .Row(SummaryTableId::kChunks, 1, ValueFormat::kThousands)
      .Compared(22, "chunks", 1.0,
                [](const M& m) {
                  return If(m.has_chunks(), static_cast<double>(m.chunks().num_chunks()));
                })
      .Live();
  b.Add(
       "avg_cpu_time_per_chunk", "Average Chunk Time (reported)", "s", G::kWorkflow,
       [](const M& m) {
         return If(m.workflow().has_avg_cpu_time_per_chunk_seconds(),
                   m.workflow().avg_cpu_time_per_chunk_seconds());
       },
       "Summed chunk wall time over the chunk count (the original's avg_cpu_time_per_chunk).")
      .Flat(kOriginal);
  b.Add(
       "total_bytes_read", "Bytes Read", "bytes", G::kWorkflow,
       [](const M& m) {
         return If(m.workflow().has_total_bytes_read(),
                   static_cast<double>(m.workflow().total_bytes_read()));
       },
       "Compressed bytes the chunks read from storage.")
      .Flat(kOriginal)
      .Row(SummaryTableId::kThroughput, 2, ValueFormat::kBytes)
      .RowLabel("Total Bytes Read (reported)")
      .Compared(7, "MiB", 1.0 / kBytesPerMiB)
      .Live();
}

// The original's worker keys, present with worker tracking.
void AddWorkerMemory(Builder& b);

void AddWorkers(Builder& b) {
  constexpr auto kWith = FlatPresence::kWithWorkers;
  b.Add(
       "avg_workers", "Workers (Time-Averaged)", "workers", G::kWorkers,
       [](const M& m) { return If(m.has_workers(), m.workers().avg_workers()); },
       "Workers connected, averaged over the elapsed time.")
      .Flat(kOriginal, kWith)
      .Row(
          SummaryTableId::kResources, 2, ValueFormat::kOneDecimal,
          [](const M& m) { return Tracked(m) ? nullptr : NoWorkerTracking(m); },
          [](const M& m) {
            return If(Tracked(m) && !ConstantWorkers(m), m.workers().avg_workers());
          })
      .RowText(TwoDecimals)
      .Live();
  b.Add(
       "peak_workers", "Peak Workers", "workers", G::kWorkers,
       [](const M& m) {
         return If(m.has_workers(), static_cast<double>(m.workers().peak_workers()));
       },
       "Most workers connected at once.")
      .Flat(kOriginal, kWith)
      .Row(SummaryTableId::kResources, 3, ValueFormat::kOneDecimal, NoWorkerTracking)
      .RowLabelFrom(
          [](const M& m) { return std::string(ConstantWorkers(m) ? "Workers" : "Peak Workers"); })
      .RowText([](const M& m, double, const CellFormats&) {
        return absl::StrCat(m.workers().peak_workers(), ConstantWorkers(m) ? " (constant)" : "");
      })
      .Live();
  b.Add(
       "total_cores", "Total Cores", "cores", G::kWorkers,
       [](const M& m) {
         return If(m.has_workers() && m.workers().has_total_cores(), m.workers().total_cores());
       },
       "Cores of the workers ever seen.")
      .Flat(kOriginal, kWith)
      .Row(SummaryTableId::kResources, 5, ValueFormat::kOneDecimal, NoWorkerTracking)
      .RowText([](const M& m, double total, const CellFormats&) {
        if (!ConstantCores(m)) return absl::StrFormat("%.0f", total);
        const double per_worker = m.workers().cores_per_worker();
        return absl::StrCat(
            absl::StrFormat("%.0f (%.1f per worker", total, per_worker),
            std::abs(per_worker - std::round(per_worker)) < 1e-9 ? ")" : " on average)");
      })
      .Compared(15, "cores")
      .Live();
  b.Add(
       "cores_per_worker", "Cores per Worker", "cores", G::kWorkers,
       [](const M& m) {
         return If(m.has_workers() && m.workers().has_cores_per_worker(),
                   m.workers().cores_per_worker());
       },
       "Cores of one worker (on average).")
      .Flat(kOriginal, kWith)
      .Row(
          SummaryTableId::kResources, 4, ValueFormat::kOneDecimal,
          [](const M& m) { return ConstantCores(m) ? nullptr : NoWorkerTracking(m); },
          [](const M& m) {
            return If(Tracked(m) && m.workers().has_cores_per_worker() && !ConstantCores(m),
                      m.workers().cores_per_worker());
          })
      .RowText([](const M&, double value, const CellFormats&) {
        return absl::StrFormat("%.1f", value);
      });
  AddWorkerMemory(b);
}

// The original's worker memory keys (the Resource Utilization memory rows).
void AddWorkerMemory(Builder& b) {
  constexpr auto kWith = FlatPresence::kWithWorkers;
  b.Add(
       "peak_memory_bytes", "Peak Memory", "bytes", G::kWorkers,
       [](const M& m) { return If(m.has_workers(), m.workers().peak_memory_bytes()); },
       "Largest memory use of a worker (or of the process for a thread pool); 0: not measured.")
      .Flat(kOriginal, kWith)
      .Row(SummaryTableId::kResources, 10, ValueFormat::kBytes, MemoryUnknown,
           [](const M& m) { return If(MemoryMeasured(m), m.workers().peak_memory_bytes()); })
      .RowLabelFrom([](const M& m) { return absl::StrCat("Peak Memory ", MemoryScope(m)); })
      .Direction(kLower, kFalls)
      .Compared(20, "MiB", 1.0, [](const M& m) {
        return If(m.has_workers() && m.workers().peak_memory_bytes() > 0,
                  m.workers().peak_memory_bytes() / (1024.0 * 1024.0));
      });
  b.Add(
       "avg_memory_per_worker_bytes", "Avg Memory (per worker or process)", "bytes", G::kWorkers,
       [](const M& m) { return If(m.has_workers(), m.workers().avg_memory_per_worker_bytes()); },
       "Memory use of a worker averaged over time; 0: not measured.")
      .Flat(kOriginal, kWith)
      .Row(SummaryTableId::kResources, 11, ValueFormat::kBytes, MemoryUnknown,
           [](const M& m) {
             return If(MemoryMeasured(m), m.workers().avg_memory_per_worker_bytes());
           })
      .RowLabelFrom([](const M& m) { return absl::StrCat("Avg Memory ", MemoryScope(m)); })
      .Direction(kLower, kFalls)
      .Compared(21, "MiB", 1.0, [](const M& m) {
        return If(m.has_workers() && m.workers().avg_memory_per_worker_bytes() > 0,
                  m.workers().avg_memory_per_worker_bytes() / (1024.0 * 1024.0));
      });
}

// The original's efficiency keys.
void AddEfficiency(Builder& b) {
  b.Add(
       "core_efficiency", "Worker Occupancy (original)", "fraction", G::kEfficiency,
       [](const M& m) {
         return If(m.efficiency().has_core_efficiency_fraction(),
                   m.efficiency().core_efficiency_fraction());
       },
       "Busy-worker concurrency over total cores (the original's core_efficiency; not CPU).")
      .Flat(kOriginal);
  b.Add(
       "speedup_factor", "Busy-Worker Concurrency", "x", G::kEfficiency,
       [](const M& m) {
         return If(m.efficiency().has_speedup_factor(), m.efficiency().speedup_factor());
       },
       "Summed chunk wall time over elapsed time (the original's speedup_factor).")
      .Flat(kOriginal)
      // How busy the workers were (summed chunk wall time), not how much CPU they got.
      .Row(SummaryTableId::kResources, 7, ValueFormat::kOneDecimal, NotReported,
           [](const M& m) { return If(WallReported(m), m.efficiency().speedup_factor()); })
      .RowLabel("Busy-Worker Concurrency (summed chunk wall / elapsed)")
      .RowText(TwoDecimals)
      .Compared(16, "x", 1.0, [](const M& m) {
        return If(m.workflow().has_summed_chunk_wall_seconds(), m.efficiency().speedup_factor());
      });
  b.Add(
       "event_rate_core_khz", "Event Rate (per tracked core)", "kHz/core", G::kEfficiency,
       [](const M& m) {
         return If(m.efficiency().has_event_rate_core_khz(), m.efficiency().event_rate_core_khz());
       },
       "Events per elapsed second per core of the workers.")
      .Flat(kOriginal)
      .Row(SummaryTableId::kEvents, 5, ValueFormat::kOneDecimal, WhyNoCoreRate, CoreRateOfEvents)
      .Direction(kHigher, kFalls)
      .Compared(13, "kHz/core", 1.0, CoreRateOfEvents);
}
// The original's fine-metric keys, present with fine metrics. The CPU / off-CPU split exists
// only where the engine splits thread time; elsewhere (TaskVine, Dask before 2023) it is
// unknown, not 0.
void AddFineTotals(Builder& b);

void AddFine(Builder& b) {
  constexpr auto kWith = FlatPresence::kWithFine;
  b.Add(
       "processor_cpu_time_seconds", "Processor CPU Time", "s", G::kFine,
       [](const M& m) { return If(Split(m), m.fine().processor_cpu_time_seconds()); },
       "CPU time of the analysis code's threads.")
      .Flat(kOriginal, kWith)
      .Row(SummaryTableId::kThreadTimeSplit, 1, ValueFormat::kDuration)
      .Compared(28, "s");
  b.Add(
       "processor_io_wait_time_seconds", "Processor Off-CPU Time", "s", G::kFine,
       [](const M& m) { return If(Split(m), m.fine().processor_io_wait_time_seconds()); },
       "Time the analysis code's threads were off CPU (the original's 'I/O wait').")
      .Flat(kOriginal, kWith)
      .Row(SummaryTableId::kThreadTimeSplit, 4, ValueFormat::kDuration, nullptr,
           [](const M& m) {
             return If(Split(m) && !RunQueueSplit(m), m.fine().processor_io_wait_time_seconds());
           })
      .RowLabel("Processor Off-CPU Time (not split)")
      .Direction(kLower, kFalls)
      .Compared(29, "s");
  b.Add(
       "processor_cpu_percent", "Processor CPU Share", "%", G::kFine,
       [](const M& m) { return If(Split(m), m.fine().processor_cpu_percent()); },
       "Processor CPU time over processor thread time.")
      .Flat(kOriginal, kWith)
      .Row(
          SummaryTableId::kThreadTimeSplit, 5, ValueFormat::kOneDecimal, JustNA,
          [](const M& m) { return ProcessorShare(m, true, m.fine().processor_cpu_time_seconds()); })
      .RowLabel("  CPU %")
      .RowText(PercentOneDecimal);
  b.Add(
       "processor_io_wait_percent", "Processor Off-CPU Share", "%", G::kFine,
       [](const M& m) { return If(Split(m), m.fine().processor_io_wait_percent()); },
       "Processor off-CPU time over processor thread time.")
      .Flat(kOriginal, kWith)
      .Row(
          SummaryTableId::kThreadTimeSplit, 8, ValueFormat::kOneDecimal,
          [](const M& m) { return RunQueueSplit(m) ? nullptr : "N/A"; },
          [](const M& m) {
            return ProcessorShare(m, !RunQueueSplit(m), m.fine().processor_io_wait_time_seconds());
          })
      .RowLabel("  Off CPU (not split) %")
      .RowText(PercentOneDecimal);
  b.Add(
       "overhead_cpu_time_seconds", "Overhead CPU Time", "s", G::kFine,
       [](const M& m) { return If(Split(m), m.fine().overhead_cpu_time_seconds()); },
       "CPU time outside the analysis code (engine, scheduling).")
      .Flat(kOriginal, kWith)
      .Row(SummaryTableId::kThreadTimeSplit, 9, ValueFormat::kDuration, nullptr,
           Positive<&v1::FineMetricsSummary::overhead_cpu_time_seconds>);
  b.Add(
       "overhead_io_wait_time_seconds", "Overhead Off-CPU Time", "s", G::kFine,
       [](const M& m) { return If(Split(m), m.fine().overhead_io_wait_time_seconds()); },
       "Off-CPU time outside the analysis code.")
      .Flat(kOriginal, kWith)
      .Row(SummaryTableId::kThreadTimeSplit, 10, ValueFormat::kDuration, nullptr,
           Positive<&v1::FineMetricsSummary::overhead_io_wait_time_seconds>)
      .RowLabel("Overhead Off-CPU Time (not split)");
  AddFineTotals(b);
}

// The fine totals that are no part of the split: overheads, disk, (de)compression and
// (de)serialization.
void AddFineTotals(Builder& b) {
  constexpr auto kWith = FlatPresence::kWithFine;
  using F = v1::FineMetricsSummary;
  // Each also a Thread Time Split row when positive: its rank, label and format there.
  struct Plain {
    const char* key;
    const char* label;
    const char* unit;
    MetricGetter value;
    const char* description;
    int rank;
    const char* row_label;
    MetricGetter row_value;
    bool bullet;
  };
  static const Plain kPlain[] = {
      {"disk_read_bytes", "Disk Read", "bytes",
       [](const M& m) { return If(m.has_fine(), m.fine().disk_read_bytes()); },
       "Bytes read from the disk device (page-cache misses).", 11,
       "Disk Read (from the device: page-cache misses)", Positive<&F::disk_read_bytes>, false},
      {"disk_write_bytes", "Disk Write", "bytes",
       [](const M& m) { return If(m.has_fine(), m.fine().disk_write_bytes()); },
       "Bytes written to the disk device.", 12, "Disk Write", Positive<&F::disk_write_bytes>,
       false},
      {"decompression_time_seconds", "Decompression Time", "s",
       [](const M& m) { return If(m.has_fine(), m.fine().decompression_time_seconds()); },
       "Time spent decompressing.", 15, "Decompress",
       PositiveUnder<&F::decompression_time_seconds, &F::total_compression_overhead_seconds>, true},
      {"compression_time_seconds", "Compression Time", "s",
       [](const M& m) { return If(m.has_fine(), m.fine().compression_time_seconds()); },
       "Time spent compressing.", 14, "Compress",
       PositiveUnder<&F::compression_time_seconds, &F::total_compression_overhead_seconds>, true},
      {"total_compression_overhead_seconds", "Compression Overhead", "s",
       [](const M& m) { return If(m.has_fine(), m.fine().total_compression_overhead_seconds()); },
       "Decompression plus compression time.", 13, "Compression Overhead",
       Positive<&F::total_compression_overhead_seconds>, false},
      {"deserialization_time_seconds", "Deserialization Time", "s",
       [](const M& m) { return If(m.has_fine(), m.fine().deserialization_time_seconds()); },
       "Time spent deserializing.", 18, "Deserialize",
       PositiveUnder<&F::deserialization_time_seconds, &F::total_serialization_overhead_seconds>,
       true},
      {"serialization_time_seconds", "Serialization Time", "s",
       [](const M& m) { return If(m.has_fine(), m.fine().serialization_time_seconds()); },
       "Time spent serializing.", 17, "Serialize",
       PositiveUnder<&F::serialization_time_seconds, &F::total_serialization_overhead_seconds>,
       true},
      {"total_serialization_overhead_seconds", "Serialization Overhead", "s",
       [](const M& m) { return If(m.has_fine(), m.fine().total_serialization_overhead_seconds()); },
       "Deserialization plus serialization time.", 16, "Serialization Overhead",
       Positive<&F::total_serialization_overhead_seconds>, false},
  };
  b.Add(
       "total_bytes_memory_read", "Memory Read (fine metrics)", "bytes", G::kFine,
       [](const M& m) { return If(m.has_fine(), m.fine().total_bytes_memory_read()); },
       "Bytes the engine read from memory (spilled or transferred data).")
      .Flat(kOriginal, kWith)
      .Row(SummaryTableId::kThroughput, 6, ValueFormat::kBytes, nullptr, [](const M& m) {
        return If(m.has_fine() && m.fine().total_bytes_memory_read() > 0.0,
                  m.fine().total_bytes_memory_read());
      });
  for (const Plain& plain : kPlain) {
    Entry entry =
        b.Add(plain.key, plain.label, plain.unit, G::kFine, plain.value, plain.description)
            .Flat(kOriginal, kWith)
            .Row(SummaryTableId::kThreadTimeSplit, plain.rank,
                 plain.unit == std::string("bytes") ? ValueFormat::kBytes : ValueFormat::kDuration,
                 nullptr, plain.row_value)
            .RowLabel(plain.row_label);
    if (plain.bullet) entry.Bulleted();
  }
}

// The original's chunk keys, present with chunk records.
void AddChunkStats(Builder& b);

void AddChunks(Builder& b) {
  b.Add(
       "num_successful_chunks", "Successful Chunks", "chunks", G::kChunks,
       [](const M& m) {
         return If(m.has_chunks(), static_cast<double>(m.chunks().num_successful_chunks()));
       },
       "Chunks that finished without an error.")
      .Flat(kOriginal, FlatPresence::kWithChunks)
      .Row(SummaryTableId::kChunks, 2, ValueFormat::kThousands, nullptr,
           [](const M& m) {
             return If(m.has_chunks() && m.chunks().num_failed_chunks() > 0,
                       static_cast<double>(m.chunks().num_successful_chunks()));
           })
      .RowLabel("Successful")
      .Bulleted()
      .Live();
  b.Add(
       "num_failed_chunks", "Failed Chunks", "chunks", G::kChunks,
       [](const M& m) {
         return If(m.has_chunks(), static_cast<double>(m.chunks().num_failed_chunks()));
       },
       "Chunks that ended in an error.")
      .Flat(kOriginal, FlatPresence::kWithChunks)
      .Row(SummaryTableId::kChunks, 3, ValueFormat::kThousands, nullptr,
           [](const M& m) {
             return If(m.has_chunks() && m.chunks().num_failed_chunks() > 0,
                       static_cast<double>(m.chunks().num_failed_chunks()));
           })
      .RowLabel("Failed")
      .Bulleted()
      .Direction(kLower)
      .Compared(23, "chunks")
      .Live();
  // The original emits statistics only when some chunk succeeded.
  b.Add("chunk_duration_mean", "Chunk Duration Mean", "s", G::kChunks,
        &Stat<&v1::ChunkMetrics::duration_seconds, &v1::DistributionStats::mean>,
        "Mean wall time of a successful chunk.")
      .Flat(kOriginal, FlatPresence::kWithDurationStats)
      .Direction(kLower, kFalls)
      .Compared(24, "s", 1.0,
                [](const M& m) {
                  return If(m.has_chunks() && m.chunks().duration_seconds().count() > 0,
                            m.chunks().duration_seconds().mean());
                })
      .Live();
  AddChunkStats(b);
}

// The original's chunk statistics (the Chunk Metrics rows among them).
void AddChunkStats(Builder& b) {
  struct StatKey {
    const char* key;
    const char* label;
    const char* unit;
    MetricGetter value;
    FlatPresence presence;
    const char* description;
  };
  using C = v1::ChunkMetrics;
  using D = v1::DistributionStats;
  constexpr auto kDurations = FlatPresence::kWithDurationStats;
  constexpr auto kMemory = FlatPresence::kWithMemoryStats;
  constexpr auto kEvents = FlatPresence::kWithEventStats;
  // The Chunk Metrics rows among these: memory deltas in bytes (a shared process's RSS said so),
  // event counts rounded.
  struct StatRow {
    const char* key;
    int rank;
    const char* label;
    MetricGetter value;
    ValueFormat format;
    bool bullet;
    RowFormatter text;
    RowLabeler label_from;
  };
  constexpr auto kBytes = ValueFormat::kBytes;
  constexpr auto kCount = ValueFormat::kRoundedCount;
  static const StatRow kStatRows[] = {
      {"chunk_mem_delta_mean_mb", 10, "Mean Memory Delta (process RSS)",
       &Known<&C::memory_delta_bytes, &D::mean>, kBytes, false, MemoryDeltaText, MemoryDeltaLabel},
      {"chunk_mem_delta_min_mb", 11, "Min", &Known<&C::memory_delta_bytes, &D::min>, kBytes, true,
       nullptr, nullptr},
      {"chunk_mem_delta_max_mb", 12, "Max", &Known<&C::memory_delta_bytes, &D::max>, kBytes, true,
       nullptr, nullptr},
      {"chunk_events_mean", 13, "Mean Events/Chunk", &Known<&C::events, &D::mean>, kCount, false,
       nullptr, nullptr},
      {"chunk_events_min", 14, "Min", &Known<&C::events, &D::min>, kCount, true, nullptr, nullptr},
      {"chunk_events_max", 15, "Max", &Known<&C::events, &D::max>, kCount, true, nullptr, nullptr},
  };
  static const StatKey kStats[] = {
      {"chunk_duration_min", "Chunk Duration Min", "s", &Stat<&C::duration_seconds, &D::min>,
       kDurations, "Shortest successful chunk."},
      {"chunk_duration_max", "Chunk Duration Max", "s", &Stat<&C::duration_seconds, &D::max>,
       kDurations, "Longest successful chunk."},
      {"chunk_duration_std", "Chunk Duration Std Dev", "s", &Stat<&C::duration_seconds, &D::std>,
       kDurations, "Standard deviation of the successful chunks' wall time."},
      {"chunk_mem_delta_mean_mb", "Chunk Memory Delta Mean", "MiB", &MemoryStat<&D::mean>, kMemory,
       "Mean memory growth over a chunk."},
      {"chunk_mem_delta_min_mb", "Chunk Memory Delta Min", "MiB", &MemoryStat<&D::min>, kMemory,
       "Smallest memory growth over a chunk."},
      {"chunk_mem_delta_max_mb", "Chunk Memory Delta Max", "MiB", &MemoryStat<&D::max>, kMemory,
       "Largest memory growth over a chunk."},
      {"chunk_mem_delta_std_mb", "Chunk Memory Delta Std Dev", "MiB", &MemoryStat<&D::std>, kMemory,
       "Standard deviation of the memory growth over a chunk."},
      {"total_events_from_chunks", "Total Events (chunk records)", "events",
       [](const M& m) {
         return If(true, static_cast<double>(m.chunks().total_events_from_chunks()));
       },
       kEvents, "Events of the successful chunks, from their records."},
      {"chunk_events_mean", "Chunk Events Mean", "events", &Stat<&C::events, &D::mean>, kEvents,
       "Mean events of a chunk."},
      {"chunk_events_min", "Chunk Events Min", "events", &Stat<&C::events, &D::min>, kEvents,
       "Fewest events of a chunk."},
      {"chunk_events_max", "Chunk Events Max", "events", &Stat<&C::events, &D::max>, kEvents,
       "Most events of a chunk."},
  };
  for (const StatKey& stat : kStats) {
    Entry entry = b.Add(stat.key, stat.label, stat.unit, G::kChunks, stat.value, stat.description)
                      .Flat(kOriginal, stat.presence);
    for (const StatRow& row : kStatRows) {
      if (row.key != std::string(stat.key)) continue;
      entry.Row(SummaryTableId::kChunks, row.rank, row.format, nullptr, row.value)
          .RowLabel(row.label);
      if (row.bullet) entry.Bulleted();
      if (row.text != nullptr) entry.RowText(row.text).RowLabelFrom(row.label_from);
    }
  }
}

// The original's branch-coverage summary keys (its per-file keys are families).
void AddBranches(Builder& b) {
  constexpr auto kWith = FlatPresence::kWithBranches;
  b.Add(
       "avg_branches_read_percent", "Branches Read (average)", "%", G::kBranches,
       [](const M& m) { return If(BranchesReported(m), m.branches().avg_branches_read_percent()); },
       "Share of a file's branches the analysis read, averaged over files.")
      .Flat(FlatPart::kOriginalBranchAverages, kWith);
  b.Add(
       "avg_bytes_read_percent", "Bytes Read of File (average)", "%", G::kBranches,
       [](const M& m) { return If(BranchesReported(m), m.branches().avg_bytes_read_percent()); },
       "Share of a file's bytes the analysis read, averaged over files.")
      .Flat(FlatPart::kOriginalBranchAverages, kWith);
  b.Add(
       "total_branches_read", "Branches Read", "branches", G::kBranches,
       [](const M& m) {
         return If(BranchesReported(m), static_cast<double>(m.branches().total_branches_read()));
       },
       "Distinct branches the analysis read.")
      .Flat(FlatPart::kOriginalBranchTotal, kWith);
}

}  // namespace

void AddOriginalMetrics(Builder& b) {
  AddWorkflow(b);
  AddWorkflowTotals(b);
  AddWorkers(b);
  AddEfficiency(b);
  AddFine(b);
  AddChunks(b);
  AddBranches(b);
}

}  // namespace catalogue_internal
}  // namespace roastcoffea
