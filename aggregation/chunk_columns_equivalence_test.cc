// The chunk-record figures of Aggregate (chunk metrics with chunk_info, branch coverage, the
// workflow's read amplification, the CPU split) on the findings corpus and on random records,
// against golden results written by the aggregation before it read compact columns (issue #25):
// the column path must give the same numbers (relative tolerance 1e-12 for floating point, the
// last bits of sums taken in another order; everything else exact).
//
// After a deliberate change of one of these figures, regenerate the goldens:
//   ./bazelw test //aggregation:chunk_columns_equivalence_test
//     --test_env=ROASTCOFFEA_UPDATE_GOLDENS=$PWD/aggregation/testdata/chunk_columns
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aggregation/aggregate.h"
#include "aggregation/random_chunk_records.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "schema/chunk_info_rows.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using testing_internal::RandomRecords;

using google::protobuf::util::DefaultFieldComparator;
using google::protobuf::util::MessageDifferencer;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

v1::Measurement LoadCorpus(const std::string& name) {
  v1::Measurement m;
  EXPECT_TRUE(m.ParseFromString(ReadFile("aggregation/testdata/findings_corpus/" + name))) << name;
  m.clear_metrics();
  return m;
}

// The part of the result that the chunk records make.
v1::AggregatedMetrics ChunkFigures(const v1::Measurement& m, size_t parallel_min_records) {
  AggregationOptions options;
  options.parallel_min_records = parallel_min_records;
  absl::StatusOr<v1::AggregatedMetrics> all =
      Aggregate(AggregationInputFromMeasurement(m, options));
  EXPECT_TRUE(all.ok()) << all.status();
  v1::AggregatedMetrics figures;
  if (!all.ok()) return figures;
  *figures.mutable_chunks() = all->chunks();
  *figures.mutable_branches() = all->branches();
  figures.mutable_workflow()->set_read_amplification(all->workflow().read_amplification());
  figures.mutable_workflow()->set_distinct_file_bytes(all->workflow().distinct_file_bytes());
  *figures.mutable_cpu() = all->cpu();
  return figures;
}

void ExpectMatchesGolden(const std::string& name, const v1::Measurement& m) {
  for (size_t parallel_min_records : {size_t{1}, SIZE_MAX}) {
    SCOPED_TRACE(absl::StrCat(name, " parallel_min_records ", parallel_min_records));
    const v1::AggregatedMetrics figures = ChunkFigures(m, parallel_min_records);
    if (const char* update = std::getenv("ROASTCOFFEA_UPDATE_GOLDENS")) {
      std::ofstream out(absl::StrCat(update, "/", name, ".pb"), std::ios::binary);
      out << figures.SerializeAsString();
      continue;
    }
    v1::AggregatedMetrics golden;
    ASSERT_TRUE(
        golden.ParseFromString(ReadFile("aggregation/testdata/chunk_columns/" + name + ".pb")))
        << name;
    ASSERT_GT(golden.chunks().num_chunks(), 0) << name;
    // The goldens hold chunk_info as messages, as written before its columns (#25).
    v1::ChunkMetrics& golden_chunks = *golden.mutable_chunks();
    *golden_chunks.mutable_chunk_info_columns() = ChunkInfoColumnsOf(golden_chunks.chunk_info());
    golden_chunks.clear_chunk_info();
    DefaultFieldComparator comparator;
    comparator.set_float_comparison(DefaultFieldComparator::APPROXIMATE);
    comparator.SetDefaultFractionAndMargin(1e-12, 0);
    MessageDifferencer differencer;
    differencer.set_field_comparator(&comparator);
    std::string differences;
    differencer.ReportDifferencesToString(&differences);
    EXPECT_TRUE(differencer.Compare(golden, figures)) << differences;
  }
}

TEST(ChunkColumnsEquivalenceTest, FindingsCorpus) {
  for (const char* name :
       {"threadpool_8threads_starved", "threadpool_chunk2000_rereading", "workqueue_2workers"}) {
    ExpectMatchesGolden(name, LoadCorpus(absl::StrCat(name, ".pb")));
  }
}

TEST(ChunkColumnsEquivalenceTest, RandomRecords) {
  for (uint64_t seed : {1, 2, 3}) {
    for (bool shuffle : {false, true}) {
      ExpectMatchesGolden(absl::StrCat("random_", seed, shuffle ? "_shuffled" : ""),
                          RandomRecords(seed, 600, shuffle));
    }
  }
}

}  // namespace
}  // namespace roastcoffea
