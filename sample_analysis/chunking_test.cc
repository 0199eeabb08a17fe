#include "sample_analysis/chunking.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace sample_analysis {
namespace {

using ::testing::HasSubstr;

SampleDataset TwoDatasets() {
  SampleDataset dataset;
  dataset.directory = "/cache/x";
  dataset.datasets = {
      DatasetFiles{"qcd",
                   {SampleFile{"/cache/x/qcd_0.rcol", 1000}, SampleFile{"/cache/x/qcd_1.rcol", 7}}},
      DatasetFiles{
          "signal",
          {SampleFile{"/cache/x/signal_0.rcol", 0}, SampleFile{"/cache/x/signal_1.rcol", 1001}}},
  };
  return dataset;
}

TEST(ChunkingTest, CoversEveryEntryExactlyOnce) {
  const SampleDataset dataset = TwoDatasets();
  for (int64_t chunk_size : {1, 3, 7, 100, 333, 1000, 1001, 5000}) {
    absl::StatusOr<std::vector<WorkItem>> chunks = MakeChunks(dataset, chunk_size);
    ASSERT_TRUE(chunks.ok()) << chunks.status();
    std::map<std::string, std::vector<int>> hits;  // per file: how often each entry is covered
    for (const DatasetFiles& d : dataset.datasets) {
      for (const SampleFile& f : d.files) hits[f.path].assign(f.entries, 0);
    }
    for (const WorkItem& item : *chunks) {
      ASSERT_GT(item.entries(), 0);
      ASSERT_LE(item.entries(), chunk_size);
      std::vector<int>& file_hits = hits.at(item.file);
      ASSERT_LE(item.entry_stop, static_cast<int64_t>(file_hits.size()));
      for (int64_t e = item.entry_start; e < item.entry_stop; ++e) ++file_hits[e];
      EXPECT_EQ(item.dataset, item.file.find("qcd") != std::string::npos ? "qcd" : "signal");
    }
    for (const auto& [path, file_hits] : hits) {
      for (size_t e = 0; e < file_hits.size(); ++e) {
        ASSERT_EQ(file_hits[e], 1) << path << " entry " << e << " chunk_size " << chunk_size;
      }
    }
  }
}

TEST(ChunkingTest, ChunksAreNearEqualAndOrdered) {
  absl::StatusOr<std::vector<WorkItem>> chunks = MakeChunks(TwoDatasets(), 300);
  ASSERT_TRUE(chunks.ok());
  // qcd_0: 1000 -> 4 x 250; qcd_1: 7 -> 1; signal_0: none; signal_1: 1001 -> 251,250,250,250.
  ASSERT_EQ(chunks->size(), 9u);
  EXPECT_EQ((*chunks)[0], (WorkItem{"qcd", "/cache/x/qcd_0.rcol", 0, 250}));
  EXPECT_EQ((*chunks)[3], (WorkItem{"qcd", "/cache/x/qcd_0.rcol", 750, 1000}));
  EXPECT_EQ((*chunks)[4], (WorkItem{"qcd", "/cache/x/qcd_1.rcol", 0, 7}));
  EXPECT_EQ((*chunks)[5], (WorkItem{"signal", "/cache/x/signal_1.rcol", 0, 251}));
  EXPECT_EQ((*chunks)[8], (WorkItem{"signal", "/cache/x/signal_1.rcol", 751, 1001}));
}

TEST(ChunkingTest, RejectsBadInput) {
  for (int64_t chunk_size : {0, -1}) {
    absl::StatusOr<std::vector<WorkItem>> chunks = MakeChunks(TwoDatasets(), chunk_size);
    EXPECT_EQ(chunks.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(chunks.status().message(), HasSubstr("chunk_size"));
  }
  SampleDataset bad = TwoDatasets();
  bad.datasets[1].files[0].entries = -3;
  absl::StatusOr<std::vector<WorkItem>> chunks = MakeChunks(bad, 10);
  EXPECT_EQ(chunks.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(chunks.status().message(), HasSubstr("signal_0.rcol"));
}

TEST(ChunkingTest, EmptyDatasetGivesNoChunks) {
  absl::StatusOr<std::vector<WorkItem>> chunks = MakeChunks(SampleDataset{}, 10);
  ASSERT_TRUE(chunks.ok());
  EXPECT_TRUE(chunks->empty());
}

}  // namespace
}  // namespace sample_analysis
}  // namespace roastcoffea
