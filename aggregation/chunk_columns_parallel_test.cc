// BuildChunkColumns on two threads makes exactly what its one pass makes (issue #25).
#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "aggregation/chunk_columns.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

using Records = google::protobuf::RepeatedPtrField<v1::ChunkRecord>;
using google::protobuf::util::MessageDifferencer;

struct Shape {
  int records = 0;
  int datasets = 1;
  bool all_failed = false;
  bool shuffled = false;
};

Records MakeRecords(const Shape& shape) {
  std::mt19937_64 rng(7);
  const auto uniform = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Records chunks;
  for (int i = 0; i < shape.records; ++i) {
    v1::ChunkRecord* c = chunks.Add();
    c->set_dataset(absl::StrCat("dataset_", uniform(0, shape.datasets - 1)));
    if (uniform(0, 9) > 0) c->set_file(absl::StrCat("root://host//store/file_", i / 7, ".root"));
    c->set_uuid(absl::StrCat("uuid-", i));
    c->set_worker(absl::StrCat("tcp://10.0.0.", uniform(0, 40), ":1/thread-", uniform(0, 3)));
    c->set_entry_start(i % 7 * 1000);
    c->set_entry_stop(i % 7 * 1000 + 1000);
    c->set_events(uniform(0, 1000));
    c->set_start_unix_ns(1'000'000 + uniform(0, 1'000'000));
    c->set_end_unix_ns(c->start_unix_ns() + uniform(0, 1'000'000));
    c->set_duration_seconds(static_cast<double>(uniform(0, 1'000'000)) * 1e-6);
    c->set_cpu_seconds(c->duration_seconds() * 0.7);
    c->set_memory_before_bytes(uniform(0, 1) * 1'000'000);
    c->set_memory_after_bytes(uniform(0, 2'000'000));
    c->set_compressed_bytes_read(uniform(0, 1'000'000));
    c->set_attempt(static_cast<uint32_t>(uniform(0, 1)));
    if (uniform(0, 3) == 0) c->set_peak_live_bytes(uniform(0, 1'000'000));
    if (shape.all_failed || uniform(0, 19) == 0) {
      c->set_status(v1::CHUNK_STATUS_FAILED);
      c->set_error_text("OSError");
    }
    if (uniform(0, 4) == 0) {
      c->mutable_file_metadata()->set_total_branches(100);
      c->mutable_file_metadata()->set_total_tree_bytes(10'000'000);
      c->add_accessed_branches(absl::StrCat("branch_", uniform(0, 20)));
    }
    for (int s = 0, n = static_cast<int>(uniform(0, 5)); s < n; ++s) {
      v1::SectionRecord* section = c->add_sections();
      section->set_name(absl::StrCat("section_", uniform(0, 6)));
      section->set_kind(static_cast<v1::SectionRecord::Kind>(uniform(0, 3)));
      section->set_entries(static_cast<int32_t>(uniform(0, 2)));
      section->set_duration_seconds(static_cast<double>(uniform(0, 1'000'000)) * 1e-7);
      section->set_cpu_seconds(static_cast<double>(uniform(0, 1'000'000)) * 1e-7);
      section->set_memory_delta_bytes(uniform(-1'000'000, 1'000'000));
      section->set_bytes_read(uniform(0, 1'000'000));
    }
  }
  if (shape.shuffled) {
    for (int i = chunks.size() - 1; i > 0; --i) {
      chunks.SwapElements(i, static_cast<int>(uniform(0, i)));
    }
  }
  return chunks;
}

// Everything one build makes: the columns, the branch coverage and the section figures.
struct Built {
  absl::StatusOr<ChunkColumns> columns;
  std::optional<v1::BranchCoverage> branches;
  v1::ChunkMetrics sections;
};

Built Build(const Records& chunks, size_t parallel_min_records) {
  BranchCoverageAccumulator branches;
  SectionAccumulator sections(static_cast<size_t>(chunks.size()));
  Built built{BuildChunkColumns(chunks, &branches, &sections, parallel_min_records), {}, {}};
  if (built.columns.ok()) {
    built.branches = branches.Finish();
    sections.Finish(/*total_chunk_seconds=*/1.0, &built.sections);
  }
  return built;
}

void ExpectSameColumns(const ChunkColumns& a, const ChunkColumns& b) {
  EXPECT_EQ(a.start_unix_ns, b.start_unix_ns);
  EXPECT_EQ(a.end_unix_ns, b.end_unix_ns);
  EXPECT_EQ(a.entry_start, b.entry_start);
  EXPECT_EQ(a.entry_stop, b.entry_stop);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.compressed_bytes_read, b.compressed_bytes_read);
  EXPECT_EQ(a.file_sizes, b.file_sizes);
  EXPECT_EQ(a.duration_seconds, b.duration_seconds);
  EXPECT_EQ(a.cpu_seconds, b.cpu_seconds);
  EXPECT_EQ(a.run_queue_wait_seconds, b.run_queue_wait_seconds);
  EXPECT_EQ(a.memory_delta_bytes, b.memory_delta_bytes);
  EXPECT_EQ(a.peak_live_bytes, b.peak_live_bytes);
  EXPECT_EQ(a.attempt, b.attempt);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.file, b.file);
  EXPECT_EQ(a.dataset, b.dataset);
  EXPECT_EQ(a.process, b.process);
  EXPECT_EQ(a.file_names, b.file_names);
  EXPECT_EQ(a.dataset_names, b.dataset_names);
  EXPECT_EQ(a.num_processes, b.num_processes);
  EXPECT_EQ(a.records, b.records);
}

