// A killed run's checkpoint read back through LoadAnyMeasurement, as `collect show` reads it.
#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/any_measurement.h"
#include "schema/measurement.pb.h"
#include "store/checkpoint.h"
#include "store/measurement_io.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

std::string TempDir() { return std::getenv("TEST_TMPDIR"); }

v1::ChunkRecord Chunk(int i) {
  v1::ChunkRecord chunk;
  chunk.set_dataset("qcd");
  chunk.set_file("jets.root");
  chunk.set_entry_start(i * 1000);
  chunk.set_entry_stop(i * 1000 + 1000);
  chunk.set_events(1000);
  chunk.set_compressed_bytes_read(4096);
  chunk.set_duration_seconds(0.5);
  chunk.set_start_unix_ns((1700000000 + i) * int64_t{1000000000});
  chunk.set_end_unix_ns((1700000000 + i) * int64_t{1000000000} + 500000000);
  chunk.set_status(v1::CHUNK_STATUS_OK);
  return chunk;
}

// A checkpoint as a session writes it: metadata first, chunks, checkpoint marks.
std::string WriteCheckpoint(const std::string& parent, const std::string& name, int chunks) {
  mkdir(parent.c_str(), 0755);
  v1::MeasurementMetadata metadata;
  metadata.set_name(name);
  metadata.set_backend("threadpool");
  metadata.mutable_start_time()->set_seconds(1700000000);
  const std::string directory = CheckpointDirectoryFor(parent + "/" + name);
  absl::StatusOr<CheckpointWriter> writer = CheckpointWriter::Create(directory, metadata);
  EXPECT_TRUE(writer.ok()) << writer.status();
  std::vector<v1::ChunkRecord> records;
  for (int i = 0; i < chunks; ++i) records.push_back(Chunk(i));
  std::vector<const v1::ChunkRecord*> pointers;
  for (const v1::ChunkRecord& r : records) pointers.push_back(&r);
  EXPECT_TRUE(writer->Append(pointers, absl::FromUnixSeconds(1700000030)).ok());
  return directory;
}

TEST(CheckpointMeasurementTest, AKilledRunIsReadFromItsCheckpointMarkedPartial) {
  const std::string parent = TempDir() + "/killed";
  const std::string directory = WriteCheckpoint(parent, "run1", 4);
  // By the measurement's own name (it was never saved) and by the checkpoint's.
  for (const std::string& path : {parent + "/run1", directory, directory + "/checkpoint.pbs"}) {
    absl::StatusOr<v1::Measurement> m = LoadAnyMeasurement(path);
    ASSERT_TRUE(m.ok()) << path << ": " << m.status();
    EXPECT_TRUE(m->metadata().interrupted());
    EXPECT_THAT(m->metadata().interruption(), HasSubstr("without saving"));
    EXPECT_THAT(m->metadata().interruption(), HasSubstr("30.0 s after the start (4 chunks)"));
    EXPECT_DOUBLE_EQ(m->metadata().elapsed_seconds(), 30.0);
    EXPECT_EQ(m->chunks_size(), 4);
    EXPECT_EQ(m->report().events(), 4000) << "the report is built from the chunk records";
    EXPECT_EQ(m->metrics().chunks().num_chunks(), 4);
    EXPECT_EQ(m->metrics().workflow().total_events(), 4000);
    bool partial = false;
    for (const v1::Warning& w : m->warnings()) partial |= w.code() == "partial_checkpoint";
    EXPECT_TRUE(partial);
  }
}

// A killed TaskVine run's checkpoint has no chunk records (they reach collect at the end): the
// partial says so and how to rebuild the run from the logs on disk (--taskvine_logs as given).
TEST(CheckpointMeasurementTest, AKilledTaskVineRunSaysHowToRebuildItsChunks) {
  const std::string parent = TempDir() + "/vine";
  mkdir(parent.c_str(), 0755);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"collect", "--backend=taskvine", "--follow",
                                 "--taskvine_logs=/runs/vine/transactions"},
        std::vector<std::string>{"collect", "-taskvine_logs", "/runs/vine/transactions"}}) {
    v1::MeasurementMetadata metadata;
    metadata.set_name("vine");
    metadata.set_backend("taskvine");
    metadata.mutable_start_time()->set_seconds(1700000000);
    for (const std::string& arg : args) metadata.add_command_line(arg);
    const std::string directory = CheckpointDirectoryFor(parent + "/vine");
    ASSERT_EQ(std::system(("rm -rf '" + directory + "'").c_str()), 0);
    absl::StatusOr<CheckpointWriter> writer = CheckpointWriter::Create(directory, metadata);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE(writer->Append({}, absl::FromUnixSeconds(1700000010)).ok());
    absl::StatusOr<v1::Measurement> m = LoadAnyMeasurement(directory);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->chunks_size(), 0);
    std::string message;
    for (const v1::Warning& w : m->warnings()) {
      if (w.code() == "taskvine_chunks_at_end") message = w.message();
    }
    EXPECT_THAT(message, HasSubstr("no chunk records"));
    EXPECT_THAT(message,
                HasSubstr("`collect --backend=taskvine --taskvine_logs=/runs/vine/transactions` "
                          "(without --follow)"));
  }
  // Another backend's partial without chunks: no such warning.
  absl::StatusOr<v1::Measurement> other =
      LoadAnyMeasurement(WriteCheckpoint(TempDir() + "/empty", "run", 0));
  ASSERT_TRUE(other.ok()) << other.status();
  for (const v1::Warning& w : other->warnings()) EXPECT_NE(w.code(), "taskvine_chunks_at_end");
}

