// ToFlatMetrics: the original tool's flat key names, units and order (docs/reference.md §2.1-§2.6).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "aggregation/aggregate.h"

namespace roastcoffea {
namespace {

// The original reports memory deltas in "MB" that are really MiB.
constexpr double kBytesPerMiB = 1024.0 * 1024.0;

class FlatMetricsBuilder {
 public:
  void Add(std::string key, std::optional<double> value, std::string unit) {
    metrics_.push_back({std::move(key), value, std::move(unit)});
  }
  void AddStats(const std::string& prefix, const std::string& suffix,
                const v1::DistributionStats& stats, double scale, const std::string& unit,
                bool with_std) {
    Add(absl::StrCat(prefix, "mean", suffix), stats.mean() * scale, unit);
    Add(absl::StrCat(prefix, "min", suffix), stats.min() * scale, unit);
    Add(absl::StrCat(prefix, "max", suffix), stats.max() * scale, unit);
    if (with_std) Add(absl::StrCat(prefix, "std", suffix), stats.std() * scale, unit);
  }
  std::vector<FlatMetric> Release() { return std::move(metrics_); }

 private:
  std::vector<FlatMetric> metrics_;
};

std::optional<double> Optional(bool has, double value) {
  return has ? std::optional<double>(value) : std::nullopt;
}

// The last `components` path components of `file` ("f.root", "x/f.root"), or all of it.
std::string PathTail(absl::string_view file, int components) {
  size_t cut = file.size();
  for (int i = 0; i < components; ++i) {
    if (cut == 0) return std::string(file);
    const size_t slash = file.rfind('/', cut - 1);
    if (slash == absl::string_view::npos) return std::string(file);
    cut = slash;
  }
  return std::string(file.substr(cut + 1));
}

// Per-file keys name a file by its base name, with as many parent directories as it takes to
// tell it from the other files of the run: keys stay short and do not depend on where the run's
// input was mounted, yet never merge two files.
absl::flat_hash_map<std::string, std::string> ShortFileNames(const v1::AggregatedMetrics& m) {
  std::vector<std::string> files;
  if (m.has_chunks()) {
    for (const v1::ChunkInfo& info : m.chunks().chunk_info()) files.push_back(info.file());
  }
  if (m.has_branches()) {
    for (const v1::FileReadMetrics& file : m.branches().files()) files.push_back(file.file());
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  absl::flat_hash_map<std::string, std::string> names;
  std::vector<const std::string*> pending;
  for (const std::string& file : files) pending.push_back(&file);
  for (int components = 1; !pending.empty(); ++components) {
    absl::flat_hash_map<std::string, int> uses;
    for (const std::string* file : pending) ++uses[PathTail(*file, components)];
    std::vector<const std::string*> still;
    for (const std::string* file : pending) {
      std::string tail = PathTail(*file, components);
      // A tail that is the whole path is unique among distinct paths.
      if (uses[tail] == 1 || tail == *file) {
        names[*file] = std::move(tail);
      } else {
        still.push_back(file);
      }
    }
    pending.swap(still);
  }
  return names;
}

}  // namespace

bool HasThreadTimeSplit(const v1::FineMetricsSummary& fine) {
  if (fine.by_task_prefix().empty()) {
    // A summary without its accounting (the original tool's metrics.json): its own values say.
    return fine.processor_cpu_time_seconds() + fine.processor_io_wait_time_seconds() +
               fine.overhead_cpu_time_seconds() + fine.overhead_io_wait_time_seconds() >
           0.0;
  }
  for (const v1::ActivityTotal& total : fine.by_task_prefix()) {
    if (total.activity() == "thread-cpu" || total.activity() == "thread-noncpu") return true;
  }
  return false;
}

std::vector<FlatMetric> ToFlatMetrics(const v1::AggregatedMetrics& metrics) {
  FlatMetricsBuilder flat;
  absl::flat_hash_map<std::string, std::string> file_names = ShortFileNames(metrics);
  const v1::WorkflowMetrics& workflow = metrics.workflow();
  // Chunk records override the report's chunk count, in the same slot (a dict update).
  const int64_t num_chunks =
      metrics.has_chunks() ? metrics.chunks().num_chunks() : workflow.num_chunks();
  // Unknown values (no report, bytes not counted) are nullopt: None in the original's terms,
  // empty or null in the flat formats, never 0.
  flat.Add("data_rate_gbps", Optional(workflow.has_data_rate_gbps(), workflow.data_rate_gbps()),
           "Gbps");
  flat.Add("total_events",
           Optional(workflow.has_total_events(), static_cast<double>(workflow.total_events())),
           "events");
  flat.Add("event_rate_elapsed_khz",
           Optional(workflow.has_event_rate_elapsed_khz(), workflow.event_rate_elapsed_khz()),
           "kHz");
  flat.Add("event_rate_cpu_total_khz",
           Optional(workflow.has_event_rate_cpu_total_khz(), workflow.event_rate_cpu_total_khz()),
           "kHz");
  flat.Add("elapsed_time_seconds", workflow.elapsed_time_seconds(), "s");
  flat.Add("total_cpu_time",
           Optional(workflow.has_total_cpu_time_seconds(), workflow.total_cpu_time_seconds()), "s");
  flat.Add("num_chunks", static_cast<double>(num_chunks), "chunks");
  flat.Add("avg_cpu_time_per_chunk",
           Optional(workflow.has_avg_cpu_time_per_chunk_seconds(),
                    workflow.avg_cpu_time_per_chunk_seconds()),
           "s");
  flat.Add(
      "total_bytes_read",
      Optional(workflow.has_total_bytes_read(), static_cast<double>(workflow.total_bytes_read())),
      "bytes");

  if (metrics.has_workers()) {
    const v1::WorkerMetrics& workers = metrics.workers();
    flat.Add("avg_workers", workers.avg_workers(), "workers");
    flat.Add("peak_workers", workers.peak_workers(), "workers");
    flat.Add("total_cores", Optional(workers.has_total_cores(), workers.total_cores()), "cores");
    flat.Add("cores_per_worker",
             Optional(workers.has_cores_per_worker(), workers.cores_per_worker()), "cores");
    flat.Add("peak_memory_bytes", workers.peak_memory_bytes(), "bytes");
    flat.Add("avg_memory_per_worker_bytes", workers.avg_memory_per_worker_bytes(), "bytes");
  }

  const v1::EfficiencyMetrics& efficiency = metrics.efficiency();
  flat.Add(
      "core_efficiency",
      Optional(efficiency.has_core_efficiency_fraction(), efficiency.core_efficiency_fraction()),
      "fraction");
  flat.Add("speedup_factor", Optional(efficiency.has_speedup_factor(), efficiency.speedup_factor()),
           "x");
  flat.Add("event_rate_core_khz",
           Optional(efficiency.has_event_rate_core_khz(), efficiency.event_rate_core_khz()),
           "kHz/core");

  if (metrics.has_fine()) {
    const v1::FineMetricsSummary& fine = metrics.fine();
    // The CPU / I/O-and-wait split exists only where the engine splits thread time
    // (thread-cpu, thread-noncpu); elsewhere (TaskVine, Dask before 2023) it is unknown, not 0.
    const bool split = HasThreadTimeSplit(fine);
    flat.Add("processor_cpu_time_seconds", Optional(split, fine.processor_cpu_time_seconds()), "s");
    flat.Add("processor_io_wait_time_seconds",
             Optional(split, fine.processor_io_wait_time_seconds()), "s");
    flat.Add("processor_cpu_percent", Optional(split, fine.processor_cpu_percent()), "%");
    flat.Add("processor_io_wait_percent", Optional(split, fine.processor_io_wait_percent()), "%");
    flat.Add("overhead_cpu_time_seconds", Optional(split, fine.overhead_cpu_time_seconds()), "s");
    flat.Add("overhead_io_wait_time_seconds", Optional(split, fine.overhead_io_wait_time_seconds()),
             "s");
    flat.Add("total_bytes_memory_read", fine.total_bytes_memory_read(), "bytes");
    flat.Add("disk_read_bytes", fine.disk_read_bytes(), "bytes");
    flat.Add("disk_write_bytes", fine.disk_write_bytes(), "bytes");
    flat.Add("decompression_time_seconds", fine.decompression_time_seconds(), "s");
    flat.Add("compression_time_seconds", fine.compression_time_seconds(), "s");
    flat.Add("total_compression_overhead_seconds", fine.total_compression_overhead_seconds(), "s");
    flat.Add("deserialization_time_seconds", fine.deserialization_time_seconds(), "s");
    flat.Add("serialization_time_seconds", fine.serialization_time_seconds(), "s");
    flat.Add("total_serialization_overhead_seconds", fine.total_serialization_overhead_seconds(),
             "s");
  }

  if (metrics.has_chunks()) {
    const v1::ChunkMetrics& chunks = metrics.chunks();
    flat.Add("num_successful_chunks", static_cast<double>(chunks.num_successful_chunks()),
             "chunks");
    flat.Add("num_failed_chunks", static_cast<double>(chunks.num_failed_chunks()), "chunks");
    // The original emits statistics only when some chunk succeeded.
    if (chunks.has_duration_seconds()) {
      flat.AddStats("chunk_duration_", "", chunks.duration_seconds(), 1.0, "s", true);
    }
    if (chunks.has_memory_delta_bytes()) {
      flat.AddStats("chunk_mem_delta_", "_mb", chunks.memory_delta_bytes(), 1.0 / kBytesPerMiB,
                    "MiB", true);
    }
    if (chunks.has_events()) {
      flat.Add("total_events_from_chunks", static_cast<double>(chunks.total_events_from_chunks()),
               "events");
      flat.AddStats("chunk_events_", "", chunks.events(), 1.0, "events", false);
    }
    for (const v1::DatasetChunkMetrics& dataset : chunks.per_dataset()) {
      const std::string prefix = absl::StrCat("per_dataset.", dataset.dataset(), ".");
      flat.Add(absl::StrCat(prefix, "num_chunks"), static_cast<double>(dataset.num_chunks()),
               "chunks");
      flat.Add(absl::StrCat(prefix, "total_duration"), dataset.total_duration_seconds(), "s");
      flat.Add(absl::StrCat(prefix, "total_events"), static_cast<double>(dataset.total_events()),
               "events");
      flat.Add(absl::StrCat(prefix, "mean_duration"), dataset.mean_duration_seconds(), "s");
      if (dataset.has_mean_events_per_chunk()) {
        flat.Add(absl::StrCat(prefix, "mean_events_per_chunk"), dataset.mean_events_per_chunk(),
                 "events");
      }
    }
    // A name used with two kinds (a timer and a memory scope of the same name) would give the
    // same keys twice: those names get their kind in the key, "sections.<name>_<type>." (no
    // spaces or parentheses: keys are identifiers for scripts).
    absl::flat_hash_map<std::string, int> kinds_per_name;
    for (const v1::SectionSummary& section : chunks.sections()) ++kinds_per_name[section.name()];
    for (const v1::SectionSummary& section : chunks.sections()) {
      const std::string prefix =
          kinds_per_name[section.name()] > 1
              ? absl::StrCat("sections.", section.name(), "_", section.type(), ".")
              : absl::StrCat("sections.", section.name(), ".");
      flat.Add(absl::StrCat(prefix, "count"), static_cast<double>(section.count()), "entries");
      flat.Add(absl::StrCat(prefix, "total_duration"), section.total_duration_seconds(), "s");
      flat.Add(absl::StrCat(prefix, "mean_duration"), section.mean_duration_seconds(), "s");
      if (section.has_mean_memory_delta_bytes()) {
        flat.Add(absl::StrCat(prefix, "mean_mem_delta_mb"),
                 section.mean_memory_delta_bytes() / kBytesPerMiB, "MiB");
        flat.Add(absl::StrCat(prefix, "max_mem_delta_mb"),
                 section.max_memory_delta_bytes() / kBytesPerMiB, "MiB");
        flat.Add(absl::StrCat(prefix, "min_mem_delta_mb"),
                 section.min_memory_delta_bytes() / kBytesPerMiB, "MiB");
      }
    }
    for (const v1::ChunkInfo& info : chunks.chunk_info()) {
      // The original's epoch seconds; retries get their own key instead of overwriting.
      const std::string prefix = absl::StrCat(
          "chunk_info.", file_names[info.file()], ":", info.entry_start(), ":", info.entry_stop(),
          info.attempt() > 0 ? absl::StrCat("#", info.attempt()) : "", ".");
      flat.Add(absl::StrCat(prefix, "t_start"), static_cast<double>(info.start_unix_ns()) * 1e-9,
               "s");
      flat.Add(absl::StrCat(prefix, "t_end"), static_cast<double>(info.end_unix_ns()) * 1e-9, "s");
      flat.Add(absl::StrCat(prefix, "bytes_read"), static_cast<double>(info.bytes_read()), "bytes");
    }
  }

  if (metrics.has_branches()) {
    const v1::BranchCoverage& branches = metrics.branches();
    for (const v1::FileReadMetrics& file : branches.files()) {
      const std::string meta = absl::StrCat("file_metadata.", file_names[file.file()], ".");
      flat.Add(absl::StrCat(meta, "compression_ratio"), file.compression_ratio(), "ratio");
      flat.Add(absl::StrCat(meta, "total_branches"), static_cast<double>(file.total_branches()),
               "branches");
      flat.Add(absl::StrCat(meta, "total_tree_bytes"), static_cast<double>(file.total_tree_bytes()),
               "bytes");
      const std::string read = absl::StrCat("file_read_metrics.", file_names[file.file()], ".");
      flat.Add(absl::StrCat(read, "total_branches"), static_cast<double>(file.total_branches()),
               "branches");
      flat.Add(absl::StrCat(read, "total_tree_bytes"), static_cast<double>(file.total_tree_bytes()),
               "bytes");
      flat.Add(absl::StrCat(read, "branches_read_percent"), file.branches_read_percent(), "%");
      flat.Add(absl::StrCat(read, "bytes_read"), static_cast<double>(file.bytes_read()), "bytes");
      flat.Add(absl::StrCat(read, "bytes_read_percent"), file.bytes_read_percent(), "%");
    }
    for (int i = 0; i < branches.compression_ratios_size(); ++i) {
      flat.Add(absl::StrCat("compression_ratios.", i), branches.compression_ratios(i), "ratio");
    }
    // No file reported its branches (an analysis that does not record branch access): the
    // averages and the count are unknown, empty in the flat formats, not 0.
    const bool reported = branches.files_size() > 0 || branches.total_branches_read() > 0;
    flat.Add("avg_branches_read_percent", Optional(reported, branches.avg_branches_read_percent()),
             "%");
    flat.Add("avg_bytes_read_percent", Optional(reported, branches.avg_bytes_read_percent()), "%");
    for (int i = 0; i < branches.bytes_read_percent_per_file_size(); ++i) {
      flat.Add(absl::StrCat("bytes_read_percent_per_file.", i),
               branches.bytes_read_percent_per_file(i), "%");
    }
    flat.Add("total_branches_read",
             Optional(reported, static_cast<double>(branches.total_branches_read())), "branches");
  }
  return flat.Release();
}

}  // namespace roastcoffea
