#include "sample_analysis/dijet_processor.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "instrumentation/chunk_tracking.h"
#include "sample_analysis/columnar_file.h"
#include "sample_analysis/histogram.h"
#include "sample_analysis/sample_dataset.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace sample_analysis {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int64_t kEvents = 3000;
constexpr int64_t kBasket = 700;

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

DatasetSpec Qcd() {
  DatasetSpec spec;
  spec.name = "qcd";
  spec.kind = ProcessKind::kQcd;
  spec.hard_scale_min_gev = 20;  // soft enough that many events fail the selection
  return spec;
}

DatasetSpec Signal() {
  DatasetSpec spec;
  spec.name = "signal";
  spec.kind = ProcessKind::kResonance;
  spec.resonance_mass_gev = 1500;
  spec.resonance_width_gev = 45;
  return spec;
}

// Writes generated events to a fresh file (unique per name) and returns its path.
std::string WriteFile(const std::string& name, const GeneratedEvents& events) {
  const std::string path = absl::StrCat(TempDir(), "/", name, ".rcol");
  const absl::Status status = WriteEventsFile(events, path, kBasket);
  EXPECT_TRUE(status.ok()) << status;
  return path;
}

// The analysis done by hand, without the processor's code or Eigen.
struct Expected {
  int64_t selected = 0;
  Histogram mjj = *Histogram::Create(60, 0, 3000);
};

Expected Analyse(const GeneratedEvents& e, int64_t start, int64_t stop) {
  Expected expected;
  int64_t first_jet = 0;
  for (int64_t i = 0; i < start; ++i) first_jet += e.jet_counts[i];
  for (int64_t i = start; i < stop; ++i) {
    std::vector<int64_t> good;
    for (int64_t j = first_jet; j < first_jet + e.jet_counts[i]; ++j) {
      if (e.jet_pt[j] > 30.0f) good.push_back(j);
    }
    first_jet += e.jet_counts[i];
    if (good.size() < 2) continue;
    std::stable_sort(good.begin(), good.end(),
                     [&](int64_t a, int64_t b) { return e.jet_pt[a] > e.jet_pt[b]; });
    double sum[4] = {0, 0, 0, 0};
    for (int k = 0; k < 2; ++k) {
      const int64_t j = good[k];
      const double pt = e.jet_pt[j], eta = e.jet_eta[j], phi = e.jet_phi[j], m = e.jet_mass[j];
      const double px = pt * std::cos(phi), py = pt * std::sin(phi), pz = pt * std::sinh(eta);
      sum[0] += std::sqrt(px * px + py * py + pz * pz + m * m);
      sum[1] += px;
      sum[2] += py;
      sum[3] += pz;
    }
    ++expected.selected;
    expected.mjj.Fill(std::sqrt(
        std::max(0.0, sum[0] * sum[0] - sum[1] * sum[1] - sum[2] * sum[2] - sum[3] * sum[3])));
  }
  return expected;
}

// Histograms filled by different float arithmetic may differ by an event at a bin edge.
void ExpectHistogramsMatch(const Histogram& actual, const Histogram& expected) {
  ASSERT_EQ(actual.bins(), expected.bins());
  EXPECT_EQ(actual.entries(), expected.entries());
  int64_t differences = 0;
  for (int i = 0; i < actual.bins(); ++i) {
    differences += std::abs(actual.counts()[i] - expected.counts()[i]);
  }
  EXPECT_LE(differences, 2);
}

TEST(DijetProcessorTest, SelectionMatchesAnIndependentComputation) {
  const GeneratedEvents events = GenerateEvents(Qcd(), 5, 0, kEvents);
  const std::string path = WriteFile("selection", events);
  const DijetProcessor processor;
  for (auto [start, stop] :
       {std::pair<int64_t, int64_t>{0, kEvents}, {123, 2345}, {699, 701}, {kEvents - 1, kEvents}}) {
    absl::StatusOr<DijetOutput> output = processor.Process(WorkItem{"qcd", path, start, stop});
    ASSERT_TRUE(output.ok()) << output.status();
    const Expected expected = Analyse(events, start, stop);
    EXPECT_EQ(output->events_processed, stop - start);
    EXPECT_EQ(output->events_selected, expected.selected) << start << "," << stop;
    ExpectHistogramsMatch(output->mjj, expected.mjj);
    EXPECT_EQ(output->datasets.at("qcd").events_selected, expected.selected);
    EXPECT_EQ(output->datasets.at("qcd").events_processed, stop - start);
    EXPECT_EQ(output->datasets.at("qcd").chunks, 1);
    EXPECT_EQ(output->mjj_by_dataset.at("qcd"), output->mjj);
  }
  // The sample must exercise both outcomes of the selection.
  const Expected all = Analyse(events, 0, kEvents);
  EXPECT_GT(all.selected, kEvents / 20);
  EXPECT_LT(all.selected, kEvents);
}

