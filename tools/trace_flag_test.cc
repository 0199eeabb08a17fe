#include "tools/trace_flag.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/flags/flag.h"
#include "gtest/gtest.h"
#include "instrumentation/chrome_trace.h"

namespace roastcoffea {
namespace {

v1::Measurement OneChunk() {
  v1::Measurement measurement;
  v1::ChunkRecord* chunk = measurement.add_chunks();
  chunk->set_dataset("qcd");
  chunk->set_start_unix_ns(1000);
  chunk->set_end_unix_ns(5000);
  return measurement;
}

TEST(TraceFlagTest, EmptyFlagWritesNothing) {
  absl::SetFlag(&FLAGS_trace, "");
  std::ostringstream out;
  EXPECT_TRUE(WriteTraceIfRequested(OneChunk(), out).ok());
  EXPECT_EQ(out.str(), "");
}

TEST(TraceFlagTest, WritesTheChromeTraceAndSaysWhere) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/run.trace.json";
  absl::SetFlag(&FLAGS_trace, path);
  std::ostringstream out;
  ASSERT_TRUE(WriteTraceIfRequested(OneChunk(), out).ok());
  EXPECT_NE(out.str().find(path), std::string::npos);
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  EXPECT_EQ(contents.str(), ChromeTraceJson(OneChunk().chunks()));
}

TEST(TraceFlagTest, UnwritablePathIsAnErrorNamingIt) {
  absl::SetFlag(&FLAGS_trace, "/nonexistent-dir/run.trace.json");
  std::ostringstream out;
  const absl::Status status = WriteTraceIfRequested(OneChunk(), out);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("/nonexistent-dir/run.trace.json"),
            std::string::npos);
}

}  // namespace
}  // namespace roastcoffea
