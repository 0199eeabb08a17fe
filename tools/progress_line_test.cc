#include "tools/progress_line.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

TEST(FormatProgressTest, ShowsChunksRateElapsedAndEta) {
  EXPECT_EQ(FormatProgress(12, 96, 3'000'000, 2.0),
            "chunks 12/96 (12%) | 1.50 M events/s | elapsed 2.00 s | ETA 14.0 s");
  EXPECT_EQ(FormatProgress(96, 96, 4'000, 2.0),
            "chunks 96/96 (100%) | 2.0 k events/s | elapsed 2.00 s | ETA 0 s");
  EXPECT_EQ(FormatProgress(1, 10, 500, 1.0),
            "chunks 1/10 (10%) | 500 events/s | elapsed 1.00 s | ETA 9.00 s");
}

TEST(FormatProgressTest, ShowsTheByteRateOnceBytesWereRead) {
  EXPECT_EQ(FormatProgress(12, 96, 3'000'000, 2.0, 91'200'000),
            "chunks 12/96 (12%) | 1.50 M events/s | 45.6 MB/s | elapsed 2.00 s | ETA 14.0 s");
}

TEST(FormatProgressTest, NoEtaBeforeTheFirstChunkAndNoDivisionByZero) {
  EXPECT_EQ(FormatProgress(0, 96, 0, 0.0), "chunks 0/96 (0%) | 0 events/s | elapsed 0 s | ETA --");
  EXPECT_EQ(FormatProgress(0, 0, 0, 1.0), "chunks 0/0 (0%) | 0 events/s | elapsed 1.00 s | ETA --");
}

TEST(ProgressLineTest, SilentWhenTheStreamIsNotATerminal) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/progress.txt";
  FILE* file = std::fopen(path.c_str(), "w");
  ASSERT_NE(file, nullptr);
  {
    ProgressLine progress(8, file);
    EXPECT_FALSE(progress.enabled());
    std::vector<std::thread> workers;
    for (int i = 0; i < 4; ++i) {
      workers.emplace_back([&] {
        for (int j = 0; j < 2; ++j) progress.ChunkDone(100);
      });
    }
    for (std::thread& worker : workers) worker.join();
  }
  std::fclose(file);
  std::ifstream in(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "");
}

}  // namespace
}  // namespace roastcoffea
