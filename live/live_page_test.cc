#include "live/live_page.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace live {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(LivePageTest, ShowsTheWorkersNowAndOverTime) {
  LiveStatus s;
  s.name = "r";
  s.backend = "dask";
  s.workers = 3;
  s.cores = 12;
  s.worker_memory_bytes = 2.5e9;
  s.chunks_running = 7;
  s.worker_timeline = {{0, 1, 4, 1e9}, {1, 2, 8, 2e9}, {2, 3, 12, 2.5e9}};
  const std::string page = RenderLivePage(s);
  EXPECT_THAT(page, HasSubstr("Workers now</div><div class=\"value\">3<"));
  EXPECT_THAT(page, HasSubstr("Cores now</div><div class=\"value\">12<"));
  EXPECT_THAT(page, HasSubstr("Memory now</div><div class=\"value\">2.50 GB<"));
  EXPECT_THAT(page, HasSubstr("Running chunks</div><div class=\"value\">7<"));
  // The workers' line: from 1 of 12 at the left to 3 of 12 at the right.
  EXPECT_THAT(page, HasSubstr("id=\"workers-over-time\""));
  EXPECT_THAT(page, HasSubstr("points=\"0.0,138.3 500.0,126.7 1000.0,115.0 \""));
  EXPECT_THAT(page, Not(HasSubstr("<script")));
}

TEST(LivePageTest, WithoutLiveWorkersThereIsNoWorkersSection) {
  LiveStatus s;
  s.name = "r";
  s.backend = "taskvine";
  EXPECT_THAT(RenderLivePage(s), Not(HasSubstr("Workers now")));
}

TEST(LivePageTest, EngineCountedChunksHaveNoEventsYet) {
  LiveStatus s;
  s.name = "r";
  s.backend = "dask";
  s.elapsed_seconds = 10;
  s.chunks_ok = 5;
  s.chunks_from_engine_tasks = true;
  const std::string page = RenderLivePage(s);
  EXPECT_THAT(page, HasSubstr("Events</div><div class=\"value\">N/A until the end<"));
  EXPECT_THAT(page, HasSubstr("Event rate</div><div class=\"value\">N/A<"));
}

}  // namespace
}  // namespace live
}  // namespace roastcoffea
