#include "store/segmented_measurement.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "store/measurement_io.h"
#include "store/worker_series_ends.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

std::string TempDir() { return std::getenv("TEST_TMPDIR"); }

bool Exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

// Records over several parts, rejected records, and every other kind of field.
v1::Measurement Big() {
  v1::Measurement m;
  m.mutable_metadata()->set_name("big");
  m.mutable_metadata()->set_schema_version(kSchemaVersion);
  m.mutable_report()->set_events(123);
  m.mutable_tracking()->add_worker_count(4);
  m.add_spans()->set_name("span");
  m.mutable_metrics()->mutable_workflow()->set_total_events(123);
  m.mutable_metrics()->mutable_chunks()->set_num_chunks(2);
  m.mutable_metrics()->mutable_chunks()->add_chunk_info()->set_file("file0.root");
  m.mutable_metrics()->mutable_chunks()->add_chunk_info()->set_entry_start(7);
  m.add_profiles()->set_worker("w");
  m.add_warnings()->set_code("w");
  for (int i = 0; i < 2 * store_internal::kChunksPerPart + 7; ++i) {
    v1::ChunkRecord& chunk = *m.add_chunks();
    chunk.set_file(absl::StrCat("file", i % 13, ".root"));
    chunk.set_entry_start(i);
    chunk.set_events(i + 1);
  }
  m.add_rejected_chunks()->set_file("bad.root");
  return m;
}

// Over the threshold (lowered here: the real one is 1 GiB), a measurement is saved in parts and
// reads back identical.
TEST(SegmentedMeasurementTest, AMeasurementInPartsReadsBackIdentical) {
  store_internal::SetSegmentThresholdBytesForTesting(1);
  const v1::Measurement big = Big();
  absl::StatusOr<std::string> saved = SaveMeasurement(big, TempDir() + "/parts", "big");
  store_internal::SetSegmentThresholdBytesForTesting(store_internal::kDefaultSegmentThresholdBytes);
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_TRUE(Exists(*saved + "/measurement.pbs"));
  EXPECT_FALSE(Exists(*saved + "/measurement.pb"));
  EXPECT_FALSE(Exists(*saved + "/measurement.json")) << "not written at that size";
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(*saved);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*loaded, big));
  EXPECT_EQ(loaded->chunks_size(), big.chunks_size());
  EXPECT_EQ(loaded->chunks(store_internal::kChunksPerPart).entry_start(),
            store_internal::kChunksPerPart)
      << "in order across parts";
}

// The parts go straight to the file as they are serialized: a write the OS refuses (here the
// file size limit, EFBIG, as a full disk would) is the save's error, naming the file, and
// leaves nothing behind.
TEST(SegmentedMeasurementTest, AWriteRefusedMidwayIsTheSavesErrorAndLeavesNothing) {
  const std::string parent = TempDir() + "/refused";
  store_internal::SetSegmentThresholdBytesForTesting(1);
  v1::Measurement big = Big();
  for (v1::ChunkRecord& chunk : *big.mutable_chunks()) chunk.set_error_text(std::string(200, 'e'));
  ASSERT_GT(big.ByteSizeLong(), size_t{3} << 20);
  struct rlimit before;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
  struct rlimit limited = before;
  limited.rlim_cur = 2 << 20;  // the parts stop after 2 MiB
  const auto previous = signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  absl::StatusOr<std::string> saved = SaveMeasurement(big, parent, "big");
  setrlimit(RLIMIT_FSIZE, &before);
  signal(SIGXFSZ, previous);
  store_internal::SetSegmentThresholdBytesForTesting(store_internal::kDefaultSegmentThresholdBytes);
  ASSERT_FALSE(saved.ok());
  EXPECT_THAT(saved.status().message(), HasSubstr("measurement.pbs"));
  EXPECT_FALSE(Exists(parent + "/big"));
}

TEST(SegmentedMeasurementTest, BelowTheThresholdTheFilesAreAsBefore) {
  absl::StatusOr<std::string> saved = SaveMeasurement(Big(), TempDir() + "/whole", "big");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_TRUE(Exists(*saved + "/measurement.pb"));
  EXPECT_TRUE(Exists(*saved + "/measurement.json"));
  EXPECT_FALSE(Exists(*saved + "/measurement.pbs"));
}

