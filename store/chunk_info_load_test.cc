// Loading chunk_info in either form (#25): the columns saved now, the messages of measurements
// saved before them, both skipped by LoadOptions::chunk_info = false, bad columns read with a
// warning.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "schema/chunk_info_rows.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "store/segmented_measurement.h"

namespace roastcoffea {
namespace {

std::string TempDir() { return std::getenv("TEST_TMPDIR"); }

v1::Measurement WithChunkInfo(bool old_form) {
  v1::Measurement m;
  m.mutable_metadata()->set_schema_version(1);
  m.mutable_metadata()->set_name("ci");
  v1::ChunkMetrics& chunks = *m.mutable_metrics()->mutable_chunks();
  chunks.set_num_chunks(3);
  google::protobuf::RepeatedPtrField<v1::ChunkInfo> entries;
  for (int i = 0; i < 3; ++i) {
    v1::ChunkInfo& info = *entries.Add();
    info.set_file(i == 1 ? "b.root" : "a.root");
    info.set_entry_start(100 * i);
    info.set_entry_stop(100 * i + 100);
    info.set_attempt(static_cast<uint32_t>(i / 2));
    info.set_start_unix_ns(1'765'000'000'000'000'000 + i);
    info.set_end_unix_ns(1'765'000'001'000'000'000 + i);
    info.set_bytes_read(4096 * i);
  }
  if (old_form) {
    *chunks.mutable_chunk_info() = entries;
  } else {
    *chunks.mutable_chunk_info_columns() = ChunkInfoColumnsOf(entries);
  }
  return m;
}

std::string Rows(const v1::Measurement& m) {
  std::string out;
  ForEachChunkInfo(m.metrics().chunks(), [&](const ChunkInfoRow& r) {
    absl::StrAppend(&out, r.file, ":", r.entry_start, ":", r.entry_stop, "#", r.attempt, " ",
                    r.start_unix_ns, "-", r.end_unix_ns, " ", r.bytes_read, "\n");
  });
  return out;
}

class ChunkInfoLoadTest : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { store_internal::SetSegmentThresholdBytesForTesting(GetParam()); }
  void TearDown() override {
    store_internal::SetSegmentThresholdBytesForTesting(
        store_internal::kDefaultSegmentThresholdBytes);
  }
  std::string Save(const v1::Measurement& m, const std::string& name) {
    absl::StatusOr<std::string> saved =
        SaveMeasurement(m, TempDir(), absl::StrCat(name, "-", GetParam()));
    EXPECT_TRUE(saved.ok()) << saved.status();
    return saved.ok() ? *saved : "";
  }
};

TEST_P(ChunkInfoLoadTest, EitherFormLoadsToTheSameRowsAndIsSkippedOnRequest) {
  const std::string expected = Rows(WithChunkInfo(/*old_form=*/false));
  ASSERT_EQ(expected, Rows(WithChunkInfo(/*old_form=*/true)));
  ASSERT_EQ(std::count(expected.begin(), expected.end(), '\n'), 3);
  for (const bool old_form : {false, true}) {
    SCOPED_TRACE(old_form ? "old messages" : "columns");
    const std::string dir = Save(WithChunkInfo(old_form), old_form ? "old" : "columns");
    absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(dir);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(Rows(*loaded), expected);
    EXPECT_EQ(loaded->metrics().chunks().chunk_info_size(), old_form ? 3 : 0);
    EXPECT_EQ(loaded->warnings_size(), 0);
    LoadOptions without;
    without.chunk_info = false;
    loaded = LoadMeasurement(dir, without);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(ChunkInfoSize(loaded->metrics().chunks()), 0u);
    EXPECT_FALSE(loaded->metrics().chunks().has_chunk_info_columns());
    EXPECT_EQ(loaded->metrics().chunks().num_chunks(), 3);  // the rest of the metrics is kept
  }
}

TEST_P(ChunkInfoLoadTest, BadColumnsLoadTheirSoundRowsWithAWarning) {
  v1::Measurement m = WithChunkInfo(/*old_form=*/false);
  m.mutable_metrics()->mutable_chunks()->mutable_chunk_info_columns()->mutable_bytes_read()->Add(9);
  const std::string dir = Save(m, "uneven");
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(ChunkInfoSize(loaded->metrics().chunks()), 3u);
  EXPECT_EQ(loaded->metrics().chunks().chunk_info_columns().bytes_read_size(), 3);
  ASSERT_EQ(loaded->warnings_size(), 1);
  EXPECT_EQ(loaded->warnings(0).code(), "chunk_info_columns_invalid");
  EXPECT_TRUE(absl::StrContains(loaded->warnings(0).message(), "bytes_read 4"))
      << loaded->warnings(0).message();
  EXPECT_TRUE(absl::StrContains(loaded->warnings(0).message(), dir))
      << loaded->warnings(0).message();

  m = WithChunkInfo(/*old_form=*/false);
  m.mutable_metrics()->mutable_chunks()->mutable_chunk_info_columns()->set_file_index(1, 7);
  loaded = LoadMeasurement(Save(m, "badfile"));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(ChunkInfoSize(loaded->metrics().chunks()), 1u);
  ASSERT_EQ(loaded->warnings_size(), 1);
  EXPECT_TRUE(absl::StrContains(loaded->warnings(0).message(), "row 1 names file 7 of 2"))
      << loaded->warnings(0).message();
}

// 1: saved in parts; the default: one measurement.pb.
INSTANTIATE_TEST_SUITE_P(OneFileAndParts, ChunkInfoLoadTest,
                         ::testing::Values(int64_t{1},
                                           store_internal::kDefaultSegmentThresholdBytes));

}  // namespace
}  // namespace roastcoffea
