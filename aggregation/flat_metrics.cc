// ToFlatMetrics: the original tool's flat key names, units and order (docs/reference.md §2.1-§2.6):
// its scalar keys come from the metric catalogue (metric_catalogue_entries.cc), its per-name
// families (per dataset, section, chunk, file) from here.
#include "aggregation/flat_metrics.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "aggregation/aggregate.h"
#include "aggregation/metric_catalogue.h"

namespace roastcoffea {
namespace {

// The original reports memory deltas in "MB" that are really MiB.
constexpr double kBytesPerMiB = 1024.0 * 1024.0;

// Hands per-name keys to a sink, one at a time.
class FlatMetricsBuilder {
 public:
  explicit FlatMetricsBuilder(absl::FunctionRef<void(FlatMetric&&)> sink) : sink_(sink) {}
  void Add(std::string key, double value, std::string unit) {
    sink_(FlatMetric{std::move(key), value, std::move(unit)});
  }
  // The catalogue's keys of `part`.
  void AddPart(const v1::AggregatedMetrics& metrics, FlatPart part) {
    std::vector<FlatMetric> keys;
    AppendFlatPart(metrics, part, &keys);
    for (FlatMetric& key : keys) sink_(std::move(key));
  }

 private:
  absl::FunctionRef<void(FlatMetric&&)> sink_;
};

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
// input was mounted, yet never merge two files. Each chunk_info entry's file is looked up here
// once: the keys are then made without hashing its name again.
std::vector<std::string> ShortFileNames(const std::vector<absl::string_view>& files) {
  std::vector<std::string> short_names(files.size());
  std::vector<uint32_t> pending(files.size());
  for (uint32_t i = 0; i < pending.size(); ++i) pending[i] = i;
  for (int components = 1; !pending.empty(); ++components) {
    absl::flat_hash_map<std::string, int> uses;
    for (uint32_t file : pending) ++uses[PathTail(files[file], components)];
    std::vector<uint32_t> still;
    for (uint32_t file : pending) {
      std::string tail = PathTail(files[file], components);
      // A tail that is the whole path is unique among distinct paths.
      if (uses[tail] == 1 || tail == files[file]) {
        short_names[file] = std::move(tail);
      } else {
        still.push_back(file);
      }
    }
    pending.swap(still);
  }
  return short_names;
}

}  // namespace

FlatFileNames::FlatFileNames(const v1::AggregatedMetrics& m) : chunk_info_rows_(m.chunks()) {
  std::vector<absl::string_view> files;
  const auto place = [&](absl::string_view file) {
    const auto [it, added] = index_.try_emplace(file, static_cast<uint32_t>(files.size()));
    if (added) files.push_back(file);
    return it->second;
  };
  chunk_info_file_.reserve(chunk_info_rows_.num_files());
  for (uint32_t file = 0; file < chunk_info_rows_.num_files(); ++file) {
    chunk_info_file_.push_back(place(chunk_info_rows_.file_name(file)));
  }
  if (m.has_branches()) {
    for (const v1::FileReadMetrics& file : m.branches().files()) place(file.file());
  }
  short_names_ = ShortFileNames(files);
}

const std::string& FlatFileNames::Of(absl::string_view file) const {
  static const std::string kNoName;
  const auto it = index_.find(file);
  return it != index_.end() ? short_names_[it->second] : kNoName;
}

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

namespace {

// The original's per-name keys of the chunk records per dataset and per section (those per
// chunk are ChunkInfoKeys).
void AddChunkFamilies(const v1::ChunkMetrics& chunks, FlatMetricsBuilder& flat) {
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
}

// The original's per-file keys of branch coverage, and its compression ratios.
void AddFileFamilies(const v1::BranchCoverage& branches, const FlatFileNames& file_names,
                     FlatMetricsBuilder& flat) {
  for (const v1::FileReadMetrics& file : branches.files()) {
    const std::string meta = absl::StrCat("file_metadata.", file_names.Of(file.file()), ".");
    flat.Add(absl::StrCat(meta, "compression_ratio"), file.compression_ratio(), "ratio");
    flat.Add(absl::StrCat(meta, "total_branches"), static_cast<double>(file.total_branches()),
             "branches");
    flat.Add(absl::StrCat(meta, "total_tree_bytes"), static_cast<double>(file.total_tree_bytes()),
             "bytes");
    const std::string read = absl::StrCat("file_read_metrics.", file_names.Of(file.file()), ".");
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
}

}  // namespace

// The catalogue's keys of the original (metric_catalogue_entries.cc), with its per-name
// families where the original puts them.
std::vector<FlatMetric> ToFlatMetrics(const v1::AggregatedMetrics& metrics) {
  std::vector<FlatMetric> out;
  ForEachFlatMetric(metrics, [&out](FlatMetric&& metric) { out.push_back(std::move(metric)); });
  return out;
}

void ForEachFlatMetric(const v1::AggregatedMetrics& metrics,
                       absl::FunctionRef<void(FlatMetric&&)> sink) {
  std::string prefix;  // reused: 10^6 records make 3 x 10^6 keys
  ForEachFlatMetric(metrics, FlatFileNames(metrics), sink, [&](const ChunkInfoKeys& keys) {
    for (size_t entry = 0; entry < keys.size(); ++entry) {
      prefix.clear();
      keys.AppendPrefix(entry, &prefix);
      for (int figure = 0; figure < ChunkInfoKeys::kFigures; ++figure) {
        const absl::string_view name = ChunkInfoKeys::FigureName(figure);
        std::string key;
        key.reserve(prefix.size() + name.size());
        key.append(prefix).append(name.data(), name.size());
        sink(FlatMetric{std::move(key), keys.Value(entry, figure),
                        std::string(ChunkInfoKeys::FigureUnit(figure))});
      }
    }
  });
}

void ForEachFlatMetric(const v1::AggregatedMetrics& metrics, const FlatFileNames& file_names,
                       absl::FunctionRef<void(FlatMetric&&)> sink,
                       absl::FunctionRef<void(const ChunkInfoKeys&)> chunk_info) {
  FlatMetricsBuilder flat(sink);
  flat.AddPart(metrics, FlatPart::kOriginal);
  if (metrics.has_chunks()) {
    AddChunkFamilies(metrics.chunks(), flat);
    chunk_info(ChunkInfoKeys(file_names));
  }
  if (!metrics.has_branches()) return;
  const v1::BranchCoverage& branches = metrics.branches();
  AddFileFamilies(branches, file_names, flat);
  flat.AddPart(metrics, FlatPart::kOriginalBranchAverages);
  for (int i = 0; i < branches.bytes_read_percent_per_file_size(); ++i) {
    flat.Add(absl::StrCat("bytes_read_percent_per_file.", i),
             branches.bytes_read_percent_per_file(i), "%");
  }
  flat.AddPart(metrics, FlatPart::kOriginalBranchTotal);
}

absl::string_view ChunkInfoKeys::FigureName(int figure) {
  static constexpr absl::string_view kNames[kFigures] = {"t_start", "t_end", "bytes_read"};
  return kNames[figure];
}

absl::string_view ChunkInfoKeys::FigureUnit(int figure) {
  static constexpr absl::string_view kUnits[kFigures] = {"s", "s", "bytes"};
  return kUnits[figure];
}

// The original's epoch seconds.
double ChunkInfoKeys::Value(size_t entry, int figure) const {
  const ChunkInfoRow row = rows_[entry];
  switch (figure) {
    case 0:
      return static_cast<double>(row.start_unix_ns) * 1e-9;
    case 1:
      return static_cast<double>(row.end_unix_ns) * 1e-9;
    default:
      return static_cast<double>(row.bytes_read);
  }
}

ChunkInfoKeys::Identity ChunkInfoKeys::IdentityOf(size_t entry) const {
  const ChunkInfoRow row = rows_[entry];
  return Identity{file_names_.ChunkInfoFile(row.file_index), row.attempt, row.entry_start,
                  row.entry_stop};
}

// Retries get their own key instead of overwriting.
void ChunkInfoKeys::AppendPrefix(size_t entry, std::string* out) const {
  const ChunkInfoRow row = rows_[entry];
  absl::StrAppend(out, "chunk_info.",
                  file_names_.ShortName(file_names_.ChunkInfoFile(row.file_index)), ":",
                  row.entry_start, ":", row.entry_stop);
  if (row.attempt > 0) absl::StrAppend(out, "#", row.attempt);
  out->push_back('.');
}

FlatMetric ChunkInfoKeys::Metric(size_t entry, int figure) const {
  std::string key;
  AppendPrefix(entry, &key);
  const absl::string_view name = FigureName(figure);
  key.append(name.data(), name.size());
  return FlatMetric{std::move(key), Value(entry, figure), std::string(FigureUnit(figure))};
}

}  // namespace roastcoffea
