#include "store/checkpoint.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

std::string TempDir() { return std::getenv("TEST_TMPDIR"); }

v1::ChunkRecord Chunk(int i) {
  v1::ChunkRecord chunk;
  chunk.set_file(absl::StrCat("f", i, ".root"));
  chunk.set_entry_start(i * 100);
  chunk.set_entry_stop(i * 100 + 100);
  chunk.set_events(100);
  return chunk;
}

v1::MeasurementMetadata Metadata() {
  v1::MeasurementMetadata metadata;
  metadata.set_name("run");
  metadata.set_backend("threadpool");
  (*metadata.mutable_configuration())["threads"] = "2";
  return metadata;
}

TEST(CheckpointTest, WhatWasAppendedIsReadBack) {
  const std::string dir = CheckpointDirectoryFor(TempDir() + "/m/run/");
  ASSERT_EQ(dir, TempDir() + "/m/run.checkpoint");
  mkdir((TempDir() + "/m").c_str(), 0755);
  absl::StatusOr<CheckpointWriter> writer = CheckpointWriter::Create(dir, Metadata());
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_TRUE(IsCheckpointDirectory(dir));
  std::vector<v1::ChunkRecord> chunks = {Chunk(0), Chunk(1), Chunk(2)};
  ASSERT_TRUE(writer->Append({&chunks[0], &chunks[1]}, absl::FromUnixSeconds(100)).ok());
  ASSERT_TRUE(writer->Append({}, absl::FromUnixSeconds(130)).ok());
  ASSERT_TRUE(writer->Append({&chunks[2]}, absl::FromUnixSeconds(160)).ok());
  absl::StatusOr<Checkpoint> read = ReadCheckpoint(dir);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->metadata.name(), "run");
  EXPECT_EQ(read->metadata.configuration().at("threads"), "2");
  ASSERT_EQ(read->chunks.size(), 3u);
  EXPECT_EQ(read->chunks[2].file(), "f2.root");
  EXPECT_EQ(read->checkpoints, 3);
  EXPECT_EQ(read->last_checkpoint, absl::FromUnixSeconds(160));
  EXPECT_EQ(read->dropped_tail_bytes, 0);
  // A second run of the same name does not take over this one's checkpoint.
  EXPECT_TRUE(absl::IsAlreadyExists(CheckpointWriter::Create(dir, Metadata()).status()));
  writer->Remove();
  EXPECT_FALSE(IsCheckpointDirectory(dir));
  EXPECT_NE(access(dir.c_str(), F_OK), 0) << "removed";
}

// A kill in the middle of an append: the chunks after the last complete checkpoint entry, and
// the torn bytes, are dropped; everything before stays.
TEST(CheckpointTest, ATornTailIsDropped) {
  const std::string dir = TempDir() + "/torn.checkpoint";
  absl::StatusOr<CheckpointWriter> writer = CheckpointWriter::Create(dir, Metadata());
  ASSERT_TRUE(writer.ok()) << writer.status();
  std::vector<v1::ChunkRecord> chunks = {Chunk(0), Chunk(1)};
  ASSERT_TRUE(writer->Append({&chunks[0]}, absl::FromUnixSeconds(100)).ok());
  const std::string file = dir + "/checkpoint.pbs";
  struct stat before;
  ASSERT_EQ(stat(file.c_str(), &before), 0);
  ASSERT_TRUE(writer->Append({&chunks[1]}, absl::FromUnixSeconds(130)).ok());
  struct stat after;
  ASSERT_EQ(stat(file.c_str(), &after), 0);
  for (off_t cut = before.st_size + 1; cut < after.st_size; cut += 3) {
    ASSERT_EQ(truncate(file.c_str(), cut), 0);
    absl::StatusOr<Checkpoint> read = ReadCheckpoint(dir);
    ASSERT_TRUE(read.ok()) << read.status();
    ASSERT_EQ(read->chunks.size(), 1u) << "cut at " << cut;
    EXPECT_EQ(read->last_checkpoint, absl::FromUnixSeconds(100));
    EXPECT_EQ(read->dropped_tail_bytes, cut - before.st_size);
  }
}

v1::TrackingData Tracking(int64_t from, int64_t to) {
  v1::TrackingData tracking;
  tracking.set_backend("dask");
  for (const char* worker : {"tcp://a:1", "tcp://b:1"}) {
    v1::WorkerSeries& series = *tracking.add_workers();
    series.set_worker(worker);
    for (int64_t t = from; t < to; ++t) {
      series.add_time_unix_ns(t);
      series.add_memory_bytes(static_cast<double>(t));
    }
  }
  for (int64_t t = from; t < to; ++t) {
    tracking.add_worker_count_time_unix_ns(t);
    tracking.add_worker_count(2);
  }
  return tracking;
}

// A SIGKILLed Dask run keeps its worker timeline (#25): the tracking segments of the completed
// checkpoints are read back joined; a torn last segment goes with its checkpoint.
TEST(CheckpointTest, TrackingSegmentsAreReadBackJoined) {
  const std::string dir = TempDir() + "/tracking.checkpoint";
  absl::StatusOr<CheckpointWriter> writer = CheckpointWriter::Create(dir, Metadata());
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE(writer->Append({}, absl::FromUnixSeconds(100)).ok());
  EXPECT_FALSE(ReadCheckpoint(dir)->tracking.has_value()) << "no segment yet";
  const v1::TrackingData first = Tracking(0, 5), second = Tracking(5, 9);
  ASSERT_TRUE(writer->Append({}, absl::FromUnixSeconds(130), &first).ok());
  const std::string file = dir + "/checkpoint.pbs";
  struct stat before;
  ASSERT_EQ(stat(file.c_str(), &before), 0);
  ASSERT_TRUE(writer->Append({}, absl::FromUnixSeconds(160), &second).ok());
  absl::StatusOr<Checkpoint> read = ReadCheckpoint(dir);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(read->tracking.has_value());
  EXPECT_EQ(read->tracking->SerializeAsString(), Tracking(0, 9).SerializeAsString());
  // Killed in the middle of the second append: the first segment only.
  ASSERT_EQ(truncate(file.c_str(), before.st_size + 20), 0);
  read = ReadCheckpoint(dir);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(read->tracking.has_value());
  EXPECT_EQ(read->tracking->SerializeAsString(), first.SerializeAsString());
}

TEST(CheckpointTest, BadCheckpointsAreErrorsNamingTheFile) {
  EXPECT_TRUE(absl::IsNotFound(ReadCheckpoint(TempDir() + "/none.checkpoint").status()));
  const std::string dir = TempDir() + "/garbage.checkpoint";
  mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/checkpoint.pbs") << "not a checkpoint at all";
  absl::StatusOr<Checkpoint> read = ReadCheckpoint(dir);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr(dir + "/checkpoint.pbs"));
  // A link in the checkpoint's place is not followed.
  const std::string linked = TempDir() + "/linked.checkpoint";
  mkdir(linked.c_str(), 0755);
  ASSERT_EQ(symlink("/etc/passwd", (linked + "/checkpoint.pbs").c_str()), 0);
  EXPECT_FALSE(IsCheckpointDirectory(linked));
  EXPECT_FALSE(ReadCheckpoint(linked).ok());
}

}  // namespace
}  // namespace roastcoffea
