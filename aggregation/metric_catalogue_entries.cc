#include "aggregation/metric_catalogue_entries.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace roastcoffea {
namespace {

using M = v1::AggregatedMetrics;
using G = MetricGroup;

// The original reports memory deltas in "MB" that are really MiB.
constexpr double kBytesPerMiB = 1024.0 * 1024.0;

std::optional<double> If(bool known, double value) {
  return known ? std::optional<double>(value) : std::nullopt;
}

bool Split(const M& m) { return m.has_fine() && HasThreadTimeSplit(m.fine()); }

// Branch averages are unknown when no file reported its branches.
bool BranchesReported(const M& m) {
  return m.has_branches() &&
         (m.branches().files_size() > 0 || m.branches().total_branches_read() > 0);
}

// A statistic of the chunk records: `Field` of the distribution `Stats`.
template <const v1::DistributionStats& (v1::ChunkMetrics::*Stats)() const,
          double (v1::DistributionStats::*Field)() const>
std::optional<double> Stat(const M& m) {
  return If(true, ((m.chunks().*Stats)().*Field)());
}

// A chunk memory-delta statistic in MiB.
template <double (v1::DistributionStats::*Field)() const>
std::optional<double> MemoryStat(const M& m) {
  return If(true, (m.chunks().memory_delta_bytes().*Field)() * (1.0 / kBytesPerMiB));
}

template <double (v1::Percentiles::*Field)() const>
std::optional<double> DurationPercentile(const M& m) {
  const v1::DistributionStats& d = m.chunks().duration_seconds();
  return If(d.has_percentiles(), (d.percentiles().*Field)());
}

// Chained setters on one entry of the catalogue being built.
class Entry {
 public:
  explicit Entry(MetricDef* def) : def_(def) {}
  Entry& Flat(FlatPart part, FlatPresence presence = FlatPresence::kAlways) {
    def_->flat = part;
    def_->presence = presence;
    return *this;
  }
  Entry& Direction(Better better, CoreTrend trend = CoreTrend::kSteady) {
    def_->better = better;
    def_->trend = trend;
    return *this;
  }
  Entry& Compared(int rank, std::string unit, double scale = 1.0, MetricGetter value = nullptr) {
    def_->compare_rank = rank;
    def_->compare_unit = std::move(unit);
    def_->compare_scale = scale;
    def_->compare_value = value;
    return *this;
  }
  Entry& Live() {
    def_->live = true;
    return *this;
  }

 private:
  MetricDef* def_;
};

class Builder {
 public:
  Entry Add(std::string key, std::string label, std::string unit, MetricGroup group,
            MetricGetter value, std::string description) {
    MetricDef def;
    def.key = std::move(key);
    def.label = std::move(label);
    def.unit = std::move(unit);
    def.group = group;
    def.value = value;
    def.description = std::move(description);
    metrics_->push_back(std::move(def));
    return Entry(&metrics_->back());
  }
  explicit Builder(std::vector<MetricDef>* metrics) : metrics_(metrics) {}

