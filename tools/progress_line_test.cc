#include "tools/progress_line.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
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
}

TEST(FormatProgressTest, AnUnknownTotalHasNoPercentageAndNoEta) {
  EXPECT_EQ(FormatProgress(0, 0, 0, 1.0), "chunks 0 | 0 events/s | elapsed 1.00 s");
  EXPECT_EQ(FormatProgress(7, 0, 7000, 2.0), "chunks 7 | 3.5 k events/s | elapsed 2.00 s");
}

// Dask and TaskVine runs: chunks counted from the engine's tasks, events known only at the end.
TEST(FormatProgressTest, RunningChunksAndNoEventRateWhileEventsAreUnknown) {
  ProgressCounts counts;
  counts.chunks_done = 12;
  counts.chunks_running = 3;
  counts.events = std::nullopt;
  EXPECT_EQ(FormatProgress(counts, 4.0), "chunks 12, 3 running | elapsed 4.00 s");
  counts.chunks_total = 48;
  EXPECT_EQ(FormatProgress(counts, 4.0),
            "chunks 12/48 (25%), 3 running | elapsed 4.00 s | ETA 12.0 s");
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

TEST(FormatProgressTest, ALiveStatusCountedFromTheEnginesTasksHasNoEvents) {
  LiveStatus live;
  live.chunks_ok = 9;
  live.chunks_failed = 1;
  live.chunks_running = 4;
  live.chunks_from_engine_tasks = true;
  EXPECT_EQ(FormatProgress(ProgressOfLiveStatus(live), 5.0),
            "chunks 10, 4 running | elapsed 5.00 s");
  live.chunks_from_engine_tasks = false;
  live.chunks_running.reset();
  live.events = 5000;
  live.compressed_bytes_read = 10'000'000;
  live.chunks_total = 20;
  EXPECT_EQ(FormatProgress(ProgressOfLiveStatus(live), 5.0),
            "chunks 10/20 (50%) | 1.0 k events/s | 2.0 MB/s | elapsed 5.00 s | ETA 5.00 s");
}

// Draws on a pseudo-terminal and returns what reached it.
std::string DrawOnATerminal(const std::function<void(ProgressLine&)>& run,
                            std::function<ProgressCounts()> source = nullptr) {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  EXPECT_GE(master, 0);
  EXPECT_EQ(grantpt(master), 0);
  EXPECT_EQ(unlockpt(master), 0);
  FILE* terminal = std::fopen(ptsname(master), "w");
  EXPECT_NE(terminal, nullptr);
  {
    std::optional<ProgressLine> line;
    if (source) {
      line.emplace(std::move(source), terminal);
    } else {
      line.emplace(4, terminal);
    }
    EXPECT_TRUE(line->enabled());
    run(*line);
    line->Finish();
  }
  std::fclose(terminal);
  std::string out;
  char buffer[4096];
  const int flags = fcntl(master, F_GETFL);
  fcntl(master, F_SETFL, flags | O_NONBLOCK);
  for (ssize_t n; (n = read(master, buffer, sizeof(buffer))) > 0;) out.append(buffer, n);
  close(master);
  return out;
}

TEST(ProgressLineTest, DrawsOnATerminalAndClearsTheLineWithAnEscape) {
  unsetenv("NO_COLOR");
  setenv("TERM", "xterm", 1);
  const std::string out = DrawOnATerminal([](ProgressLine& line) { line.ChunkDone(10); });
  EXPECT_TRUE(absl::StrContains(out, "\r\033[Kchunks 1/4 (25%)")) << out;
}

TEST(ProgressLineTest, NoColorAndDumbTerminalsGetNoEscapeSequence) {
  for (const auto& [name, value] : {std::pair<const char*, const char*>{"NO_COLOR", "1"},
                                    std::pair<const char*, const char*>{"TERM", "dumb"}}) {
    unsetenv("NO_COLOR");
    setenv("TERM", "xterm", 1);
    setenv(name, value, 1);
    EXPECT_TRUE(PlainTerminalFromEnvironment()) << name;
    const std::string out = DrawOnATerminal([](ProgressLine& line) { line.ChunkDone(10); });
    EXPECT_TRUE(absl::StrContains(out, "\rchunks 1/4 (25%)")) << name << ": " << out;
    EXPECT_FALSE(absl::StrContains(out, "\033")) << name << ": " << out;
  }
  unsetenv("NO_COLOR");
  setenv("TERM", "xterm", 1);
  EXPECT_FALSE(PlainTerminalFromEnvironment());
}

TEST(ProgressLineTest, DrawsWhatItsSourceSays) {
  unsetenv("NO_COLOR");
  ProgressCounts counts;
  counts.chunks_done = 5;
  counts.chunks_total = 10;
  counts.chunks_running = 2;
  counts.events = std::nullopt;
  const std::string out = DrawOnATerminal([](ProgressLine&) {}, [counts] { return counts; });
  EXPECT_TRUE(absl::StrContains(out, "chunks 5/10 (50%), 2 running | elapsed")) << out;
  EXPECT_FALSE(absl::StrContains(out, "events/s")) << out;
}

}  // namespace
}  // namespace roastcoffea
