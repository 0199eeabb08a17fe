// ForEachChunkRecord (store/measurement_io.h) and the part-by-part reader under it.
#include "store/record_stream.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "store/measurement_io.h"
#include "store/segmented_measurement.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

std::string TempDir() { return std::getenv("TEST_TMPDIR"); }

// Records over three parts, a rejected record, and fields around them.
v1::Measurement Big() {
  v1::Measurement m;
  m.mutable_metadata()->set_name("big");
  m.mutable_metadata()->set_schema_version(kSchemaVersion);
  m.mutable_metrics()->mutable_workflow()->set_total_events(123);
  m.add_warnings()->set_code("w");
  for (int i = 0; i < 2 * store_internal::kChunksPerPart + 7; ++i) {
    v1::ChunkRecord& chunk = *m.add_chunks();
    chunk.set_file(absl::StrCat("file", i % 13, ".root"));
    chunk.set_entry_start(i);
    chunk.set_events(i + 1);
    if (i % 5 == 0) chunk.add_accessed_branches("Muon_pt");
  }
  m.add_rejected_chunks()->set_file("bad.root");
  return m;
}

// Big() with tracked workers: series of different lengths (a reused message must not carry a
// sample of the series before), and tracking fields around them.
v1::Measurement BigTracked() {
  v1::Measurement m = Big();
  v1::TrackingData& tracking = *m.mutable_tracking();
  tracking.set_interval_seconds(10);
  tracking.add_worker_count_time_unix_ns(5);
  tracking.add_worker_count(3);
  for (int w = 0; w < 3; ++w) {
    v1::WorkerSeries& series = *tracking.add_workers();
    series.set_worker(absl::StrCat("worker-", w));
    for (int t = 0; t < 5 - 2 * w; ++t) {
      series.add_time_unix_ns(t * 1000 + w);
      series.add_memory_bytes(1e9 + t);
    }
  }
  tracking.add_queued_chunks(4);
  return m;
}

std::vector<v1::WorkerSeries> VisitedSeries(const std::string& directory, absl::Status* status) {
  std::vector<v1::WorkerSeries> out;
  *status = ForEachWorkerSeries(directory, [&out](const v1::WorkerSeries& series) {
    out.push_back(series);
    return absl::OkStatus();
  });
  return out;
}

absl::StatusOr<std::string> Save(const v1::Measurement& m, const std::string& name, bool in_parts) {
  if (in_parts) store_internal::SetSegmentThresholdBytesForTesting(1);
  absl::StatusOr<std::string> saved = SaveMeasurement(m, TempDir() + "/stream", name);
  store_internal::SetSegmentThresholdBytesForTesting(store_internal::kDefaultSegmentThresholdBytes);
  return saved;
}

std::vector<v1::ChunkRecord> Visited(const std::string& directory, absl::Status* status) {
  std::vector<v1::ChunkRecord> out;
  *status = ForEachChunkRecord(directory, [&out](const v1::ChunkRecord& record) {
    out.push_back(record);
    return absl::OkStatus();
  });
  return out;
}

void ExpectSameRecords(const std::vector<v1::ChunkRecord>& visited, const v1::Measurement& m) {
  ASSERT_EQ(visited.size(), static_cast<size_t>(m.chunks_size()));
  for (size_t i = 0; i < visited.size(); ++i) {
    // A reused message must not carry a field of the record before.
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(visited[i],
                                                                   m.chunks(static_cast<int>(i))))
        << i;
  }
}

TEST(RecordStreamTest, VisitsEveryRecordOfAMeasurementInPartsInOrder) {
  const v1::Measurement big = Big();
  absl::StatusOr<std::string> saved = Save(big, "parts", /*in_parts=*/true);
  ASSERT_TRUE(saved.ok()) << saved.status();
  ASSERT_EQ(access((*saved + "/measurement.pbs").c_str(), F_OK), 0);
  absl::Status status;
  const std::vector<v1::ChunkRecord> visited = Visited(*saved, &status);
  ASSERT_TRUE(status.ok()) << status;
  ExpectSameRecords(visited, big);
}

