// The built-in dijet analysis: for one work item (an entry range of one file), read the jet
// columns, keep jets with pT above a threshold, keep events with at least two such jets, and
// histogram the invariant mass of the leading pair.
//
// Instrumentation (//instrumentation, sections.h): every read reports its bytes with
// roastcoffea::RecordBytesRead on the reading thread; the steps run inside the sections
// "read_columns" (a time and a bytes section), "select_jets", "dijet_mass" and "fill_histogram".
// Outside a chunk tracked by roastcoffea::TrackChunk these cost next to nothing.
#ifndef ROASTCOFFEA_SAMPLE_ANALYSIS_DIJET_PROCESSOR_H_
#define ROASTCOFFEA_SAMPLE_ANALYSIS_DIJET_PROCESSOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "instrumentation/chunk_tracking.h"
#include "sample_analysis/chunking.h"
#include "sample_analysis/histogram.h"

namespace roastcoffea {
namespace sample_analysis {

struct DijetProcessorOptions {
  double jet_pt_min_gev = 30;
  int mjj_bins = 60;
  double mjj_min_gev = 0;
  double mjj_max_gev = 3000;
};

struct DatasetCounts {
  int64_t chunks = 0;
  int64_t events_processed = 0;
  int64_t events_selected = 0;
  // Bytes pread from the files (compressed: column baskets, plus header/footer when a file is
  // opened) and produced by decompression (baskets; header/footer counted as read).
  int64_t compressed_bytes_read = 0;
  int64_t uncompressed_bytes_read = 0;

  DatasetCounts& operator+=(const DatasetCounts& other);
};

struct DijetOutput {
  // Invariant mass of the two leading selected jets, GeV, one entry per selected event.
  Histogram mjj;
  int64_t events_processed = 0;
  int64_t events_selected = 0;
  // Keyed by dataset name.
  std::map<std::string, DatasetCounts> datasets;
  std::map<std::string, Histogram> mjj_by_dataset;
  // Wall time spent in pread, and in decompression + CRC checks.
  absl::Duration io_time;
  absl::Duration decompress_time;

  // Adds everything. Throws std::invalid_argument if histogram binnings differ (outputs of
  // processors with different options); an empty (default) output merges with anything.
  DijetOutput& operator+=(const DijetOutput& other);
};

// Thread-safe: one processor may be called from many threads at once. Each thread keeps the
// Reader of the last file it opened and reuses it while the file is unchanged (same inode,
// size and mtime), so consecutive chunks of one file open it once per thread.
class DijetProcessor {
 public:
  explicit DijetProcessor(DijetProcessorOptions options = {});

  // Processes one work item. Errors name the file: NotFound (missing file), DataLoss (corrupt or
  // truncated file), OutOfRange (entry range outside the file), InvalidArgument (bad options).
  // Cost: reads and decompresses the baskets of four jet columns covering the range.
  absl::StatusOr<DijetOutput> Process(const WorkItem& item) const;

  // Process for executors that expect exceptions: throws std::runtime_error carrying the
  // status message (which names the file) so the chunk is recorded as failed.
  DijetOutput operator()(const WorkItem& item) const;

  const DijetProcessorOptions& options() const { return options_; }

  // The columns Process reads: Jet_pt, Jet_eta, Jet_phi, Jet_mass.
  static const std::vector<std::string>& ColumnsRead();

 private:
  DijetProcessorOptions options_;
};

// The chunk record metadata of one work item, for every run of the sample analysis (the
// thread pool and the Work Queue tasks), so that their records compare one to one: the uuid is
// "<file>:<entry_start>-<entry_stop>" and the events are the entries of the range; file_bytes is
// the file's size when it can be stat'ed (a stat per chunk).
ChunkMetadata WorkItemChunkMetadata(const WorkItem& item);

// A human-readable report of an output: events processed and selected, a per-dataset table
// (chunks, events, selected, bytes read) with each dataset's most populated m_jj bin, and a
// text histogram of m_jj over all datasets (bins merged to at most 20 rows). Ends with '\n'.
std::string SummarizeDijetOutput(const DijetOutput& output);

}  // namespace sample_analysis
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_SAMPLE_ANALYSIS_DIJET_PROCESSOR_H_
