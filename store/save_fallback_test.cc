#include "store/save_fallback.h"

#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "store/measurement_io.h"

namespace roastcoffea {
namespace {

v1::Measurement Named(const std::string& name) {
  v1::Measurement measurement;
  measurement.mutable_metadata()->set_name(name);
  return measurement;
}

std::string TempDir() { return std::getenv("TEST_TMPDIR"); }

TEST(SaveWithFallbackTest, SavesWhereAskedWhenItCan) {
  const std::string parent = TempDir() + "/asked";
  absl::StatusOr<SaveOutcome> outcome = SaveWithFallback(
      Named("run"), [&](const v1::Measurement& m) { return SaveMeasurement(m, parent, "run"); },
      TempDir() + "/fallback-unused");
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_FALSE(outcome->fell_back);
  EXPECT_EQ(outcome->path, parent + "/run");
  struct stat info;
  EXPECT_NE(stat((TempDir() + "/fallback-unused").c_str(), &info), 0);
}

TEST(SaveWithFallbackTest, AFailedSaveGoesToTheFallbackDirectoryUnderAFreeName) {
  // A parent under a regular file cannot be created, even by root.
  ASSERT_TRUE(SaveMeasurement(Named("x"), TempDir() + "/seed", "x").ok());
  const std::string blocked = TempDir() + "/seed/x/FORMAT/out";
  const std::string fallback = TempDir() + "/fallback";
  ASSERT_TRUE(SaveMeasurement(Named("run"), fallback, "run").ok());  // the name is taken there
  absl::StatusOr<SaveOutcome> outcome = SaveWithFallback(
      Named("run"), [&](const v1::Measurement& m) { return SaveMeasurement(m, blocked, "run"); },
      fallback);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(outcome->fell_back);
  EXPECT_EQ(outcome->path, fallback + "/run-2");
  EXPECT_TRUE(absl::StrContains(outcome->why, blocked)) << outcome->why;
  EXPECT_TRUE(LoadMeasurement(outcome->path).ok());
}

TEST(SaveWithFallbackTest, BothFailingNamesBothReasons) {
  ASSERT_TRUE(SaveMeasurement(Named("x"), TempDir() + "/seed2", "x").ok());
  const std::string blocked = TempDir() + "/seed2/x/FORMAT";
  absl::StatusOr<SaveOutcome> outcome = SaveWithFallback(
      Named("run"),
      [&](const v1::Measurement& m) { return SaveMeasurement(m, blocked + "/a", "run"); },
      blocked + "/b");
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(absl::StrContains(outcome.status().message(), blocked + "/a"));
  EXPECT_TRUE(absl::StrContains(outcome.status().message(), "fallback save in '" + blocked + "/b"));
}

TEST(SaveWithFallbackTest, AChunkTableFallsBackWithEveryRecord) {
  ASSERT_TRUE(SaveMeasurement(Named("x"), TempDir() + "/seed3", "x").ok());
  const std::string blocked = TempDir() + "/seed3/x/FORMAT/out";
  const std::string fallback = TempDir() + "/fallback3";
  std::vector<v1::ChunkRecord> records(3);
  for (size_t i = 0; i < records.size(); ++i) records[i].set_task_id("task-" + std::to_string(i));
  const ChunkTable chunks = ChunkTableOf(records);
  absl::StatusOr<SaveOutcome> outcome = SaveWithFallback(
      Named("run"), chunks,
      [&](const v1::Measurement& m, const ChunkTable& c) {
        return SaveMeasurement(m, c, blocked, "run");
      },
      fallback);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(outcome->fell_back);
  EXPECT_EQ(outcome->path, fallback + "/run");
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(outcome->path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->chunks_size(), 3);
  EXPECT_EQ(loaded->chunks(2).task_id(), "task-2");
}

TEST(FallbackSaveDirectoryTest, UsesTmpdirWhenAbsolute) {
  setenv("TMPDIR", "/some/where", 1);
  EXPECT_EQ(FallbackSaveDirectory(), "/some/where/roastcoffea-unsaved");
  setenv("TMPDIR", "relative", 1);
  EXPECT_EQ(FallbackSaveDirectory(), "/tmp/roastcoffea-unsaved");
}

}  // namespace
}  // namespace roastcoffea