TEST(RecordStreamTest, VisitsEveryRecordOfAMeasurementInOneFile) {
  const v1::Measurement big = Big();
  absl::StatusOr<std::string> saved = Save(big, "single", /*in_parts=*/false);
  ASSERT_TRUE(saved.ok()) << saved.status();
  ASSERT_EQ(access((*saved + "/measurement.pb").c_str(), F_OK), 0);
  absl::Status status;
  const std::vector<v1::ChunkRecord> visited = Visited(*saved, &status);
  ASSERT_TRUE(status.ok()) << status;
  ExpectSameRecords(visited, big);
}

TEST(RecordStreamTest, VisitsEveryWorkerSeriesInOrderInPartsOrOneFile) {
  const v1::Measurement tracked = BigTracked();
  for (const bool in_parts : {true, false}) {
    absl::StatusOr<std::string> saved =
        Save(tracked, in_parts ? "series-parts" : "series-single", in_parts);
    ASSERT_TRUE(saved.ok()) << saved.status();
    ASSERT_EQ(access((*saved + (in_parts ? "/measurement.pbs" : "/measurement.pb")).c_str(), F_OK),
              0);
    EXPECT_EQ(SavedInParts(*saved), in_parts);
    absl::Status status;
    const std::vector<v1::WorkerSeries> visited = VisitedSeries(*saved, &status);
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_EQ(visited.size(), 3u);
    for (int w = 0; w < 3; ++w) {
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(visited[w],
                                                                     tracked.tracking().workers(w)))
          << in_parts << " " << w;
    }
  }
}

// Only the instants, the kind and the columns asked for, from a measurement in parts (the rest
// skipped, nothing carried over from the series before); from one file the series whole.
TEST(RecordStreamTest, WorkerSeriesColumnsAreTheSeriesWithOnlyThoseColumns) {
  v1::Measurement tracked = BigTracked();
  for (v1::WorkerSeries& series : *tracked.mutable_tracking()->mutable_workers()) {
    series.set_kind(v1::SERIES_KIND_STEP);
    series.set_host("h");
    for (int i = 0; i < series.time_unix_ns_size(); ++i) {
      series.add_executing_tasks(i);
      series.add_cores(4);
    }
  }
  const std::vector<int> columns = {v1::WorkerSeries::kExecutingTasksFieldNumber,
                                    v1::WorkerSeries::kCpuPercentFieldNumber,
                                    v1::WorkerSeries::kTimeUnixNsFieldNumber, 99};  // ignored
  for (const bool in_parts : {true, false}) {
    absl::StatusOr<std::string> saved =
        Save(tracked, in_parts ? "columns-parts" : "columns-single", in_parts);
    ASSERT_TRUE(saved.ok()) << saved.status();
    std::vector<v1::WorkerSeries> visited;
    const absl::Status status =
        ForEachWorkerSeriesColumns(*saved, columns, [&](const v1::WorkerSeries& series) {
          visited.push_back(series);
          return absl::OkStatus();
        });
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_EQ(visited.size(), 3u);
    for (int w = 0; w < 3; ++w) {
      v1::WorkerSeries expected = tracked.tracking().workers(w);
      if (in_parts) {
        v1::WorkerSeries only;
        *only.mutable_time_unix_ns() = expected.time_unix_ns();
        *only.mutable_executing_tasks() = expected.executing_tasks();
        only.set_kind(expected.kind());
        expected = only;
      }
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(visited[w], expected))
          << in_parts << " " << w << ": " << visited[w].ShortDebugString();
    }
  }
}

TEST(RecordStreamTest, AWorkerSeriesVisitErrorStopsTheReading) {
  absl::StatusOr<std::string> saved = Save(BigTracked(), "series-stop", /*in_parts=*/true);
  ASSERT_TRUE(saved.ok()) << saved.status();
  int calls = 0;
  const absl::Status status = ForEachWorkerSeries(*saved, [&calls](const v1::WorkerSeries&) {
    return ++calls == 2 ? absl::CancelledError("enough") : absl::OkStatus();
  });
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  EXPECT_EQ(calls, 2);
}

TEST(RecordStreamTest, AVisitErrorStopsTheReading) {
  absl::StatusOr<std::string> saved = Save(Big(), "stop", /*in_parts=*/true);
  ASSERT_TRUE(saved.ok()) << saved.status();
  int calls = 0;
  const absl::Status status = ForEachChunkRecord(*saved, [&calls](const v1::ChunkRecord&) {
    return ++calls == 3 ? absl::CancelledError("enough") : absl::OkStatus();
  });
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  EXPECT_EQ(calls, 3);
}