// A SIGKILLed Dask run (#25): the worker timeline its checkpoints hold is in the measurement and
// its figures.
TEST(CheckpointMeasurementTest, AKilledDaskRunKeepsItsWorkerTimeline) {
  const std::string parent = TempDir() + "/killed-dask";
  mkdir(parent.c_str(), 0755);
  v1::MeasurementMetadata metadata;
  metadata.set_name("dask1");
  metadata.set_backend("dask");
  metadata.mutable_start_time()->set_seconds(1700000000);
  const std::string directory = CheckpointDirectoryFor(parent + "/dask1");
  absl::StatusOr<CheckpointWriter> writer = CheckpointWriter::Create(directory, metadata);
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (int segment = 0; segment < 3; ++segment) {
    v1::TrackingData tracking;
    tracking.set_backend("dask");
    tracking.set_interval_seconds(1);
    tracking.set_worker_count_kind(v1::SERIES_KIND_SAMPLED);
    for (int k = 0; k < 10; ++k) {
      const int64_t t = (1700000000 + segment * 10 + k) * int64_t{1000000000};
      tracking.add_worker_count_time_unix_ns(t);
      tracking.add_worker_count(3);
      for (int w = 0; w < 3; ++w) {
        if (tracking.workers_size() <= w) tracking.add_workers()->set_worker(absl::StrCat("w", w));
        v1::WorkerSeries& series = *tracking.mutable_workers(w);
        series.set_kind(v1::SERIES_KIND_SAMPLED);
        series.add_time_unix_ns(t);
        series.add_cores(4);
        series.add_memory_bytes(1e9);
        series.add_memory_limit_bytes(4e9);
      }
    }
    ASSERT_TRUE(
        writer->Append({}, absl::FromUnixSeconds(1700000010 + segment * 10), &tracking).ok());
  }
  absl::StatusOr<v1::Measurement> m = LoadAnyMeasurement(parent + "/dask1");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(m->metadata().interruption(), HasSubstr("with the tracking series"));
  ASSERT_EQ(m->tracking().workers_size(), 3);
  EXPECT_EQ(m->tracking().workers(2).time_unix_ns_size(), 30);
  EXPECT_EQ(m->tracking().worker_count_size(), 30);
  EXPECT_EQ(m->metrics().workers().peak_workers(), 3);
  EXPECT_DOUBLE_EQ(m->metrics().workers().avg_workers(), 3);
}

// A measurement saved whole wins over a checkpoint left beside it.
TEST(CheckpointMeasurementTest, TheSavedMeasurementWinsOverItsCheckpoint) {
  const std::string parent = TempDir() + "/saved";
  WriteCheckpoint(parent, "run2", 2);
  v1::Measurement whole;
  whole.mutable_metadata()->set_name("run2");
  ASSERT_TRUE(SaveMeasurement(whole, parent, "run2").ok());
  absl::StatusOr<v1::Measurement> m = LoadAnyMeasurement(parent + "/run2");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_FALSE(m->metadata().interrupted());
  EXPECT_EQ(m->chunks_size(), 0);
}

// A run's name whose checkpoint.pbs is not a regular file: the error names that file and says
// why, instead of "measurement directory ... does not exist".
TEST(CheckpointMeasurementTest, ACheckpointThatIsNotAFileIsAnErrorNamingIt) {
  const std::string parent = TempDir() + "/fifo-run";
  const std::string directory = CheckpointDirectoryFor(parent + "/run3");
  ASSERT_EQ(mkdir(parent.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(directory.c_str(), 0755), 0);
  ASSERT_EQ(mkfifo((directory + "/checkpoint.pbs").c_str(), 0644), 0);
  absl::StatusOr<v1::Measurement> m = LoadAnyMeasurement(parent + "/run3");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(),
              HasSubstr(directory + "/checkpoint.pbs' is not a regular file"));
}

TEST(CheckpointMeasurementTest, NeitherMeasurementNorCheckpointIsNotFound) {
  absl::StatusOr<v1::Measurement> m = LoadAnyMeasurement(TempDir() + "/nothing-here");
  EXPECT_TRUE(absl::IsNotFound(m.status())) << m.status();
}

}  // namespace
}  // namespace roastcoffea