 private:
  std::vector<MetricDef>* metrics_;
};

constexpr auto kHigher = Better::kHigher;
constexpr auto kLower = Better::kLower;
constexpr auto kFalls = CoreTrend::kFallsWithCores;
constexpr auto kGains = CoreTrend::kGainsWithCores;
constexpr auto kHeadline = FlatPart::kHeadline;
constexpr auto kOriginal = FlatPart::kOriginal;
constexpr auto kAddition = FlatPart::kAddition;
constexpr auto kChunkAddition = FlatPart::kChunkAddition;

// Measured CPU (aggregation/cpu_metrics.h): the first flat keys.
void AddHeadline(Builder& b) {
  b.Add(
       "cpu_efficiency", "CPU Efficiency", "fraction", G::kCpu,
       [](const M& m) {
         return If(m.cpu().has_cpu_efficiency_fraction(), m.cpu().cpu_efficiency_fraction());
       },
       "Measured CPU time over the core-seconds the workers had.")
      .Flat(kHeadline)
      .Direction(kHigher, kFalls)
      .Compared(1, "%", 100.0)
      .Live();
  b.Add(
       "cpu_seconds", "CPU Time (measured)", "s", G::kCpu,
       [](const M& m) { return If(m.cpu().has_cpu_seconds(), m.cpu().cpu_seconds()); },
       "CPU time the run used, measured by the source named in cpu_source.")
      .Flat(kHeadline)
      .Compared(2, "s")
      .Live();
  b.Add(
       "core_seconds_available", "Core-Seconds Available", "core*s", G::kCpu,
       [](const M& m) {
         return If(m.cpu().has_core_seconds_available(), m.cpu().core_seconds_available());
       },
       "Cores the workers had, integrated over the run.")
      .Flat(kHeadline);
  b.Add(
       "usable_cores", "Usable Cores (average)", "cores", G::kCpu,
       [](const M& m) { return If(m.cpu().has_usable_cores(), m.cpu().usable_cores()); },
       "Core-seconds available over the elapsed time.")
      .Flat(kHeadline)
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
      .Direction(kHigher, kFalls)
      .Compared(11, "kHz")
      .Live();
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
      .Compared(14, "s");
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
      .Direction(kHigher, kFalls)
      .Compared(12, "kHz", 1.0, [](const M& m) {
        return If(m.workflow().has_summed_chunk_wall_seconds() &&
                      m.workflow().has_event_rate_cpu_total_khz(),
                  m.workflow().event_rate_cpu_total_khz());
      });
  b.Add(
       "elapsed_time_seconds", "Elapsed Time", "s", G::kWorkflow,
       [](const M& m) { return If(true, m.workflow().elapsed_time_seconds()); },
       "Wall time from the run's start to its end.")
      .Flat(kOriginal)
      .Direction(kLower, kGains)
      .Compared(4, "s")
      .Live();
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
      .Compared(7, "MiB", 1.0 / kBytesPerMiB)
      .Live();
}

// The original's worker keys, present with worker tracking.
void AddWorkers(Builder& b) {
  constexpr auto kWith = FlatPresence::kWithWorkers;
  b.Add(
       "avg_workers", "Workers (Time-Averaged)", "workers", G::kWorkers,
       [](const M& m) { return If(m.has_workers(), m.workers().avg_workers()); },
       "Workers connected, averaged over the elapsed time.")
      .Flat(kOriginal, kWith)
      .Live();
  b.Add(
       "peak_workers", "Peak Workers", "workers", G::kWorkers,
       [](const M& m) {
         return If(m.has_workers(), static_cast<double>(m.workers().peak_workers()));
       },
       "Most workers connected at once.")
      .Flat(kOriginal, kWith)
      .Live();
  b.Add(
       "total_cores", "Total Cores", "cores", G::kWorkers,
       [](const M& m) {
         return If(m.has_workers() && m.workers().has_total_cores(), m.workers().total_cores());
       },
       "Cores of the workers ever seen.")
      .Flat(kOriginal, kWith)
      .Compared(15, "cores")
      .Live();
  b.Add(
       "cores_per_worker", "Cores per Worker", "cores", G::kWorkers,
       [](const M& m) {
         return If(m.has_workers() && m.workers().has_cores_per_worker(),
                   m.workers().cores_per_worker());
       },
       "Cores of one worker (on average).")
      .Flat(kOriginal, kWith);
  b.Add(
       "peak_memory_bytes", "Peak Memory", "bytes", G::kWorkers,
       [](const M& m) { return If(m.has_workers(), m.workers().peak_memory_bytes()); },
       "Largest memory use of a worker (or of the process for a thread pool); 0: not measured.")
      .Flat(kOriginal, kWith)
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
      .Direction(kHigher, kFalls)
      .Compared(13, "kHz/core", 1.0, [](const M& m) {
        return If(m.workflow().has_total_events() && m.efficiency().has_event_rate_core_khz(),
                  m.efficiency().event_rate_core_khz());
      });
}
// The original's fine-metric keys, present with fine metrics. The CPU / off-CPU split exists
// only where the engine splits thread time; elsewhere (TaskVine, Dask before 2023) it is
// unknown, not 0.
void AddFine(Builder& b) {
  constexpr auto kWith = FlatPresence::kWithFine;
  b.Add(
       "processor_cpu_time_seconds", "Processor CPU Time", "s", G::kFine,
       [](const M& m) { return If(Split(m), m.fine().processor_cpu_time_seconds()); },
       "CPU time of the analysis code's threads.")
      .Flat(kOriginal, kWith)
      .Compared(28, "s");
  b.Add(
       "processor_io_wait_time_seconds", "Processor Off-CPU Time", "s", G::kFine,
       [](const M& m) { return If(Split(m), m.fine().processor_io_wait_time_seconds()); },
       "Time the analysis code's threads were off CPU (the original's 'I/O wait').")
      .Flat(kOriginal, kWith)
      .Direction(kLower, kFalls)
      .Compared(29, "s");
  b.Add(
       "processor_cpu_percent", "Processor CPU Share", "%", G::kFine,
       [](const M& m) { return If(Split(m), m.fine().processor_cpu_percent()); },
       "Processor CPU time over processor thread time.")
      .Flat(kOriginal, kWith);
  b.Add(
       "processor_io_wait_percent", "Processor Off-CPU Share", "%", G::kFine,
       [](const M& m) { return If(Split(m), m.fine().processor_io_wait_percent()); },
       "Processor off-CPU time over processor thread time.")
      .Flat(kOriginal, kWith);
  b.Add(
       "overhead_cpu_time_seconds", "Overhead CPU Time", "s", G::kFine,
       [](const M& m) { return If(Split(m), m.fine().overhead_cpu_time_seconds()); },
       "CPU time outside the analysis code (engine, scheduling).")
      .Flat(kOriginal, kWith);
  b.Add(
       "overhead_io_wait_time_seconds", "Overhead Off-CPU Time", "s", G::kFine,
       [](const M& m) { return If(Split(m), m.fine().overhead_io_wait_time_seconds()); },
       "Off-CPU time outside the analysis code.")
      .Flat(kOriginal, kWith);
  struct Plain {
    const char* key;
    const char* label;
    const char* unit;
    MetricGetter value;
    const char* description;
  };
  static const Plain kPlain[] = {
      {"total_bytes_memory_read", "Memory Read (fine metrics)", "bytes",
       [](const M& m) { return If(m.has_fine(), m.fine().total_bytes_memory_read()); },
       "Bytes the engine read from memory (spilled or transferred data)."},
      {"disk_read_bytes", "Disk Read", "bytes",
       [](const M& m) { return If(m.has_fine(), m.fine().disk_read_bytes()); },
       "Bytes read from the disk device (page-cache misses)."},
      {"disk_write_bytes", "Disk Write", "bytes",
       [](const M& m) { return If(m.has_fine(), m.fine().disk_write_bytes()); },
       "Bytes written to the disk device."},
      {"decompression_time_seconds", "Decompression Time", "s",
       [](const M& m) { return If(m.has_fine(), m.fine().decompression_time_seconds()); },
       "Time spent decompressing."},
      {"compression_time_seconds", "Compression Time", "s",
       [](const M& m) { return If(m.has_fine(), m.fine().compression_time_seconds()); },
       "Time spent compressing."},
      {"total_compression_overhead_seconds", "Compression Overhead", "s",
       [](const M& m) { return If(m.has_fine(), m.fine().total_compression_overhead_seconds()); },
       "Decompression plus compression time."},
      {"deserialization_time_seconds", "Deserialization Time", "s",
       [](const M& m) { return If(m.has_fine(), m.fine().deserialization_time_seconds()); },
       "Time spent deserializing."},
      {"serialization_time_seconds", "Serialization Time", "s",
       [](const M& m) { return If(m.has_fine(), m.fine().serialization_time_seconds()); },
       "Time spent serializing."},
      {"total_serialization_overhead_seconds", "Serialization Overhead", "s",
       [](const M& m) { return If(m.has_fine(), m.fine().total_serialization_overhead_seconds()); },
       "Deserialization plus serialization time."},
  };
  for (const Plain& plain : kPlain) {
    b.Add(plain.key, plain.label, plain.unit, G::kFine, plain.value, plain.description)
        .Flat(kOriginal, kWith);
  }
}

// The original's chunk keys, present with chunk records.
void AddChunks(Builder& b) {
  b.Add(
       "num_successful_chunks", "Successful Chunks", "chunks", G::kChunks,
       [](const M& m) {
         return If(m.has_chunks(), static_cast<double>(m.chunks().num_successful_chunks()));
       },
       "Chunks that finished without an error.")
      .Flat(kOriginal, FlatPresence::kWithChunks)
      .Live();
  b.Add(
       "num_failed_chunks", "Failed Chunks", "chunks", G::kChunks,
       [](const M& m) {
         return If(m.has_chunks(), static_cast<double>(m.chunks().num_failed_chunks()));
       },
       "Chunks that ended in an error.")
      .Flat(kOriginal, FlatPresence::kWithChunks)
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
    b.Add(stat.key, stat.label, stat.unit, G::kChunks, stat.value, stat.description)
        .Flat(kOriginal, stat.presence);
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
      .Flat(kAddition, kKnown);
  b.Add(
       "compression_factor", "Compression Factor", "x", G::kWorkflow,
       [](const M& m) {
         return If(m.workflow().has_compression_factor(), m.workflow().compression_factor());
       },
       "Uncompressed bytes over compressed bytes read.")
      .Flat(kAddition, kKnown);
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
      .Direction(kLower)
      .Compared(9, "x");
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
      .Flat(kAddition, kWorkers);
  b.Add(
       "avg_cores_over_window", "Cores (Time-Averaged)", "cores", G::kWorkers,
       [](const M& m) {
         return If(m.has_workers() && m.workers().has_avg_cores_over_window(),
                   m.workers().avg_cores_over_window());
       },
       "Cores of the tracked workers averaged over the window.")
      .Flat(kAddition, kWorkers)
      .Live();
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
      .Flat(kAddition, kKnown);
}

// Our keys from chunk records: retries, live memory, percentiles, time per event.
void AddChunkAdditions(Builder& b) {
  constexpr auto kKnown = FlatPresence::kWhenKnown;
  b.Add(
       "num_retried_chunks", "Retried Chunks", "chunks", G::kChunks,
       [](const M& m) {
         return If(m.has_chunks(), static_cast<double>(m.chunks().num_retried_chunks()));
       },
       "Chunks that were run again after a failure.")
      .Flat(kChunkAddition, FlatPresence::kWithChunks);
  b.Add(
       "chunk_peak_live_bytes_mean", "Chunk Peak Live Memory Mean", "bytes", G::kChunks,
       [](const M& m) {
         return If(m.chunks().peak_live_bytes().count() > 0, m.chunks().peak_live_bytes().mean());
       },
       "Mean of the chunks' peak live heap bytes.")
      .Flat(kChunkAddition, kKnown);
  b.Add(
       "chunk_peak_live_bytes_max", "Chunk Peak Live Memory Max", "bytes", G::kChunks,
       [](const M& m) {
         return If(m.chunks().peak_live_bytes().count() > 0, m.chunks().peak_live_bytes().max());
       },
       "Largest peak live heap bytes of a chunk.")
      .Flat(kChunkAddition, kKnown);
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
  b.Add(
       "time_per_event_mean", "Time per Event Mean", "s", G::kChunks,
       [](const M& m) {
         const v1::DistributionStats& t = m.chunks().time_per_event_seconds();
         return If(t.count() > 0, t.mean());
       },
       "Mean of the chunks' wall time per event.")
      .Flat(kChunkAddition, kKnown);
  b.Add(
       "time_per_event_p50", "Time per Event p50", "s", G::kChunks,
       [](const M& m) {
         const v1::DistributionStats& t = m.chunks().time_per_event_seconds();
         return If(t.count() > 0 && t.has_percentiles(), t.percentiles().p50());
       },
       "Median of the chunks' wall time per event.")
      .Flat(kChunkAddition, kKnown);
  b.Add(
       "time_per_event_p99", "Time per Event p99", "s", G::kChunks,
       [](const M& m) {
         const v1::DistributionStats& t = m.chunks().time_per_event_seconds();
         return If(t.count() > 0 && t.has_percentiles(), t.percentiles().p99());
       },
       "99th percentile of the chunks' wall time per event.")
      .Flat(kChunkAddition, kKnown);
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
      .Compared(17, "%");
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

std::vector<MetricDef> BuiltInMetrics() {
  std::vector<MetricDef> metrics;
  Builder builder(&metrics);
  AddHeadline(builder);
  AddWorkflow(builder);
  AddWorkers(builder);
  AddEfficiency(builder);
  AddFine(builder);
  AddChunks(builder);
  AddBranches(builder);
  AddAdditions(builder);
  AddChunkAdditions(builder);
  AddCompareOnly(builder);
  return metrics;
}

}  // namespace roastcoffea