// Each record's bytes, in order: in place in the read buffer, or copied when a record straddles
// its end or is larger than it (a 300 KB record; the buffer is 256 KiB).
TEST(RecordStreamTest, SerializedRecordsAreTheRecordsInOrderInPartsOrOneFile) {
  v1::Measurement big = Big();
  big.mutable_chunks(5)->set_error_text(std::string(300 << 10, 'x'));
  big.mutable_chunks(big.chunks_size() - 1)->set_error_text(std::string(300 << 10, 'y'));
  for (const bool in_parts : {true, false}) {
    absl::StatusOr<std::string> saved =
        Save(big, in_parts ? "serialized-parts" : "serialized-single", in_parts);
    ASSERT_TRUE(saved.ok()) << saved.status();
    EXPECT_EQ(SavedInParts(*saved), in_parts);
    std::vector<v1::ChunkRecord> visited;
    const absl::Status status = ForEachSerializedChunkRecord(*saved, [&](absl::string_view bytes) {
      visited.emplace_back();
      EXPECT_TRUE(visited.back().ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
      return absl::OkStatus();
    });
    ASSERT_TRUE(status.ok()) << status;
    ExpectSameRecords(visited, big);
  }
}

TEST(RecordStreamTest, SerializedRecordsStopAtAVisitErrorAndFindACutFile) {
  absl::StatusOr<std::string> saved = Save(Big(), "serialized-stop", /*in_parts=*/true);
  ASSERT_TRUE(saved.ok()) << saved.status();
  int calls = 0;
  absl::Status status = ForEachSerializedChunkRecord(*saved, [&calls](absl::string_view) {
    return ++calls == 3 ? absl::CancelledError("enough") : absl::OkStatus();
  });
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  EXPECT_EQ(calls, 3);
  const std::string parts = *saved + "/measurement.pbs";
  struct stat info;
  ASSERT_EQ(stat(parts.c_str(), &info), 0);
  ASSERT_EQ(truncate(parts.c_str(), info.st_size - 100), 0);
  status = ForEachSerializedChunkRecord(*saved, [](absl::string_view) { return absl::OkStatus(); });
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(parts));
  status = ForEachSerializedChunkRecord(TempDir() + "/nothing-here",
                                        [](absl::string_view) { return absl::OkStatus(); });
  EXPECT_TRUE(absl::IsNotFound(status)) << status;
}

TEST(RecordStreamTest, ACutShortFileIsDataLossNamingItAndThePart) {
  absl::StatusOr<std::string> saved = Save(Big(), "cut", /*in_parts=*/true);
  ASSERT_TRUE(saved.ok()) << saved.status();
  const std::string parts = *saved + "/measurement.pbs";
  struct stat info;
  ASSERT_EQ(stat(parts.c_str(), &info), 0);
  ASSERT_EQ(truncate(parts.c_str(), info.st_size - 100), 0);
  absl::Status status;
  Visited(*saved, &status);
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(parts));
  EXPECT_THAT(status.message(), HasSubstr("is cut short or does not parse"));
}

TEST(RecordStreamTest, NotAMeasurementIsNotFound) {
  absl::Status status;
  Visited(TempDir() + "/nothing-here", &status);
  EXPECT_TRUE(absl::IsNotFound(status)) << status;
  VisitedSeries(TempDir() + "/nothing-here", &status);
  EXPECT_TRUE(absl::IsNotFound(status)) << status;
  EXPECT_FALSE(SavedInParts(TempDir() + "/nothing-here"));
}

TEST(RecordStreamTest, ACutShortFileIsDataLossForTheWorkerSeriesToo) {
  absl::StatusOr<std::string> saved = Save(BigTracked(), "series-cut", /*in_parts=*/true);
  ASSERT_TRUE(saved.ok()) << saved.status();
  const std::string parts = *saved + "/measurement.pbs";
  ASSERT_EQ(truncate(parts.c_str(), 200), 0);  // inside the first part
  absl::Status status;
  VisitedSeries(*saved, &status);
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(parts));
}

}  // namespace
}  // namespace roastcoffea
