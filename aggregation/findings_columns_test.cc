// The findings read from the chunk columns Aggregate passes (FindingsInputs.columns), and from
// the columns EvaluateFindings makes itself without them, are exactly the straightforward
// reference's findings read from the records (findings_reference.h), on runs in start order and
// shuffled, with failures and retries, many files sharing start instants, ranges too wide to pack
// into one sort key, thread indices far apart and CPU-load evidence (issue #25).
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aggregation/aggregate.h"
#include "aggregation/chunk_columns.h"
#include "aggregation/findings.h"
#include "aggregation/findings_order.h"
#include "aggregation/findings_reference.h"
#include "aggregation/findings_rules.h"
#include "aggregation/start_order.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

constexpr int64_t kStart = 1795335303LL * 1000000000LL;

struct RunShape {
  int records = 400;
  int files = 40;
  int instants = 0;  // > 0: every record starts at one of this many instants
  bool shuffled = false;
  bool failures = false;
  bool wide_entries = false;  // entry starts spanning 2^62: (file, entry, attempt) do not pack
  bool far_threads = false;   // thread indices 0 and 10^12: no dense table of slots
  bool load_evidence = false;
};

v1::Measurement Run(const RunShape& shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  const char* workers[] = {"", "?", "w", "w/thread-1", "tcp://10.0.0.1:40", "tcp://10.0.0.2:40"};
  v1::Measurement m;
  std::vector<v1::ChunkRecord> records;
  int64_t end = kStart;
  int64_t next_start = kStart;
  for (int i = 0; i < shape.records; ++i) {
    v1::ChunkRecord c;
    c.set_worker(workers[pick(6)]);
    c.set_thread_index(shape.far_threads && pick(2) == 0 ? 1'000'000'000'000 : pick(3));
    if (pick(6) != 0)
      c.set_file(absl::StrCat("root://host//store/d", pick(3), "/f", pick(shape.files), ".root"));
    c.set_uuid(absl::StrCat("uuid-", i));
    c.set_dataset(absl::StrCat("ds", pick(3)));
    const int64_t entry = shape.wide_entries && pick(2) == 0 ? (int64_t{1} << 62) : 0;
    c.set_entry_start(entry + int64_t{pick(8)} * 1000);
    c.set_entry_stop(c.entry_start() + 1000);
    c.set_events(1000);
    const int64_t length = pick(10) == 0 ? 4'000'000'000 : int64_t{1 + pick(200)} * 1'000'000;
    int64_t start = next_start;
    next_start += int64_t{pick(3)} * 1'000'000;
    if (shape.instants > 0) start = kStart + int64_t{pick(shape.instants)} * 100'000'000;
    c.set_start_unix_ns(start);
    c.set_end_unix_ns(start + length);
    c.set_duration_seconds(1e-9 * static_cast<double>(length));
    c.set_cpu_seconds(c.duration_seconds() * 0.5);
    c.set_attempt(pick(10) == 0 ? 1 : 0);
    if (shape.load_evidence && pick(50) == 0) {
      c.set_machine_load(8);
      c.set_machine_cpus(2);
    }
    if (shape.failures && pick(8) == 0) {
      c.set_status(v1::CHUNK_STATUS_FAILED);
      c.set_error_text(absl::StrCat("OSError ", pick(3)));
    } else {
      c.set_status(v1::CHUNK_STATUS_OK);
    }
    end = std::max(end, c.end_unix_ns());
    records.push_back(std::move(c));
  }
  if (shape.shuffled) std::shuffle(records.begin(), records.end(), rng);
  for (v1::ChunkRecord& c : records) *m.add_chunks() = std::move(c);
  m.mutable_metadata()->set_elapsed_seconds(1e-9 * static_cast<double>(end - kStart) + 1);
  return m;
}

std::vector<std::string> Texts(const FindingsOutcome& outcome) {
  std::vector<std::string> out;
  for (const v1::Finding& f : outcome.findings) out.push_back(f.DebugString());
  for (const v1::RuleEvaluation& e : outcome.evaluations) out.push_back(e.DebugString());
  return out;
}

