// The original's chunk_info family of flat metrics as a whole, for outputs that write a million
// chunk records' keys (3 x 10^6) without making each key a std::string: a key is written by
// appending its parts (the entry's prefix, made once, then the figure's name), and two keys are
// compared by the integers that name them (ChunkInfoKeys::Identity), never by their text.
//
// ToFlatMetrics and the two-argument ForEachFlatMetric (aggregate.h) give the same keys as
// strings; this is the same family, in the same place of the order, in another form.
//
// Thread-safety: a ChunkInfoKeys only reads the metrics it was made from; valid during the
// callback that receives it. Cost: every accessor is O(1) but AppendPrefix (O(key length)).
#ifndef ROASTCOFFEA_AGGREGATION_FLAT_METRICS_H_
#define ROASTCOFFEA_AGGREGATION_FLAT_METRICS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "aggregation/aggregate.h"
#include "schema/chunk_info_rows.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// The run's files, each once, with the short name their keys use: the base name with as many
// parent directories as it takes to tell it from the run's other files ("f.root",
// "mc/f.root"). Made once for several passes over the keys (a million chunk_info entries name a
// hundred thousand files: looking each entry's up again costs ~0.15 s). Views the strings of
// the metrics it was made from.
class FlatFileNames {
 public:
  explicit FlatFileNames(const v1::AggregatedMetrics& metrics);

  // The short name of `file`; "" for a file the metrics do not name.
  const std::string& Of(absl::string_view file) const;
  // The place among the run's files of the chunk_info rows' file `file` (ChunkInfoRow::file_index
  // of ChunkInfoRows of the same metrics), and a place's name.
  uint32_t ChunkInfoFile(uint32_t file) const { return chunk_info_file_[file]; }
  const std::string& ShortName(uint32_t file) const { return short_names_[file]; }
  // The metrics' chunk_info rows (made once: from an old measurement's messages that interns
  // every row's file).
  const ChunkInfoRows& chunk_info_rows() const { return chunk_info_rows_; }

 private:
  ChunkInfoRows chunk_info_rows_;
  absl::flat_hash_map<absl::string_view, uint32_t> index_;  // file -> its place
  std::vector<std::string> short_names_;                    // per place
  std::vector<uint32_t> chunk_info_file_;                   // per chunk_info file: its place
};

// The keys "chunk_info.<file>:<entry_start>:<entry_stop>[#<attempt>].<figure>" of every
// chunk_info entry, in order: per entry, the figures t_start (s), t_end (s), bytes_read (bytes).
// No other flat key of any output starts with "chunk_info.": outputs compare these keys among
// themselves only.
class ChunkInfoKeys {
 public:
  static constexpr int kFigures = 3;

  // What names an entry's keys: two entries have the same keys exactly when their identities are
  // equal (file names are interned and distinct files have distinct short names; the numbers
  // cannot contain the separators ':', '#' and '.').
  struct Identity {
    uint32_t file;     // the file's place among the run's files
    uint32_t attempt;  // 0 for a first attempt (no "#" part)
    int64_t entry_start;
    int64_t entry_stop;
    friend bool operator==(const Identity& a, const Identity& b) {
      return a.file == b.file && a.attempt == b.attempt && a.entry_start == b.entry_start &&
             a.entry_stop == b.entry_stop;
    }
    friend bool operator<(const Identity& a, const Identity& b) {
      return std::tie(a.file, a.attempt, a.entry_start, a.entry_stop) <
             std::tie(b.file, b.attempt, b.entry_start, b.entry_stop);
    }
  };

  // The keys of the metrics `file_names` were made from.
  explicit ChunkInfoKeys(const FlatFileNames& file_names)
      : rows_(file_names.chunk_info_rows()), file_names_(file_names) {}

  size_t size() const { return rows_.size(); }

  // "t_start", "t_end" or "bytes_read"; "s", "s" or "bytes".
  static absl::string_view FigureName(int figure);
  static absl::string_view FigureUnit(int figure);

  double Value(size_t entry, int figure) const;
  Identity IdentityOf(size_t entry) const;

  // Appends "chunk_info.<file>:<entry_start>:<entry_stop>[#<attempt>]." of `entry`: its keys
  // are this followed by a figure's name.
  void AppendPrefix(size_t entry, std::string* out) const;

  // The key of (`entry`, `figure`) as a FlatMetric, as ToFlatMetrics gives it.
  FlatMetric Metric(size_t entry, int figure) const;

 private:
  const ChunkInfoRows& rows_;
  const FlatFileNames& file_names_;
};

// ForEachFlatMetric (aggregate.h) with the chunk_info family handed to `chunk_info` once, at
// its place in the order, instead of its keys to `sink` (called when the metrics have chunk
// metrics). `file_names` are `metrics`' own.
void ForEachFlatMetric(const v1::AggregatedMetrics& metrics, const FlatFileNames& file_names,
                       absl::FunctionRef<void(FlatMetric&&)> sink,
                       absl::FunctionRef<void(const ChunkInfoKeys&)> chunk_info);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_FLAT_METRICS_H_
