#include "store/checkpoint.h"

#include <signal.h>
#include <sys/resource.h>
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

// A name, file or worker that is not UTF-8 (a Latin-1 --name, an engine's worker id): proto3
// refuses to parse such strings, so each is written repaired (U+FFFD), never as a checkpoint a
// kill would leave unreadable.
TEST(CheckpointTest, StringsThatAreNotUtf8AreWrittenRepaired) {
  const std::string dir = TempDir() + "/latin1.checkpoint";
  v1::MeasurementMetadata metadata = Metadata();
  metadata.set_name("bad\xffname");
  absl::StatusOr<CheckpointWriter> writer = CheckpointWriter::Create(dir, metadata);
  ASSERT_TRUE(writer.ok()) << writer.status();
  v1::ChunkRecord chunk = Chunk(0);
  chunk.set_file("f\xe9.root");
  v1::TrackingData tracking = Tracking(0, 3);
  tracking.mutable_workers(0)->set_worker("w\xfe");
  ASSERT_TRUE(writer->Append({&chunk}, absl::FromUnixSeconds(100), &tracking).ok());
  absl::StatusOr<Checkpoint> read = ReadCheckpoint(dir);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->metadata.name(), "bad\xef\xbf\xbdname");
  ASSERT_EQ(read->chunks.size(), 1u);
  EXPECT_EQ(read->chunks[0].file(), "f\xef\xbf\xbd.root");
  ASSERT_TRUE(read->tracking.has_value());
  ASSERT_EQ(read->tracking->workers_size(), 2);
  EXPECT_EQ(read->tracking->workers(0).worker(), "w\xef\xbf\xbd");
}

// An append cut short by a full disk (here the file size limit, ulimit -f) leaves no torn
// entry behind: the next append, once there is room, is read back with everything before it.
TEST(CheckpointTest, AnAppendThatFailsHalfWayLeavesTheFileReadable) {
  const std::string dir = TempDir() + "/full.checkpoint";
  absl::StatusOr<CheckpointWriter> writer = CheckpointWriter::Create(dir, Metadata());
  ASSERT_TRUE(writer.ok()) << writer.status();
  std::vector<v1::ChunkRecord> chunks;
  for (int i = 0; i < 51; ++i) chunks.push_back(Chunk(i));
  std::vector<const v1::ChunkRecord*> rest;
  for (int i = 1; i < 51; ++i) rest.push_back(&chunks[i]);
  ASSERT_TRUE(writer->Append({&chunks[0]}, absl::FromUnixSeconds(100)).ok());
  struct stat before;
  ASSERT_EQ(stat((dir + "/checkpoint.pbs").c_str(), &before), 0);
  // Room for a few of the 50 chunks only: write() stores part of the append, then fails.
  rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit limit = old_limit;
  limit.rlim_cur = static_cast<rlim_t>(before.st_size) + 100;
  const sighandler_t old_handler = signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  const absl::Status full = writer->Append(rest, absl::FromUnixSeconds(130));
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(full.ok());
  EXPECT_THAT(full.message(), HasSubstr(dir + "/checkpoint.pbs"));
  ASSERT_TRUE(writer->Append(rest, absl::FromUnixSeconds(160)).ok());
  absl::StatusOr<Checkpoint> read = ReadCheckpoint(dir);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->chunks.size(), 51u) << "the retried append is lost behind a torn entry";
  EXPECT_EQ(read->checkpoints, 2);
  EXPECT_EQ(read->last_checkpoint, absl::FromUnixSeconds(160));
  EXPECT_EQ(read->dropped_tail_bytes, 0);
}

// The writer reads back what it appended through its own descriptor: a directory removed
// meanwhile (a /tmp cleaner) loses nothing the run itself needs at its end.
TEST(CheckpointTest, TheWriterReadsBackWhatItAppendedEvenWhenTheDirectoryIsGone) {
  const std::string dir = TempDir() + "/gone.checkpoint";
  absl::StatusOr<CheckpointWriter> writer = CheckpointWriter::Create(dir, Metadata());
  ASSERT_TRUE(writer.ok()) << writer.status();
  std::vector<v1::ChunkRecord> chunks = {Chunk(0), Chunk(1)};
  const v1::TrackingData tracking = Tracking(0, 4);
  ASSERT_TRUE(writer->Append({&chunks[0]}, absl::FromUnixSeconds(100), &tracking).ok());
  ASSERT_EQ(unlink((dir + "/checkpoint.pbs").c_str()), 0);
  ASSERT_EQ(rmdir(dir.c_str()), 0);
  ASSERT_TRUE(writer->Append({&chunks[1]}, absl::FromUnixSeconds(130)).ok());
  absl::StatusOr<Checkpoint> read = writer->ReadBack();
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->chunks.size(), 2u);
  EXPECT_EQ(read->checkpoints, 2);
  ASSERT_TRUE(read->tracking.has_value());
  EXPECT_EQ(read->tracking->SerializeAsString(), tracking.SerializeAsString());
  EXPECT_TRUE(absl::IsNotFound(ReadCheckpoint(dir).status()));
  // The tracking alone: the chunk records are skipped, everything else is the same.
  absl::StatusOr<Checkpoint> tracking_only = writer->ReadBack(/*with_chunks=*/false);
  ASSERT_TRUE(tracking_only.ok()) << tracking_only.status();
  EXPECT_TRUE(tracking_only->chunks.empty());
  EXPECT_EQ(tracking_only->checkpoints, 2);
  EXPECT_EQ(tracking_only->last_checkpoint, absl::FromUnixSeconds(130));
  EXPECT_EQ(tracking_only->dropped_tail_bytes, 0);
  ASSERT_TRUE(tracking_only->tracking.has_value());
  EXPECT_EQ(tracking_only->tracking->SerializeAsString(), tracking.SerializeAsString());
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
  EXPECT_TRUE(IsCheckpointDirectory(linked)) << "a checkpoint, refused when read";
  read = ReadCheckpoint(linked);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr(linked + "/checkpoint.pbs' is a symbolic link"));
  // A FIFO is never opened for a blocking read: refused by its type.
  const std::string fifo = TempDir() + "/fifo.checkpoint";
  mkdir(fifo.c_str(), 0755);
  ASSERT_EQ(mkfifo((fifo + "/checkpoint.pbs").c_str(), 0644), 0);
  read = ReadCheckpoint(fifo);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr(fifo + "/checkpoint.pbs' is not a regular file"));
}

}  // namespace
}  // namespace roastcoffea
