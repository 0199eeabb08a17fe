#include "tools/trace_flag.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "trace/chrome_trace.h"
#include "trace/perfetto_trace.pb.h"

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
  std::ostringstream out;
  EXPECT_TRUE(WriteTrace(OneChunk(), "", out).ok());
  EXPECT_EQ(out.str(), "");
}

TEST(TraceFlagTest, WritesTheChromeTraceAndSaysWhere) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/run.trace.json";
  std::ostringstream out;
  ASSERT_TRUE(WriteTrace(OneChunk(), path, out).ok());
  EXPECT_NE(out.str().find(path), std::string::npos);
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  // The whole measurement: chunks, counters, metadata.
  EXPECT_EQ(contents.str(), ChromeTraceJson(OneChunk()));
}

// What collect's modes call, with the path from their config.
TEST(TraceFlagTest, WriteTraceTakesThePathItIsGiven) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/given.trace.json";
  std::ostringstream out;
  ASSERT_TRUE(WriteTrace(OneChunk(), path, out).ok());
  EXPECT_NE(out.str().find(path), std::string::npos);
  EXPECT_TRUE(std::ifstream(path).good());
  std::ostringstream nothing;
  EXPECT_TRUE(WriteTrace(OneChunk(), "", nothing).ok());
  EXPECT_EQ(nothing.str(), "");
  EXPECT_TRUE(ValidateTracePath("").ok());
  EXPECT_EQ(ValidateTracePath("run.txt").code(), absl::StatusCode::kInvalidArgument);
}

TEST(TraceFlagTest, UnwritablePathIsAnErrorNamingIt) {
  std::ostringstream out;
  const absl::Status status = WriteTrace(OneChunk(), "/nonexistent-dir/run.trace.json", out);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("/nonexistent-dir/run.trace.json"),
            std::string::npos);
}

TEST(TraceFlagTest, TheExtensionPicksTheFormat) {
  for (const char* path : {"run.json", "dir.pftrace/RUN.JSON", "/tmp/a.trace.json"}) {
    EXPECT_EQ(*TraceFormatForPath(path), TraceFormat::kChromeJson) << path;
  }
  for (const char* path : {"run.pftrace", "run.perfetto-trace", "out/run.pb", "RUN.PFTRACE"}) {
    EXPECT_EQ(*TraceFormatForPath(path), TraceFormat::kPerfettoProto) << path;
  }
}

TEST(TraceFlagTest, AnyOtherExtensionIsRejectedNamingTheFlagAndTheAcceptedOnes) {
  for (const char* path : {"run.trace", "run", "run.json/", "trace.json.gz", "dir.json/run"}) {
    const absl::StatusOr<TraceFormat> format = TraceFormatForPath(path);
    ASSERT_FALSE(format.ok()) << path;
    EXPECT_EQ(format.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(format.status().message());
    EXPECT_NE(message.find("--trace"), std::string::npos) << message;
    EXPECT_NE(message.find(".pftrace"), std::string::npos) << message;
    EXPECT_NE(message.find(std::string("'") + path + "'"), std::string::npos) << message;
  }
}

TEST(TraceFlagTest, ValidateAcceptsEmptyAndKnownExtensionsOnly) {
  EXPECT_TRUE(ValidateTracePath("").ok());
  EXPECT_TRUE(ValidateTracePath("run.pftrace").ok());
  EXPECT_EQ(ValidateTracePath("run.txt").code(), absl::StatusCode::kInvalidArgument);
}

TEST(TraceFlagTest, WritesAPerfettoTraceForPftrace) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/run.pftrace";
  std::ostringstream out;
  ASSERT_TRUE(WriteTrace(OneChunk(), path, out).ok());
  EXPECT_NE(out.str().find(path), std::string::npos);
  std::ifstream file(path, std::ios::binary);
  std::stringstream contents;
  contents << file.rdbuf();
  perfetto::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(contents.str()));
  int begins = 0;
  for (const perfetto::TracePacket& packet : trace.packet()) {
    if (packet.track_event().type() == perfetto::TrackEvent::TYPE_SLICE_BEGIN) {
      ++begins;
      EXPECT_EQ(packet.timestamp(), 1000u);
    }
  }
  EXPECT_EQ(begins, 2);  // the run slice (over the chunks here) and the chunk
}

TEST(TraceFlagTest, AnUnknownExtensionWritesNothing) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/run.trace";
  std::ostringstream out;
  const absl::Status status = WriteTrace(OneChunk(), path, out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.str(), "");
  EXPECT_FALSE(std::ifstream(path).good());
}

}  // namespace
}  // namespace roastcoffea