TEST(DijetProcessorTest, EmptyRangeSelectsNothing) {
  const std::string path = WriteFile("empty_range", GenerateEvents(Qcd(), 5, 0, 100));
  absl::StatusOr<DijetOutput> output = DijetProcessor().Process(WorkItem{"qcd", path, 50, 50});
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(output->events_processed, 0);
  EXPECT_EQ(output->events_selected, 0);
  EXPECT_EQ(output->mjj.entries(), 0);
}

TEST(DijetProcessorTest, SignalMassPeaksNearTheResonance) {
  const std::string path = WriteFile("signal", GenerateEvents(Signal(), 9, 0, kEvents));
  absl::StatusOr<DijetOutput> output =
      DijetProcessor().Process(WorkItem{"signal", path, 0, kEvents});
  ASSERT_TRUE(output.ok()) << output.status();
  const std::vector<int64_t>& counts = output->mjj.counts();
  const int peak =
      static_cast<int>(std::max_element(counts.begin(), counts.end()) - counts.begin());
  EXPECT_GE(output->mjj.BinLowEdge(peak), 1400);
  EXPECT_LE(output->mjj.BinLowEdge(peak), 1550);
  EXPECT_GT(output->events_selected, kEvents * 8 / 10);
}

TEST(DijetProcessorTest, MergingChunksEqualsProcessingTheWholeFile) {
  const GeneratedEvents events = GenerateEvents(Qcd(), 6, 0, kEvents);
  const std::string qcd_path = WriteFile("merge_qcd", events);
  const std::string signal_path = WriteFile("merge_signal", GenerateEvents(Signal(), 6, 0, 500));
  const DijetProcessor processor;
  DijetOutput merged;
  for (const WorkItem& item :
       {WorkItem{"qcd", qcd_path, 0, 1000}, WorkItem{"qcd", qcd_path, 1000, kEvents},
        WorkItem{"signal", signal_path, 0, 500}}) {
    merged += processor(item);
  }
  const DijetOutput whole = processor(WorkItem{"qcd", qcd_path, 0, kEvents});
  const DijetOutput signal = processor(WorkItem{"signal", signal_path, 0, 500});
  EXPECT_EQ(merged.events_processed, kEvents + 500);
  EXPECT_EQ(merged.events_selected, whole.events_selected + signal.events_selected);
  EXPECT_EQ(merged.mjj_by_dataset.at("qcd"), whole.mjj);
  EXPECT_EQ(merged.mjj_by_dataset.at("signal"), signal.mjj);
  Histogram both = whole.mjj;
  both += signal.mjj;
  EXPECT_EQ(merged.mjj, both);
  EXPECT_EQ(merged.datasets.at("qcd").chunks, 2);
  EXPECT_EQ(merged.datasets.at("qcd").events_processed, kEvents);
  EXPECT_EQ(merged.datasets.at("qcd").events_selected, whole.events_selected);
  EXPECT_EQ(merged.datasets.at("signal").chunks, 1);

  DijetProcessorOptions coarse;
  coarse.mjj_bins = 10;
  const DijetOutput other = DijetProcessor(coarse)(WorkItem{"qcd", qcd_path, 0, 10});
  EXPECT_THROW(merged += other, std::invalid_argument);
}

int64_t JetColumnsCompressedBytes(const std::string& path, int64_t* metadata) {
  absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(path);
  EXPECT_TRUE(reader.ok());
  *metadata = (*reader)->stats().metadata_bytes_read;
  int64_t total = 0;
  for (const std::string& name : DijetProcessor::ColumnsRead()) {
    total += (*reader)->FindColumn(name)->compressed_bytes();
  }
  return total;
}

