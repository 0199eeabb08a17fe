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
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aggregation/aggregate.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "schema/chunk_info_rows.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

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

// Records meant to reach every branch of the chunk figures: several datasets (one empty),
// failures, retries, records without memory, without times, without a file, files with and
// without a size, overlapping entry ranges, threads of one process, sections of every kind,
// peak live bytes and run-queue waits on some records only, CPU on some records only.
v1::Measurement RandomRecords(uint64_t seed, int n, bool shuffle) {
  v1::Measurement m;
  std::mt19937_64 rng(seed);
  auto uniform = [&rng](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  auto real = [&rng] { return static_cast<double>(rng() % 1'000'000) / 1e6; };
  const char* datasets[] = {"TTbar", "", "WJets", "DY"};
  const char* section_names[] = {"jets", "muons", "load", "read"};
  const int64_t start = int64_t{1'765'000'000} * 1'000'000'000;
  m.mutable_metadata()->set_elapsed_seconds(100);
  for (int i = 0; i < n; ++i) {
    v1::ChunkRecord* c = m.add_chunks();
    c->set_dataset(datasets[uniform(0, 3)]);
    const int64_t file = uniform(0, n / 8 + 1);
    if (uniform(0, 30) != 0) c->set_file(absl::StrCat("root://x//store/f", file, ".root"));
    if (file % 3 == 0) c->set_file_bytes(1'000'000 * (file + 1));
    c->set_uuid(absl::StrCat("u", file));
    const int64_t entry = uniform(0, 9) * 1000;
    c->set_entry_start(entry);
    c->set_entry_stop(entry + uniform(0, 3) * 1000);
    c->set_events(uniform(0, 4) == 0 ? 0 : uniform(1, 5000));
    const double d = 0.01 + 3 * real();
    c->set_duration_seconds(d);
    if (uniform(0, 40) != 0) {
      c->set_start_unix_ns(start + uniform(0, 100) * 1'000'000'000 + uniform(0, 999));
      c->set_end_unix_ns(c->start_unix_ns() + static_cast<int64_t>(d * 1e9));
    }
    if (uniform(0, 2) != 0) c->set_cpu_seconds(d * real());
    if (uniform(0, 3) == 0) c->set_run_queue_wait_seconds(d * real() / 4);
    if (uniform(0, 4) != 0) {
      c->set_memory_before_bytes(uniform(1, 1'000'000'000));
      c->set_memory_after_bytes(uniform(1, 1'000'000'000));
    }
    if (uniform(0, 5) == 0) c->set_peak_live_bytes(uniform(0, 1'000'000));
    c->set_compressed_bytes_read(uniform(0, 3) == 0 ? 0 : uniform(1, 10'000'000));
    c->set_worker(absl::StrCat("tcp://w", uniform(0, 5), "/thread-", uniform(0, 3)));
    c->set_thread_index(static_cast<int32_t>(uniform(0, 3)));
    c->set_attempt(static_cast<uint32_t>(uniform(0, 10) == 0 ? uniform(1, 2) : 0));
    if (uniform(0, 12) == 0) {
      c->set_status(v1::CHUNK_STATUS_FAILED);
      c->set_error_text(absl::StrCat("error ", uniform(0, 3)));
    } else {
      c->set_status(v1::CHUNK_STATUS_OK);
    }
    if (uniform(0, 6) == 0) {
      c->add_accessed_branches(absl::StrCat("b", uniform(0, 9)));
      c->mutable_file_metadata()->set_total_branches(20);
      c->mutable_file_metadata()->set_total_tree_bytes(5'000'000);
      c->set_accessed_bytes(uniform(0, 5'000'000));
    }
    const int sections = static_cast<int>(uniform(0, 4));
    for (int s = 0; s < sections; ++s) {
      v1::SectionRecord* section = c->add_sections();
      section->set_name(section_names[uniform(0, 3)]);
      section->set_kind(static_cast<v1::SectionRecord::Kind>(uniform(0, 3)));
      section->set_entries(uniform(0, 2));
      section->set_duration_seconds(d * real());
      section->set_cpu_seconds(d * real());
      section->set_memory_delta_bytes(uniform(-1'000'000, 1'000'000));
      section->set_bytes_read(uniform(0, 1'000'000));
    }
  }
  if (shuffle) {
    for (int i = m.chunks_size() - 1; i > 0; --i) {
      m.mutable_chunks()->SwapElements(i, static_cast<int>(rng() % static_cast<uint64_t>(i + 1)));
    }
  }
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
