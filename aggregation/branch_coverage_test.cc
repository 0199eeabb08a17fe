#include "aggregation/branch_coverage.h"

#include <string>
#include <vector>

#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

v1::ChunkRecord Record(const std::string& file, int64_t start_ns, std::vector<std::string> branches,
                       int64_t accessed_bytes) {
  v1::ChunkRecord r;
  r.set_file(file);
  r.set_start_unix_ns(start_ns);
  for (const std::string& b : branches) r.add_accessed_branches(b);
  r.set_accessed_bytes(accessed_bytes);
  v1::FileMetadata* m = r.mutable_file_metadata();
  m->set_file(file);
  m->set_total_branches(100);
  m->set_total_tree_bytes(10000);
  m->set_compression_ratio(0.4);
  return r;
}

std::optional<v1::BranchCoverage> Compute(const std::vector<v1::ChunkRecord>& records) {
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks(records.begin(), records.end());
  return ComputeBranchCoverage(chunks);
}

TEST(BranchCoverageTest, NoRecordsGiveNothing) { EXPECT_FALSE(Compute({}).has_value()); }

TEST(BranchCoverageTest, GoldenPercentagesOfOneFile) {
  // docs/reference.md §4: 100 branches, 10000 B tree, 2 accessed, 1500 B -> 2.0 % / 15.0 %.
  const auto c = Compute({Record("a.root", 1, {"Jet_pt", "Jet_eta"}, 1500)});
  ASSERT_TRUE(c.has_value());
  ASSERT_EQ(c->files_size(), 1);
  EXPECT_DOUBLE_EQ(c->files(0).branches_read_percent(), 2.0);
  EXPECT_DOUBLE_EQ(c->files(0).bytes_read_percent(), 15.0);
  EXPECT_EQ(c->files(0).bytes_read(), 1500);
  EXPECT_EQ(c->total_branches_read(), 2);
  EXPECT_EQ(c->compression_ratios_size(), 1);
  EXPECT_DOUBLE_EQ(c->compression_ratios(0), 0.4);
}

TEST(BranchCoverageTest, AverageOverFilesAndUnionOverChunks) {
  v1::ChunkRecord a = Record("a.root", 1, {"x"}, 0);
  a.set_branches_read_percent(40);
  v1::ChunkRecord b = Record("b.root", 2, {"x", "y"}, 0);
  b.set_branches_read_percent(60);
  const auto c = Compute({a, b});
  EXPECT_DOUBLE_EQ(c->avg_branches_read_percent(), 50.0);  // docs/reference.md §4
  EXPECT_EQ(c->total_branches_read(), 2);                  // union {x, y}
  EXPECT_EQ(c->bytes_read_percent_per_file_size(), 0);     // zeros left out, as the original
  EXPECT_DOUBLE_EQ(c->avg_bytes_read_percent(), 0.0);
}

TEST(BranchCoverageTest, FirstRecordByTimeWinsAndUnionPercentIsTheFix) {
  // The later record (listed first) read more branches; the original's "first in list" is
  // replaced by "earliest", and the union over the file's records is reported besides.
  const auto c =
      Compute({Record("a.root", 20, {"x", "y", "z"}, 0), Record("a.root", 10, {"x"}, 0)});
  ASSERT_EQ(c->files_size(), 1);
  EXPECT_DOUBLE_EQ(c->files(0).branches_read_percent(), 1.0);
  EXPECT_DOUBLE_EQ(c->files(0).branches_read_union_percent(), 3.0);
}

TEST(BranchCoverageTest, RecordsWithoutMetadataCountOnlyInTheUnion) {
  v1::ChunkRecord r;
  r.set_file("c.root");
  r.add_accessed_branches("nJet");
  const auto c = Compute({r});
  EXPECT_EQ(c->files_size(), 0);
  EXPECT_EQ(c->total_branches_read(), 1);
  EXPECT_DOUBLE_EQ(c->avg_branches_read_percent(), 0.0);
}

// AddCopying keeps only what Finish reads of a file's earliest record: the same figures as Add,
// from a message reused (here overwritten) after each call, the branch count included.
TEST(BranchCoverageTest, CopyingKeepsTheEarliestRecordsFigures) {
  const std::vector<v1::ChunkRecord> records = {
      Record("a.root", 5, {"Jet_pt"}, 900),
      Record("a.root", 2, {"Jet_pt", "Jet_eta", "nJet"}, 1500),
      Record("b.root", 7, {"nJet", "MET_pt"}, 100)};
  BranchCoverageAccumulator copying;
  v1::ChunkRecord reused;
  for (const v1::ChunkRecord& record : records) {
    reused = record;
    reused.set_uuid("u" + std::to_string(record.start_unix_ns()));
    copying.AddCopying(reused);
  }
  reused.Clear();
  const auto c = copying.Finish();
  ASSERT_TRUE(c.has_value());
  ASSERT_EQ(c->files_size(), 2);
  EXPECT_EQ(c->files(0).file(), "a.root");
  EXPECT_DOUBLE_EQ(c->files(0).branches_read_percent(), 3.0);  // the record at 2 ns: 3 of 100
  EXPECT_EQ(c->files(0).bytes_read(), 1500);
  EXPECT_DOUBLE_EQ(c->files(0).bytes_read_percent(), 15.0);
  EXPECT_DOUBLE_EQ(c->files(0).compression_ratio(), 0.4);
  EXPECT_DOUBLE_EQ(c->files(1).branches_read_percent(), 2.0);
  EXPECT_EQ(c->total_branches_read(), 4);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*c, *Compute(records)));
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