TEST(DijetProcessorTest, CountsTheBytesOfExactlyTheColumnsItReads) {
  const std::string path = WriteFile("bytes", GenerateEvents(Qcd(), 7, 0, kEvents));
  int64_t metadata = 0;
  const int64_t columns = JetColumnsCompressedBytes(path, &metadata);
  const DijetProcessor processor;
  // First chunk of a file on this thread: opens it (header + footer) and reads every basket.
  const DijetOutput first = processor(WorkItem{"qcd", path, 0, kEvents});
  EXPECT_EQ(first.datasets.at("qcd").compressed_bytes_read, metadata + columns);
  // Same file again: the thread's reader is reused, only baskets are read.
  const DijetOutput second = processor(WorkItem{"qcd", path, 0, kEvents});
  EXPECT_EQ(second.datasets.at("qcd").compressed_bytes_read, columns);
  EXPECT_GT(second.datasets.at("qcd").uncompressed_bytes_read, columns);
  EXPECT_LT(columns, static_cast<int64_t>(fs::file_size(path)));  // 4 of 9 columns
}

TEST(DijetProcessorTest, ReportsBytesAndSectionsToTheInstrumentation) {
  const std::string path = WriteFile("instrumented", GenerateEvents(Qcd(), 8, 0, kEvents));
  const DijetProcessor processor;
  DijetOutput output;
  const ChunkMetadata metadata{"qcd", path, "uuid-1", 100, 2100, 2000};
  const v1::ChunkRecord record = TrackChunk(metadata, [&] {
    output = processor(WorkItem{"qcd", path, 100, 2100});
  });
  ASSERT_EQ(record.status(), v1::CHUNK_STATUS_OK) << record.error_text();
  EXPECT_EQ(record.compressed_bytes_read(), output.datasets.at("qcd").compressed_bytes_read);
  EXPECT_EQ(record.uncompressed_bytes_read(), output.datasets.at("qcd").uncompressed_bytes_read);
  EXPECT_GT(record.compressed_bytes_read(), 0);
  const auto find = [&](const std::string& name,
                        v1::SectionRecord::Kind kind) -> const v1::SectionRecord* {
    for (const v1::SectionRecord& s : record.sections()) {
      if (s.name() == name && s.kind() == kind) return &s;
    }
    return nullptr;
  };
  for (const char* name : {"read_columns", "select_jets", "dijet_mass", "fill_histogram"}) {
    const v1::SectionRecord* section = find(name, v1::SectionRecord::KIND_TIME);
    ASSERT_NE(section, nullptr) << name;
    EXPECT_EQ(section->entries(), 1u) << name;
  }
  const v1::SectionRecord* bytes = find("read_columns", v1::SectionRecord::KIND_BYTES);
  ASSERT_NE(bytes, nullptr);
  EXPECT_EQ(bytes->bytes_read(), record.compressed_bytes_read());
}