// Findings from the records and from the columns, of the run `shape` makes; the records'
// findings codes are appended to `codes`.
void ExpectSameFindings(const RunShape& shape, uint64_t seed, std::vector<std::string>* codes) {
  const v1::Measurement m = Run(shape, seed);
  AggregationOptions options;
  options.evaluate_findings = false;
  absl::StatusOr<v1::AggregatedMetrics> metrics =
      Aggregate(AggregationInputFromMeasurement(m, options));
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  absl::StatusOr<std::unique_ptr<PreparedChunks>> prepared = PrepareChunks(m.chunks());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  FindingsInputs in;
  in.metrics = &*metrics;
  in.chunks = &m.chunks();
  in.warnings = &m.warnings();
  in.elapsed_seconds = m.metadata().elapsed_seconds();
  const FindingsOutcome from_records = EvaluateFindings(in);
  in.columns = &(*prepared)->columns;
  const FindingsOutcome from_columns = EvaluateFindings(in);
  ASSERT_EQ(Texts(from_columns), Texts(from_records)) << "seed " << seed;
  // With the start order made beforehand, as Aggregate hands it.
  const StartOrder by_start = OrderByStart((*prepared)->columns);
  in.start_order = &by_start;
  ASSERT_EQ(Texts(EvaluateFindings(in)), Texts(from_records)) << "seed " << seed;
  in.start_order = nullptr;
  std::vector<std::string> reference;
  for (const v1::Finding& f : findings_reference::ComputeFindingsReference(in)) {
    reference.push_back(f.DebugString());
  }
  std::vector<std::string> findings;
  for (const v1::Finding& f : from_columns.findings) findings.push_back(f.DebugString());
  ASSERT_EQ(findings, reference) << "seed " << seed;
  for (const v1::Finding& f : from_records.findings) codes->push_back(f.code());

  // And the order itself: OrderBefore's records are in Before order, each place holding a
  // record equal to std::sort's by Before, and every record once.
  std::vector<const v1::ChunkRecord*> expected;
  for (const v1::ChunkRecord& c : m.chunks()) expected.push_back(&c);
  std::sort(expected.begin(), expected.end(),
            [](const auto* a, const auto* c) { return findings_rules::Before(*a, *c); });
  const std::vector<uint32_t> order = findings_rules::OrderBefore((*prepared)->columns);
  ASSERT_EQ(order.size(), expected.size());
  std::vector<const v1::ChunkRecord*> ordered;
  for (size_t i = 0; i < order.size(); ++i) {
    ordered.push_back(&m.chunks().Get(static_cast<int>(order[i])));
    ASSERT_FALSE(findings_rules::Before(*ordered[i], *expected[i]) ||
                 findings_rules::Before(*expected[i], *ordered[i]))
        << "seed " << seed << " place " << i;
  }
  std::sort(ordered.begin(), ordered.end());
  std::sort(expected.begin(), expected.end());
  ASSERT_EQ(ordered, expected) << "seed " << seed;  // a permutation
}

bool Has(const std::vector<std::string>& codes, const std::string& code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

TEST(FindingsColumnsTest, InStartOrder) {
  std::vector<std::string> codes;
  for (uint64_t seed = 1; seed <= 20; ++seed) ExpectSameFindings({}, seed, &codes);
  EXPECT_TRUE(Has(codes, "stragglers"));
}

TEST(FindingsColumnsTest, Shuffled) {
  RunShape shape;
  shape.shuffled = true;
  std::vector<std::string> codes;
  for (uint64_t seed = 1; seed <= 20; ++seed) ExpectSameFindings(shape, seed, &codes);
  EXPECT_TRUE(Has(codes, "stragglers"));
}

TEST(FindingsColumnsTest, FailedAndRetried) {
  RunShape shape;
  shape.shuffled = true;
  shape.failures = true;
  std::vector<std::string> codes;
  for (uint64_t seed = 1; seed <= 20; ++seed) ExpectSameFindings(shape, seed, &codes);
  EXPECT_TRUE(Has(codes, "failed_chunks"));
  EXPECT_TRUE(Has(codes, "retried_chunks"));
}

TEST(FindingsColumnsTest, ManyFilesSharingStartInstants) {
  RunShape shape;
  shape.records = 3000;
  shape.files = 2000;
  shape.instants = 5;  // runs of ~600 records: the packed-key radix sort
  std::vector<std::string> codes;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    shape.shuffled = seed % 2 == 0;
    ExpectSameFindings(shape, seed, &codes);
  }
}

TEST(FindingsColumnsTest, WideEntryRangesAndFarThreadIndices) {
  RunShape shape;
  shape.instants = 3;
  shape.wide_entries = true;
  shape.far_threads = true;
  shape.shuffled = true;
  std::vector<std::string> codes;
  for (uint64_t seed = 1; seed <= 10; ++seed) ExpectSameFindings(shape, seed, &codes);
}

TEST(FindingsColumnsTest, LoadEvidence) {
  RunShape shape;
  shape.load_evidence = true;
  std::vector<std::string> codes;
  for (uint64_t seed = 1; seed <= 10; ++seed) ExpectSameFindings(shape, seed, &codes);
  EXPECT_TRUE(Has(codes, "cpu_contention"));
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