TEST(SegmentedMeasurementTest, ACutFileIsDataLossNamingIt) {
  store_internal::SetSegmentThresholdBytesForTesting(1);
  absl::StatusOr<std::string> saved = SaveMeasurement(Big(), TempDir() + "/cut", "big");
  store_internal::SetSegmentThresholdBytesForTesting(store_internal::kDefaultSegmentThresholdBytes);
  ASSERT_TRUE(saved.ok()) << saved.status();
  const std::string parts = *saved + "/measurement.pbs";
  struct stat info;
  ASSERT_EQ(stat(parts.c_str(), &info), 0);
  ASSERT_EQ(truncate(parts.c_str(), info.st_size - 100), 0);
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(*saved);
  ASSERT_FALSE(loaded.ok());
  EXPECT_TRUE(absl::IsDataLoss(loaded.status())) << loaded.status();
  EXPECT_THAT(loaded.status().message(), HasSubstr(parts));
}

v1::Measurement WithoutRecords(v1::Measurement m) {
  m.clear_chunks();
  m.clear_rejected_chunks();
  return m;
}

// `show` reads only what its tables need: every field but the chunk records, from each form.
TEST(SegmentedMeasurementTest, LoadingWithoutRecordsSkipsOnlyTheRecords) {
  const v1::Measurement big = Big();
  LoadOptions without_records;
  without_records.chunk_records = false;
  for (const int64_t threshold : {int64_t{1}, store_internal::kDefaultSegmentThresholdBytes}) {
    SCOPED_TRACE(threshold == 1 ? "in parts" : "one message");
    store_internal::SetSegmentThresholdBytesForTesting(threshold);
    absl::StatusOr<std::string> saved =
        SaveMeasurement(big, absl::StrCat(TempDir(), "/skip-", threshold), "big");
    store_internal::SetSegmentThresholdBytesForTesting(
        store_internal::kDefaultSegmentThresholdBytes);
    ASSERT_TRUE(saved.ok()) << saved.status();
    absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(*saved, without_records);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->chunks_size(), 0);
    EXPECT_EQ(loaded->rejected_chunks_size(), 0);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*loaded, WithoutRecords(big)));
    if (threshold != 1) {  // and from the JSON copy when the .pb is gone
      ASSERT_EQ(unlink((*saved + "/measurement.pb").c_str()), 0);
      loaded = LoadMeasurement(*saved, without_records);
      ASSERT_TRUE(loaded.ok()) << loaded.status();
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*loaded, WithoutRecords(big)));
    }
  }
}

// `show`'s tables read neither the records nor the per-record chunk_info of the metrics; the
// metrics' other fields, beside chunk_info and above it, are kept.
TEST(SegmentedMeasurementTest, LoadingWithoutChunkInfoKeepsTheRestOfTheMetrics) {
  const v1::Measurement big = Big();
  v1::Measurement expected = WithoutRecords(big);
  expected.mutable_metrics()->mutable_chunks()->clear_chunk_info();
  LoadOptions tables_only;
  tables_only.chunk_records = false;
  tables_only.chunk_info = false;
  for (const int64_t threshold : {int64_t{1}, store_internal::kDefaultSegmentThresholdBytes}) {
    SCOPED_TRACE(threshold == 1 ? "in parts" : "one message");
    store_internal::SetSegmentThresholdBytesForTesting(threshold);
    absl::StatusOr<std::string> saved =
        SaveMeasurement(big, absl::StrCat(TempDir(), "/info-", threshold), "big");
    store_internal::SetSegmentThresholdBytesForTesting(
        store_internal::kDefaultSegmentThresholdBytes);
    ASSERT_TRUE(saved.ok()) << saved.status();
    absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(*saved, tables_only);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->metrics().chunks().num_chunks(), 2);
    EXPECT_EQ(loaded->metrics().workflow().total_events(), 123);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*loaded, expected));
    if (threshold != 1) {  // from the JSON copy
      ASSERT_EQ(unlink((*saved + "/measurement.pb").c_str()), 0);
      loaded = LoadMeasurement(*saved, tables_only);
      ASSERT_TRUE(loaded.ok()) << loaded.status();
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*loaded, expected));
    }
  }
}