TEST(DijetProcessorTest, FailsClearlyOnMissingOrCorruptFiles) {
  const DijetProcessor processor;
  const std::string missing = TempDir() + "/missing.rcol";
  absl::StatusOr<DijetOutput> output = processor.Process(WorkItem{"qcd", missing, 0, 10});
  EXPECT_EQ(output.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(output.status().message(), HasSubstr(missing));
  try {
    processor(WorkItem{"qcd", missing, 0, 10});
    ADD_FAILURE() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(missing));
  }

  const std::string path = WriteFile("corrupt", GenerateEvents(Qcd(), 5, 0, kEvents));
  ASSERT_TRUE(processor.Process(WorkItem{"qcd", path, 0, 10}).ok());  // now cached
  // Out of range.
  output = processor.Process(WorkItem{"qcd", path, 10, kEvents + 1});
  EXPECT_EQ(output.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(output.status().message(), HasSubstr(path));
  // Truncated under the cached reader: noticed, reopened, rejected.
  fs::resize_file(path, fs::file_size(path) - 100);
  output = processor.Process(WorkItem{"qcd", path, 0, 10});
  EXPECT_EQ(output.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(output.status().message(), HasSubstr(path));
  // Garbage.
  std::ofstream(path, std::ios::trunc) << std::string(4096, 'z');
  output = processor.Process(WorkItem{"qcd", path, 0, 10});
  EXPECT_EQ(output.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THROW(processor(WorkItem{"qcd", path, 0, 10}), std::runtime_error);
}

TEST(DijetProcessorTest, CorruptBasketIsReportedWithTheFile) {
  const std::string path = WriteFile("corrupt_basket", GenerateEvents(Qcd(), 5, 0, kEvents));
  uint64_t offset = 0;
  {
    absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(path);
    ASSERT_TRUE(reader.ok());
    const BlobLocation& blob = (*reader)->FindColumn(kJetEtaColumn)->baskets[2].values;
    offset = blob.offset + blob.compressed_size / 2;
  }
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[offset] ^= 0x5a;
  fs::remove(path);  // new inode, as a rewrite would give
  std::ofstream(path, std::ios::binary) << bytes;
  const DijetProcessor processor;
  EXPECT_TRUE(processor.Process(WorkItem{"qcd", path, 0, 2 * kBasket}).ok());
  absl::StatusOr<DijetOutput> output =
      processor.Process(WorkItem{"qcd", path, 2 * kBasket, 2 * kBasket + 10});
  EXPECT_EQ(output.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(output.status().message(), HasSubstr(path));
  EXPECT_THAT(output.status().message(), HasSubstr("Jet_eta basket 2"));
}

TEST(DijetProcessorTest, RewrittenFileIsReopened) {
  const std::string path = absl::StrCat(TempDir(), "/rewritten.rcol");
  const DijetProcessor processor;
  const GeneratedEvents first = GenerateEvents(Qcd(), 1, 0, kEvents);
  ASSERT_TRUE(WriteEventsFile(first, path, kBasket).ok());
  EXPECT_EQ(processor(WorkItem{"qcd", path, 0, kEvents}).events_selected,
            Analyse(first, 0, kEvents).selected);
  const GeneratedEvents second = GenerateEvents(Qcd(), 2, 0, kEvents);
  ASSERT_TRUE(WriteEventsFile(second, path, kBasket).ok());
  const DijetOutput output = processor(WorkItem{"qcd", path, 0, kEvents});
  EXPECT_EQ(output.events_selected, Analyse(second, 0, kEvents).selected);
  ExpectHistogramsMatch(output.mjj, Analyse(second, 0, kEvents).mjj);
}

TEST(DijetProcessorTest, SummaryShowsCountsAndTheSignalPeak) {
  const std::string qcd = WriteFile("summary_qcd", GenerateEvents(Qcd(), 3, 0, 1000));
  const std::string signal = WriteFile("summary_signal", GenerateEvents(Signal(), 3, 0, 1000));
  const DijetProcessor processor;
  DijetOutput output = processor(WorkItem{"qcd", qcd, 0, 1000});
  output += processor(WorkItem{"ZprimeToQQ_M-1500", signal, 0, 1000});
  const std::string summary = SummarizeDijetOutput(output);
  EXPECT_THAT(summary, HasSubstr(absl::StrCat("2000 events processed, ", output.events_selected,
                                              " selected")));
  EXPECT_THAT(summary, HasSubstr("qcd"));
  EXPECT_THAT(summary, HasSubstr("ZprimeToQQ_M-1500"));
  // The signal's peak bin, and a histogram row per 150 GeV (60 bins merged by 3).
  const std::string signal_peak = [&] {
    const Histogram& h = output.mjj_by_dataset.at("ZprimeToQQ_M-1500");
    const int peak = static_cast<int>(std::max_element(h.counts().begin(), h.counts().end()) -
                                      h.counts().begin());
    return absl::StrCat(h.BinLowEdge(peak), "-", h.BinLowEdge(peak + 1));
  }();
  EXPECT_THAT(summary, HasSubstr(signal_peak));
  EXPECT_THAT(summary, HasSubstr("1500-1650"));
  EXPECT_THAT(summary, HasSubstr("#"));
  EXPECT_EQ(summary.back(), '\n');
  // An empty output still summarises.
  EXPECT_THAT(SummarizeDijetOutput(DijetOutput()), HasSubstr("0 events processed"));
}

TEST(DijetProcessorTest, RejectsBadOptions) {
  const std::string path = WriteFile("options", GenerateEvents(Qcd(), 5, 0, 10));
  DijetProcessorOptions options;
  options.mjj_bins = 0;
  absl::StatusOr<DijetOutput> output =
      DijetProcessor(options).Process(WorkItem{"qcd", path, 0, 10});
  EXPECT_EQ(output.status().code(), absl::StatusCode::kInvalidArgument);
  options = DijetProcessorOptions();
  options.jet_pt_min_gev = std::nan("");
  output = DijetProcessor(options).Process(WorkItem{"qcd", path, 0, 10});
  EXPECT_EQ(output.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(output.status().message(), HasSubstr("jet_pt_min_gev"));
}

}  // namespace
}  // namespace sample_analysis
}  // namespace roastcoffea
