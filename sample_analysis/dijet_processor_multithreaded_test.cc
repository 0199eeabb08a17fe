// One DijetProcessor shared by several threads gives the same result as one thread.
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "sample_analysis/chunking.h"
#include "sample_analysis/dijet_processor.h"
#include "sample_analysis/sample_dataset.h"

namespace roastcoffea {
namespace sample_analysis {
namespace {

TEST(DijetProcessorMultithreadedTest, ThreadsAgreeWithSequentialProcessing) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  SampleDatasetSpec spec;
  spec.events_per_file = 2000;
  spec.files_per_dataset = 2;
  spec.basket_entries = 300;
  absl::StatusOr<SampleDataset> dataset =
      EnsureSampleDataset(spec, std::string(tmp != nullptr ? tmp : "/tmp") + "/mt_cache");
  ASSERT_TRUE(dataset.ok()) << dataset.status();
  absl::StatusOr<std::vector<WorkItem>> chunks = MakeChunks(*dataset, 450);
  ASSERT_TRUE(chunks.ok());

  const DijetProcessor processor;
  DijetOutput sequential;
  for (const WorkItem& item : *chunks) sequential += processor(item);

  constexpr int kThreads = 4;
  std::vector<DijetOutput> per_thread(kThreads);
  std::vector<int> failures(kThreads, 0);
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = next.fetch_add(1); i < chunks->size(); i = next.fetch_add(1)) {
        absl::StatusOr<DijetOutput> output = processor.Process((*chunks)[i]);
        if (!output.ok()) {
          ++failures[t];
          continue;
        }
        per_thread[t] += *output;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  DijetOutput parallel;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], 0);
    parallel += per_thread[t];
  }
  EXPECT_EQ(parallel.events_processed, dataset->total_entries());
  EXPECT_EQ(parallel.events_processed, sequential.events_processed);
  EXPECT_EQ(parallel.events_selected, sequential.events_selected);
  EXPECT_EQ(parallel.mjj, sequential.mjj);
  for (const auto& [name, counts] : sequential.datasets) {
    EXPECT_EQ(parallel.datasets.at(name).events_selected, counts.events_selected) << name;
    EXPECT_EQ(parallel.datasets.at(name).chunks, counts.chunks) << name;
    EXPECT_EQ(parallel.mjj_by_dataset.at(name), sequential.mjj_by_dataset.at(name)) << name;
  }
}

}  // namespace
}  // namespace sample_analysis
}  // namespace roastcoffea