void ExpectTwoThreadsMakeWhatOnePassMakes(const Shape& shape) {
  SCOPED_TRACE(absl::StrCat(shape.records, " records, ", shape.datasets, " datasets",
                            shape.all_failed ? ", all failed" : "",
                            shape.shuffled ? ", shuffled" : ""));
  const Records chunks = MakeRecords(shape);
  const Built one_pass = Build(chunks, SIZE_MAX);
  const Built two_threads = Build(chunks, 1);
  ASSERT_TRUE(one_pass.columns.ok()) << one_pass.columns.status();
  ASSERT_TRUE(two_threads.columns.ok()) << two_threads.columns.status();
  ASSERT_EQ(two_threads.columns->size(), static_cast<size_t>(shape.records));
  ExpectSameColumns(*one_pass.columns, *two_threads.columns);
  ASSERT_EQ(one_pass.branches.has_value(), two_threads.branches.has_value());
  if (one_pass.branches.has_value()) {
    EXPECT_TRUE(MessageDifferencer::Equals(*one_pass.branches, *two_threads.branches));
  }
  // Exact equality: the section sums and value lists are made in the same order.
  EXPECT_TRUE(MessageDifferencer::Equals(one_pass.sections, two_threads.sections))
      << one_pass.sections.DebugString() << "\nvs\n"
      << two_threads.sections.DebugString();
}

TEST(ChunkColumnsParallelTest, InOrder) { ExpectTwoThreadsMakeWhatOnePassMakes({2000, 4}); }

TEST(ChunkColumnsParallelTest, Shuffled) {
  ExpectTwoThreadsMakeWhatOnePassMakes({2000, 4, false, true});
}

TEST(ChunkColumnsParallelTest, OneRecord) { ExpectTwoThreadsMakeWhatOnePassMakes({1, 1}); }

TEST(ChunkColumnsParallelTest, EveryRecordFailed) {
  ExpectTwoThreadsMakeWhatOnePassMakes({500, 3, true});
}

TEST(ChunkColumnsParallelTest, OneDataset) { ExpectTwoThreadsMakeWhatOnePassMakes({1000, 1}); }

TEST(ChunkColumnsParallelTest, ManyDatasets) {
  ExpectTwoThreadsMakeWhatOnePassMakes({3000, 300, false, true});
}

TEST(ChunkColumnsParallelTest, NoRecords) {
  const Records chunks;
  const Built two_threads = Build(chunks, 0);
  ASSERT_TRUE(two_threads.columns.ok());
  EXPECT_EQ(two_threads.columns->size(), 0u);
}

// The first invalid record's error, whichever thread validates; also when a later record is
// invalid too.
TEST(ChunkColumnsParallelTest, TheFirstInvalidRecordIsNamed) {
  Records chunks = MakeRecords({3000, 4, false, true});
  chunks.Mutable(1700)->set_duration_seconds(-1);
  chunks.Mutable(2900)->set_events(-5);
  const Built one_pass = Build(chunks, SIZE_MAX);
  const Built two_threads = Build(chunks, 1);
  ASSERT_FALSE(two_threads.columns.ok());
  EXPECT_EQ(two_threads.columns.status(), one_pass.columns.status());
  EXPECT_NE(two_threads.columns.status().message().find("chunks[1700]"), std::string::npos)
      << two_threads.columns.status();
}

// Records added one by one to an arena follow each other in memory (with the heap that depends
// on the allocator: not under ThreadSanitizer's); shuffled or reversed ones do not.
TEST(ChunkColumnsParallelTest, RecordsInMemoryOrderAreRecognised) {
  google::protobuf::Arena arena;
  auto* in_order = google::protobuf::Arena::CreateMessage<v1::Measurement>(&arena);
  for (const v1::ChunkRecord& record : MakeRecords({2000, 4})) *in_order->add_chunks() = record;
  EXPECT_TRUE(RecordsMostlyInMemoryOrder(in_order->chunks()));
  EXPECT_FALSE(RecordsMostlyInMemoryOrder(MakeRecords({2000, 4, false, true})));
  Records reversed = MakeRecords({2000, 4});
  for (int i = 0, j = reversed.size() - 1; i < j; ++i, --j) reversed.SwapElements(i, j);
  EXPECT_FALSE(RecordsMostlyInMemoryOrder(reversed));
  EXPECT_FALSE(RecordsMostlyInMemoryOrder(Records()));
  EXPECT_FALSE(RecordsMostlyInMemoryOrder(MakeRecords({1, 1})));
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
