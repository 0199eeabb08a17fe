#include "sample_analysis/dijet_processor.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "Eigen/Core"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "instrumentation/sections.h"
#include "sample_analysis/columnar_file.h"
#include "sample_analysis/sample_dataset.h"

namespace roastcoffea {
namespace sample_analysis {
namespace {

// The last file this thread opened, reused while it is unchanged on disk.
struct CachedReader {
  std::string path;
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  struct timespec mtime = {0, 0};
  std::unique_ptr<Reader> reader;
};

bool SameFile(const CachedReader& cached, const std::string& path, const struct stat& st) {
  return cached.reader != nullptr && cached.path == path && cached.device == st.st_dev &&
         cached.inode == st.st_ino && cached.size == st.st_size &&
         cached.mtime.tv_sec == st.st_mtim.tv_sec && cached.mtime.tv_nsec == st.st_mtim.tv_nsec;
}

// Returns this thread's reader for `path`, opening it if needed. A fresh open reports its
// header/footer bytes with RecordBytesRead and into *counts.
absl::StatusOr<Reader*> ReaderFor(const std::string& path, DatasetCounts* counts) {
  thread_local CachedReader cached;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    cached = CachedReader{};
    const std::string message =
        absl::StrCat("opening columnar file ", path, ": ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(message) : absl::UnavailableError(message);
  }
  if (SameFile(cached, path, st)) return cached.reader.get();
  absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(path);
  if (!reader.ok()) return reader.status();
  const int64_t metadata = (*reader)->stats().metadata_bytes_read;
  RecordBytesRead(metadata, metadata);
  counts->compressed_bytes_read += metadata;
  counts->uncompressed_bytes_read += metadata;
  cached = CachedReader{path, st.st_dev, st.st_ino, st.st_size, st.st_mtim, std::move(*reader)};
  return cached.reader.get();
}

struct JetColumns {
  Jagged<float> pt, eta, phi, mass;
};

absl::Status ReadJets(Reader& reader, const WorkItem& item, DatasetCounts* counts,
                      JetColumns* jets) {
  const std::pair<const char*, Jagged<float>*> columns[] = {{kJetPtColumn, &jets->pt},
                                                            {kJetEtaColumn, &jets->eta},
                                                            {kJetPhiColumn, &jets->phi},
                                                            {kJetMassColumn, &jets->mass}};
  for (const auto& [name, out] : columns) {
    const ReadStats before = reader.stats();
    absl::Status status = reader.ReadJagged<float>(name, item.entry_start, item.entry_stop, out);
    const int64_t compressed = reader.stats().compressed_bytes_read - before.compressed_bytes_read;
    const int64_t uncompressed =
        reader.stats().uncompressed_bytes_read - before.uncompressed_bytes_read;
    // Bytes were read even when a later check failed: report them either way.
    RecordBytesRead(compressed, uncompressed);
    counts->compressed_bytes_read += compressed;
    counts->uncompressed_bytes_read += uncompressed;
    if (!status.ok()) return status;
  }
  for (const Jagged<float>* other : {&jets->eta, &jets->phi, &jets->mass}) {
    if (other->offsets != jets->pt.offsets) {
      return absl::DataLossError(
          absl::StrCat("columnar file ", item.file, ": jet columns disagree on jets per event"));
    }
  }
  return absl::OkStatus();
}

Eigen::Vector4d FourVector(const JetColumns& jets, int64_t j) {
  const double pt = jets.pt.content[j];
  const double eta = jets.eta.content[j];
  const double phi = jets.phi.content[j];
  const double mass = jets.mass.content[j];
  const Eigen::Vector3d p(pt * std::cos(phi), pt * std::sin(phi), pt * std::sinh(eta));
  return Eigen::Vector4d(std::sqrt(p.squaredNorm() + mass * mass), p.x(), p.y(), p.z());
}

double InvariantMass(const Eigen::Vector4d& v) {
  const double m2 = v(0) * v(0) - v.tail<3>().squaredNorm();
  return std::sqrt(std::max(0.0, m2));
}

}  // namespace

DatasetCounts& DatasetCounts::operator+=(const DatasetCounts& other) {
  chunks += other.chunks;
  events_processed += other.events_processed;
  events_selected += other.events_selected;
  compressed_bytes_read += other.compressed_bytes_read;
  uncompressed_bytes_read += other.uncompressed_bytes_read;
  return *this;
}

DijetOutput& DijetOutput::operator+=(const DijetOutput& other) {
  mjj += other.mjj;
  for (const auto& [name, histogram] : other.mjj_by_dataset) mjj_by_dataset[name] += histogram;
  events_processed += other.events_processed;
  events_selected += other.events_selected;
  for (const auto& [name, counts] : other.datasets) datasets[name] += counts;
  io_time += other.io_time;
  decompress_time += other.decompress_time;
  return *this;
}

DijetProcessor::DijetProcessor(DijetProcessorOptions options) : options_(options) {}

const std::vector<std::string>& DijetProcessor::ColumnsRead() {
  static const std::vector<std::string>* const kColumns =
      new std::vector<std::string>{kJetPtColumn, kJetEtaColumn, kJetPhiColumn, kJetMassColumn};
  return *kColumns;
}

absl::StatusOr<DijetOutput> DijetProcessor::Process(const WorkItem& item) const {
  absl::StatusOr<Histogram> mjj =
      Histogram::Create(options_.mjj_bins, options_.mjj_min_gev, options_.mjj_max_gev);
  if (!mjj.ok()) return mjj.status();
  if (!std::isfinite(options_.jet_pt_min_gev)) {
    return absl::InvalidArgumentError(
        absl::StrCat("jet_pt_min_gev must be finite, got ", options_.jet_pt_min_gev));
  }
  DatasetCounts counts;
  JetColumns jets;
  absl::Duration io_time, decompress_time;
  {
    ScopedTimer timer("read_columns");
    ScopedBytes bytes("read_columns");
    absl::StatusOr<Reader*> reader = ReaderFor(item.file, &counts);
    if (!reader.ok()) return reader.status();
    const ReadStats before = (*reader)->stats();
    const absl::Status status = ReadJets(**reader, item, &counts, &jets);
    io_time = (*reader)->stats().io_time - before.io_time;
    decompress_time = (*reader)->stats().decompress_time - before.decompress_time;
    if (!status.ok()) return status;
  }

  // Per selected event: the indices (into the content arrays) of its two leading jets.
  std::vector<std::pair<int64_t, int64_t>> leading_pairs;
  {
    ScopedTimer timer("select_jets");
    const int64_t events = jets.pt.entries();
    for (int64_t e = 0; e < events; ++e) {
      int64_t first = -1, second = -1;
      for (int64_t j = jets.pt.offsets[e]; j < jets.pt.offsets[e + 1]; ++j) {
        const double pt = jets.pt.content[j];
        if (!(pt > options_.jet_pt_min_gev)) continue;
        if (first < 0 || pt > jets.pt.content[first]) {
          second = first;
          first = j;
        } else if (second < 0 || pt > jets.pt.content[second]) {
          second = j;
        }
      }
      if (second >= 0) leading_pairs.emplace_back(first, second);
    }
  }

  std::vector<double> masses;
  {
    ScopedTimer timer("dijet_mass");
    masses.reserve(leading_pairs.size());
    for (const auto& [first, second] : leading_pairs) {
      masses.push_back(InvariantMass(FourVector(jets, first) + FourVector(jets, second)));
    }
  }

  DijetOutput output;
  {
    ScopedTimer timer("fill_histogram");
    for (double m : masses) mjj->Fill(m);
  }
  counts.chunks = 1;
  counts.events_processed = item.entries();
  counts.events_selected = static_cast<int64_t>(masses.size());
  output.events_processed = counts.events_processed;
  output.events_selected = counts.events_selected;
  output.mjj_by_dataset[item.dataset] = *mjj;
  output.mjj = *std::move(mjj);
  output.datasets[item.dataset] = counts;
  output.io_time = io_time;
  output.decompress_time = decompress_time;
  return output;
}

DijetOutput DijetProcessor::operator()(const WorkItem& item) const {
  absl::StatusOr<DijetOutput> output = Process(item);
  if (!output.ok()) {
    throw std::runtime_error(absl::StrCat("dijet processor, dataset ", item.dataset, " entries [",
                                          item.entry_start, ", ", item.entry_stop,
                                          "): ", output.status().ToString()));
  }
  return *std::move(output);
}

namespace {

double Percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string PeakText(const Histogram& histogram) {
  if (histogram.empty_binning()) return "-";
  const std::vector<int64_t>& counts = histogram.counts();
  const auto peak = std::max_element(counts.begin(), counts.end());
  if (*peak == 0) return "-";
  const int bin = static_cast<int>(peak - counts.begin());
  return absl::StrFormat("%.0f-%.0f", histogram.BinLowEdge(bin), histogram.BinLowEdge(bin + 1));
}

}  // namespace

ChunkMetadata WorkItemChunkMetadata(const WorkItem& item) {
  ChunkMetadata metadata;
  metadata.dataset = item.dataset;
  metadata.file = item.file;
  metadata.entry_start = item.entry_start;
  metadata.entry_stop = item.entry_stop;
  metadata.events = item.entries();
  metadata.uuid = absl::StrCat(item.file, ":", item.entry_start, "-", item.entry_stop);
  // The file's size, for read amplification; a file that cannot be stat'ed is left unknown
  // (the chunk itself reports the error when it opens the file).
  struct stat st;
  if (::stat(item.file.c_str(), &st) == 0 && st.st_size > 0) metadata.file_bytes = st.st_size;
  return metadata;
}

std::string SummarizeDijetOutput(const DijetOutput& output) {
  std::string text = absl::StrFormat(
      "Dijet analysis: %d events processed, %d selected (%.1f%%: >= 2 jets above the pT cut)\n",
      output.events_processed, output.events_selected,
      Percent(output.events_selected, output.events_processed));
  absl::StrAppend(
      &text, absl::StrFormat("  %-24s %7s %11s %11s %9s %14s %16s\n", "dataset", "chunks", "events",
                             "selected", "selected%", "read MB (zstd)", "m_jj peak (GeV)"));
  for (const auto& [name, counts] : output.datasets) {
    const auto histogram = output.mjj_by_dataset.find(name);
    absl::StrAppend(
        &text,
        absl::StrFormat("  %-24s %7d %11d %11d %8.1f%% %14.2f %16s\n", name, counts.chunks,
                        counts.events_processed, counts.events_selected,
                        Percent(counts.events_selected, counts.events_processed),
                        static_cast<double>(counts.compressed_bytes_read) / 1e6,
                        histogram == output.mjj_by_dataset.end() ? std::string("-")
                                                                 : PeakText(histogram->second)));
  }
  const Histogram& mjj = output.mjj;
  if (mjj.empty_binning()) return text;
  absl::StrAppend(&text, "Invariant mass of the two leading jets, all datasets (GeV):\n");
  const int group = (mjj.bins() + 19) / 20;
  std::vector<int64_t> rows;
  for (int bin = 0; bin < mjj.bins(); ++bin) {
    if (bin % group == 0) rows.push_back(0);
    rows.back() += mjj.counts()[bin];
  }
  const int64_t largest = std::max<int64_t>(1, *std::max_element(rows.begin(), rows.end()));
  constexpr int kBarWidth = 40;
  for (size_t row = 0; row < rows.size(); ++row) {
    const int first_bin = static_cast<int>(row) * group;
    const int end_bin = std::min(mjj.bins(), first_bin + group);
    const int bar = static_cast<int>((rows[row] * kBarWidth + largest - 1) / largest);
    absl::StrAppend(&text, absl::StrFormat("  %6.0f-%-6.0f |%-*s %d\n", mjj.BinLowEdge(first_bin),
                                           mjj.BinLowEdge(end_bin), kBarWidth,
                                           std::string(bar, '#'), rows[row]));
  }
  absl::StrAppend(&text, absl::StrFormat("  underflow %d, overflow (>= %.0f) %d\n", mjj.underflow(),
                                         mjj.high(), mjj.overflow()));
  return text;
}

}  // namespace sample_analysis
}  // namespace roastcoffea