// `show`'s tables read of the worker series only their ends: each series is cut while read
// (from parts, one message or the JSON copy) to CutWorkerSeriesToEnds' rows, the rest unchanged.
TEST(SegmentedMeasurementTest, LoadingWithoutWholeWorkerSeriesCutsEachToItsEnds) {
  v1::Measurement big = Big();
  for (const char* name : {"w1", "w2"}) {
    v1::WorkerSeries& series = *big.mutable_tracking()->add_workers();
    series.set_worker(name);
    series.set_kind(v1::SERIES_KIND_STEP);
    for (int i = 0; i < 1000; ++i) {
      series.add_time_unix_ns(1000 + i);
      series.add_executing_tasks(i % 3);
      series.add_cores(2);
    }
  }
  v1::Measurement expected = WithoutRecords(big);
  for (v1::WorkerSeries& series : *expected.mutable_tracking()->mutable_workers()) {
    CutWorkerSeriesToEnds(&series);
    ASSERT_EQ(series.time_unix_ns_size(), 3);
  }
  LoadOptions ends_only;
  ends_only.chunk_records = false;
  ends_only.whole_worker_series = false;
  for (const int64_t threshold : {int64_t{1}, store_internal::kDefaultSegmentThresholdBytes}) {
    SCOPED_TRACE(threshold == 1 ? "in parts" : "one message");
    store_internal::SetSegmentThresholdBytesForTesting(threshold);
    absl::StatusOr<std::string> saved =
        SaveMeasurement(big, absl::StrCat(TempDir(), "/ends-", threshold), "big");
    store_internal::SetSegmentThresholdBytesForTesting(
        store_internal::kDefaultSegmentThresholdBytes);
    ASSERT_TRUE(saved.ok()) << saved.status();
    absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(*saved, ends_only);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*loaded, expected));
    if (threshold != 1) {  // from the JSON copy
      ASSERT_EQ(unlink((*saved + "/measurement.pb").c_str()), 0);
      loaded = LoadMeasurement(*saved, ends_only);
      ASSERT_TRUE(loaded.ok()) << loaded.status();
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*loaded, expected));
    }
  }
  // A measurement without tracking gets none.
  v1::Measurement untracked = Big();
  untracked.clear_tracking();
  absl::StatusOr<std::string> saved = SaveMeasurement(untracked, TempDir(), "untracked");
  ASSERT_TRUE(saved.ok()) << saved.status();
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(*saved, ends_only);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_FALSE(loaded->has_tracking());
}

// A .pb cut inside its records is still DataLoss when the records are skipped (SkipField reads
// past the end), and the JSON copy stands in as before.
TEST(SegmentedMeasurementTest, ACutBinaryIsNoticedWhenRecordsAreSkipped) {
  absl::StatusOr<std::string> saved = SaveMeasurement(Big(), TempDir() + "/cut-pb", "big");
  ASSERT_TRUE(saved.ok()) << saved.status();
  const std::string pb = *saved + "/measurement.pb";
  struct stat info;
  ASSERT_EQ(stat(pb.c_str(), &info), 0);
  ASSERT_EQ(truncate(pb.c_str(), info.st_size - 3), 0);
  LoadOptions without_records;
  without_records.chunk_records = false;
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(*saved, without_records);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->warnings_size(), Big().warnings_size() + 1);
  EXPECT_EQ(loaded->warnings(loaded->warnings_size() - 1).code(), "measurement_pb_corrupt");
}

// Records parts are passed over whole (a seek) when the records are skipped; a file cut inside
// the last one is still DataLoss naming it.
TEST(SegmentedMeasurementTest, ACutRecordsPartIsNoticedWhenRecordsAreSkipped) {
  store_internal::SetSegmentThresholdBytesForTesting(1);
  absl::StatusOr<std::string> saved = SaveMeasurement(Big(), TempDir() + "/cut-skip", "big");
  store_internal::SetSegmentThresholdBytesForTesting(store_internal::kDefaultSegmentThresholdBytes);
  ASSERT_TRUE(saved.ok()) << saved.status();
  LoadOptions without_records;
  without_records.chunk_records = false;
  ASSERT_TRUE(LoadMeasurement(*saved, without_records).ok());
  const std::string parts = *saved + "/measurement.pbs";
  struct stat info;
  ASSERT_EQ(stat(parts.c_str(), &info), 0);
  ASSERT_EQ(truncate(parts.c_str(), info.st_size - 100), 0);
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(*saved, without_records);
  ASSERT_FALSE(loaded.ok());
  EXPECT_TRUE(absl::IsDataLoss(loaded.status())) << loaded.status();
  EXPECT_THAT(loaded.status().message(), HasSubstr(parts));
}

}  // namespace
}  // namespace roastcoffea
