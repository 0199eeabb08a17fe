// OrderBefore (findings_order.h) gives Before's order, whichever of its paths sorts: records
// already in order, a radix sort by start, runs of one instant packed into one integer key, and
// runs whose entry ranges are too wide to pack.
#include "aggregation/findings_order.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aggregation/chunk_columns.h"
#include "aggregation/findings_rules.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {
namespace {

struct Shape {
  int records;
  int instants;            // distinct start instants (few: long runs of one instant)
  int files;               // distinct file names
  bool wide;               // entry starts over the whole int64 range (cannot be packed)
  bool in_order;           // records given in start order
  bool empty_file = true;  // one of the files is "" (then the names share no prefix)
};

google::protobuf::RepeatedPtrField<v1::ChunkRecord> Records(const Shape& shape,
                                                            std::mt19937_64& rng) {
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> records;
  for (int i = 0; i < shape.records; ++i) records.Add();
  for (v1::ChunkRecord& chunk : records) {
    const auto pick = [&](uint64_t n) { return static_cast<int64_t>(rng() % n); };
    chunk.set_start_unix_ns(1'765'000'000'000'000'000 + pick(shape.instants) * 1'000'003);
    // Names whose order is not their numbers' ("f10" < "f9"), names that are the start of
    // others ("f14", "f140"), and one empty (when asked for).
    const int64_t file = pick(static_cast<uint64_t>(shape.files));
    chunk.set_file(file == 0 && shape.empty_file
                       ? ""
                       : absl::StrCat("root://eos//store/f", file, file % 7 == 0 ? "" : ".root"));
    chunk.set_entry_start(shape.wide ? static_cast<int64_t>(rng()) : pick(4) * 1000 - 1000);
    chunk.set_attempt(static_cast<uint32_t>(pick(3)));
    chunk.set_worker(absl::StrCat("w", pick(3)));
    chunk.set_end_unix_ns(chunk.start_unix_ns() + pick(5));
    chunk.set_duration_seconds(0.5 * static_cast<double>(pick(3)));
    if (pick(2) == 0) chunk.set_uuid(absl::StrCat("u", pick(4)));
  }
  if (shape.in_order) {
    std::stable_sort(records.pointer_begin(), records.pointer_end(),
                     [](const v1::ChunkRecord* a, const v1::ChunkRecord* c) {
                       return a->start_unix_ns() < c->start_unix_ns();
                     });
  }
  return records;
}

void ExpectBeforeOrder(const Shape& shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const google::protobuf::RepeatedPtrField<v1::ChunkRecord> records = Records(shape, rng);
  std::vector<const v1::ChunkRecord*> expected;
  for (const v1::ChunkRecord& chunk : records) expected.push_back(&chunk);
  std::vector<const v1::ChunkRecord*> sorted;
  for (const uint32_t i : OrderBefore(ColumnsOf(records))) {
    sorted.push_back(&records.Get(static_cast<int>(i)));
  }
  std::sort(expected.begin(), expected.end(),
            [](const auto* a, const auto* c) { return Before(*a, *c); });
  ASSERT_EQ(sorted.size(), expected.size());
  for (size_t i = 0; i < sorted.size(); ++i) {
    // Records Before does not order may come in either order: each place holds an equal one.
    ASSERT_FALSE(Before(*sorted[i], *expected[i]) || Before(*expected[i], *sorted[i]))
        << "place " << i << " of " << sorted.size();
  }
  std::vector<const v1::ChunkRecord*> again = sorted;
  std::sort(again.begin(), again.end());
  std::vector<const v1::ChunkRecord*> all = expected;
  std::sort(all.begin(), all.end());
  EXPECT_EQ(again, all);  // a permutation: no record lost or repeated
}

TEST(OrderBeforeTest, ShuffledRecordsOfManyInstants) {
  ExpectBeforeOrder({5000, 4000, 300, false, false}, 1);
}

TEST(OrderBeforeTest, RecordsInStartOrderWithSharedInstants) {
  ExpectBeforeOrder({5000, 50, 300, false, true}, 2);
}

TEST(OrderBeforeTest, OneInstantForEveryRecord) {
  ExpectBeforeOrder({20000, 1, 2000, false, false}, 3);
  ExpectBeforeOrder({20000, 1, 2000, false, false, /*empty_file=*/false}, 8);
}

TEST(OrderBeforeTest, EntryRangesTooWideToPack) {
  ExpectBeforeOrder({3000, 2, 100, true, false}, 4);
}

TEST(OrderBeforeTest, FewRecords) {
  ExpectBeforeOrder({0, 1, 1, false, false}, 5);
  ExpectBeforeOrder({1, 1, 1, false, false}, 6);
  ExpectBeforeOrder({40, 1, 5, false, false}, 7);
}

}  // namespace
}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea
