#include "live/live_server.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "live/http_test_client.h"
#include "schema/chunk_table.h"

namespace roastcoffea {
namespace live {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ParseServeAddressTest, HostsAndPorts) {
  absl::StatusOr<HttpServerOptions> loopback = ParseServeAddress(":8000");
  ASSERT_TRUE(loopback.ok());
  EXPECT_EQ(loopback->host, "127.0.0.1");
  EXPECT_EQ(loopback->port, 8000);
  EXPECT_EQ(ParseServeAddress("9000")->port, 9000);
  EXPECT_EQ(ParseServeAddress("0.0.0.0:0")->host, "0.0.0.0");
  EXPECT_EQ(ParseServeAddress("[::1]:1")->host, "[::1]");
  for (const char* bad : {"", ":", ":70000", "host:x", ":-1"}) {
    absl::StatusOr<HttpServerOptions> parsed = ParseServeAddress(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr("--serve="));
  }
}

v1::Measurement Saved() {
  v1::Measurement m;
  m.mutable_metadata()->set_name("saved-run");
  m.mutable_metadata()->set_backend("threadpool");
  m.mutable_metadata()->set_elapsed_seconds(3);
  for (int i = 0; i < 5; ++i) {
    v1::ChunkRecord& chunk = *m.add_chunks();
    chunk.set_events(10);
    chunk.set_duration_seconds(0.2);
    chunk.set_status(i == 4 ? v1::CHUNK_STATUS_FAILED : v1::CHUNK_STATUS_OK);
  }
  m.mutable_metrics()->set_findings_evaluated(true);
  return m;
}

TEST(LiveServerTest, StartingThenTheFinalMeasurement) {
  LiveServerOptions options;
  options.version = "test";
  absl::StatusOr<std::unique_ptr<LiveServer>> server = LiveServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  EXPECT_THAT(
      Body(Get(port, "/metrics")),
      HasSubstr("roastcoffea_chunks_total{backend=\"\",run=\"(starting)\",status=\"ok\"} 0"));
  EXPECT_THAT(Body(Get(port, "/")), HasSubstr("<meta http-equiv=\"refresh\""));
  (*server)->SetFinal(Saved());
  const std::string metrics = Body(Get(port, "/metrics", "application/openmetrics-text"));
  EXPECT_THAT(metrics,
              HasSubstr("roastcoffea_chunks_total{backend=\"threadpool\",run=\"saved-run\","
                        "status=\"ok\"} 4"));
  EXPECT_THAT(metrics,
              HasSubstr("roastcoffea_run_finished{backend=\"threadpool\",run=\"saved-run\"} 1"));
  EXPECT_THAT(metrics, HasSubstr("# EOF"));
  // After the run "/" is the final HTML report.
  EXPECT_THAT(Body(Get(port, "/")), HasSubstr("roastcoffea report: saved-run"));
  EXPECT_THAT(Get(port, "/other"), StartsWith("HTTP/1.1 404"));
}

// The exposition without this process's resident memory, which moves between two reads.
std::string WithoutMemoryGauge(const std::string& exposition) {
  std::string kept;
  for (absl::string_view line : absl::StrSplit(exposition, '\n')) {
    if (absl::StrContains(line, "resident_memory")) continue;
    absl::StrAppend(&kept, line, "\n");
  }
  return kept;
}

// A run whose records are held apart as a table gives the same final view as one message.
TEST(LiveServerTest, TheFinalViewOfATableIsThatOfTheWholeMeasurement) {
  LiveServerOptions options;
  options.version = "test";
  absl::StatusOr<std::unique_ptr<LiveServer>> whole = LiveServer::Start(options);
  absl::StatusOr<std::unique_ptr<LiveServer>> table = LiveServer::Start(options);
  ASSERT_TRUE(whole.ok() && table.ok());
  (*whole)->SetFinal(Saved());
  v1::Measurement without_records = Saved();
  const ChunkTable chunks = ChunkTableOf(std::vector<v1::ChunkRecord>(
      without_records.chunks().begin(), without_records.chunks().end()));
  without_records.clear_chunks();
  (*table)->SetFinal(without_records, chunks);
  const std::string metrics = Body(Get((*table)->port(), "/metrics"));
  EXPECT_THAT(metrics,
              HasSubstr("roastcoffea_chunks_total{backend=\"threadpool\",run=\"saved-run\","
                        "status=\"ok\"} 4"));
  EXPECT_EQ(WithoutMemoryGauge(metrics),
            WithoutMemoryGauge(Body(Get((*whole)->port(), "/metrics"))));
  const std::string report = Body(Get((*table)->port(), "/"));
  EXPECT_THAT(report, HasSubstr("roastcoffea report: saved-run"));
  EXPECT_EQ(report, Body(Get((*whole)->port(), "/")));
}

TEST(LiveStatusOfTest, CountsTheSavedChunksAsTheSessionDoes) {
  const LiveStatus status = LiveStatusOf(Saved());
  EXPECT_EQ(status.chunks_ok, 4);
  EXPECT_EQ(status.chunks_failed, 1);
  EXPECT_EQ(status.events, 40);
  EXPECT_EQ(status.duration_buckets[4], 5);  // 0.2 s: the "<= 0.25 s" bucket
  EXPECT_TRUE(status.finished);
}

}  // namespace
}  // namespace live
}  // namespace roastcoffea
