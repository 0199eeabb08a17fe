// The optimised findings rules (interned slots, one sort, partial sorts) give exactly what the
// straightforward reference (findings_reference.cc) gives, on random runs built to hit the
// rules' corner cases: slot names that collide, shared start instants, overlapping chunks,
// zero-length chunks, failures, retries and records in any order.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aggregation/aggregate.h"
#include "aggregation/findings.h"
#include "aggregation/findings_reference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/chunk_table.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

constexpr int64_t kStart = 1795335303LL * 1000000000LL;

v1::Measurement RandomRun(std::mt19937_64& rng) {
  v1::Measurement m;
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  // Workers whose slot names collide: "" and "?", "w/thread-1" with several thread indices,
  // "w" thread 1 and "w/thread-1" thread 0.
  const char* workers[] = {"", "?", "w", "w/thread-1", "tcp://10.0.0.1:40", "tcp://10.0.0.2:40"};
  const int n = 1 + pick(300);
  const int workers_used = 1 + pick(6);
  const int times = pick(3);          // 0: many shared start instants; 1: random; 2: back to back
  const int instants = 1 + pick(20);  // for 0: down to one instant shared by every record
  std::map<std::pair<std::string, int64_t>, int64_t> lane_free;  // for back to back
  int64_t end = kStart;
  for (int i = 0; i < n; ++i) {
    v1::ChunkRecord& c = *m.add_chunks();
    c.set_worker(workers[pick(workers_used)]);
    c.set_thread_index(pick(3));
    if (pick(4) != 0) c.set_file(absl::StrCat("/store/d", pick(3), "/f", pick(40), ".root"));
    if (pick(5) == 0) c.set_task_id(absl::StrCat(pick(1000)));
    if (pick(5) == 0) c.set_uuid(absl::StrCat("uuid-", pick(1000), "-abcdefghijkl"));
    c.set_dataset(pick(3) == 0 ? "" : absl::StrCat("ds", pick(3)));
    c.set_entry_start(int64_t{pick(4)} * 1000);
    c.set_entry_stop(c.entry_start() + 1000);
    c.set_events(pick(6) == 0 ? 0 : 1000);
    const int64_t length = pick(8) == 0 ? 0 : int64_t{pick(2000)} * 1'000'000;
    int64_t start = kStart + pick(1'000'000) * 997LL;
    if (times == 0) start = kStart + int64_t{pick(instants)} * 100'000'000;
    if (times == 2) {
      // Each (worker, thread) runs its chunks one after the other, some with no gap at all.
      int64_t& free = lane_free.try_emplace({c.worker(), c.thread_index()}, kStart).first->second;
      start = free + (pick(3) == 0 ? 0 : int64_t{pick(1000)} * 1'000'000);
      free = start + length;
    }
    c.set_start_unix_ns(start);
    c.set_end_unix_ns(start + length);
    c.set_duration_seconds(pick(10) == 0 ? 5.0 : 1e-9 * static_cast<double>(length));
    c.set_cpu_seconds(c.duration_seconds() * 0.5);
    c.set_attempt(pick(10) == 0 ? 1 : 0);
    if (pick(8) == 0) {
      c.set_status(v1::CHUNK_STATUS_FAILED);
      c.set_error_text(absl::StrCat("OSError ", pick(3), "\nTraceback"));
    } else {
      c.set_status(v1::CHUNK_STATUS_OK);
    }
    end = std::max(end, c.end_unix_ns());
  }
  m.mutable_metadata()->set_elapsed_seconds(1e-9 * static_cast<double>(end - kStart) + 1);
  m.mutable_metadata()->mutable_start_time()->set_seconds(kStart / 1000000000);
  m.mutable_metadata()->mutable_end_time()->set_seconds(end / 1000000000 + 1);
  if (pick(2) == 0) m.mutable_tracking()->set_workers_share_process(true);
  return m;
}

std::vector<std::string> Texts(const std::vector<v1::Finding>& findings) {
  std::vector<std::string> out;
  for (const v1::Finding& f : findings) out.push_back(f.SerializeAsString());
  return out;
}

TEST(FindingsEquivalenceTest, OptimisedRulesEqualTheReferenceOnRandomRuns) {
  std::mt19937_64 rng(20261124);
  int with_chunk_findings = 0;
  int with_gap_rule = 0;  // tiny_chunks with a measured median gap
  for (int run = 0; run < 400; ++run) {
    const v1::Measurement m = RandomRun(rng);
    absl::StatusOr<v1::AggregatedMetrics> metrics = Aggregate(AggregationInputFromMeasurement(m));
    ASSERT_TRUE(metrics.ok()) << metrics.status();
    metrics->clear_findings();
    FindingsInputs in;
    in.metrics = &*metrics;
    in.chunks = &m.chunks();
    in.tracking = m.has_tracking() ? &m.tracking() : nullptr;
    in.warnings = &m.warnings();
    in.elapsed_seconds = m.metadata().elapsed_seconds();
    const std::vector<v1::Finding> optimised = ComputeFindings(in);
    const std::vector<v1::Finding> reference = findings_reference::ComputeFindingsReference(in);
    ASSERT_EQ(Texts(optimised), Texts(reference)) << "run " << run;
    // And read from the chunk columns, as Aggregate passes them.
    absl::StatusOr<std::unique_ptr<PreparedChunks>> prepared = PrepareChunks(m.chunks());
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    in.columns = &(*prepared)->columns;
    ASSERT_EQ(Texts(ComputeFindings(in)), Texts(reference)) << "run " << run << ", columns";
    // And from a table's columns, as MeasureRun aggregates: ties (shared starts, ends and
    // durations) broken by the columns alone, the same as Before on the records.
    ChunkTable table;
    for (const v1::ChunkRecord& record : m.chunks()) table.Append(record);
    absl::StatusOr<std::unique_ptr<PreparedChunks>> from_table = PrepareChunks(table);
    ASSERT_TRUE(from_table.ok()) << from_table.status();
    FindingsInputs of_table = in;
    of_table.chunks = nullptr;
    of_table.chunk_table = &table;
    of_table.columns = &(*from_table)->columns;
    ASSERT_EQ(Texts(ComputeFindings(of_table)), Texts(reference)) << "run " << run << ", table";
    for (const v1::Finding& f : optimised) {
      with_chunk_findings += f.code() == "stragglers" || f.code() == "idle_tail" ||
                             f.code() == "load_imbalance" || f.code() == "failed_chunks";
      with_gap_rule += f.code() == "tiny_chunks" && f.numbers_size() > 1;
    }
  }
  // The random runs do reach the chunk rules (not only their early returns).
  EXPECT_GT(with_chunk_findings, 200);
  EXPECT_GT(with_gap_rule, 20);
}

// An engine's fixed-length tasks: every duration equal, starts shared by a wave of tasks without
// a file, ends shared too. The findings break these ties from the columns: on a table they build
// only the records they name, not every tied one (10^6 such records built and kept cost ~1 KB
// each and several seconds).
TEST(FindingsEquivalenceTest, TiesAreBrokenWithoutBuildingTheTiedRecords) {
  v1::Measurement m;
  const int kWaves = 50, kWorkers = 40;
  for (int wave = 0; wave < kWaves; ++wave) {
    for (int w = 0; w < kWorkers; ++w) {
      v1::ChunkRecord& c = *m.add_chunks();
      c.set_worker(absl::StrCat("worker-", w));
      c.set_task_id(absl::StrCat(wave * kWorkers + w + 1));
      c.set_uuid(absl::StrCat("taskvine-task-", wave * kWorkers + w + 1));
      c.set_start_unix_ns(kStart + int64_t{wave} * 500'000'000);
      c.set_end_unix_ns(c.start_unix_ns() + 450'000'000);
      c.set_duration_seconds(0.45);
      c.set_status(v1::CHUNK_STATUS_OK);
    }
  }
  // One straggler, so that the stragglers rule names chunks.
  m.mutable_chunks(7)->set_duration_seconds(9.0);
  m.mutable_chunks(7)->set_end_unix_ns(m.chunks(7).start_unix_ns() + 9'000'000'000);
  m.mutable_metadata()->set_elapsed_seconds(40);
  absl::StatusOr<v1::AggregatedMetrics> metrics = Aggregate(AggregationInputFromMeasurement(m));
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  metrics->clear_findings();
  FindingsInputs in;
  in.metrics = &*metrics;
  in.chunks = &m.chunks();
  in.warnings = &m.warnings();
  in.elapsed_seconds = m.metadata().elapsed_seconds();
  const std::vector<v1::Finding> reference = findings_reference::ComputeFindingsReference(in);
  ChunkTable table;
  for (const v1::ChunkRecord& record : m.chunks()) table.Append(record);
  absl::StatusOr<std::unique_ptr<PreparedChunks>> prepared = PrepareChunks(table);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  in.chunks = nullptr;
  in.chunk_table = &table;
  in.columns = &(*prepared)->columns;
  const std::vector<v1::Finding> from_table = ComputeFindings(in);
  ASSERT_EQ(Texts(from_table), Texts(reference));
  bool stragglers = false;
  for (const v1::Finding& f : from_table) stragglers |= f.code() == "stragglers";
  EXPECT_TRUE(stragglers);
  EXPECT_LE((*prepared)->columns.table_records->built(), 10u);
}

// Memory samples for RandomRun's tracking: limits unknown, zero or NaN on some samples, peaks near
// the limit on some runs, spills on some.
void AddRandomMemory(std::mt19937_64& rng, v1::TrackingData& tracking) {
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  const int workers = pick(4);
  const double peak_share = pick(2) == 0 ? 0.5 : 0.99;
  for (int w = 0; w < workers; ++w) {
    v1::WorkerSeries& series = *tracking.add_workers();
    series.set_worker(absl::StrCat("tcp://10.0.0.", w, ":40"));
    const int samples = pick(700);
    const bool spills = pick(3) == 0;
    for (int i = 0; i < samples; ++i) {
      series.add_time_unix_ns(kStart + int64_t{i} * 1'000'000'000);
      const double limit = pick(20) == 0 ? (pick(2) == 0 ? 0.0 : std::nan("")) : 4e9;
      series.add_memory_limit_bytes(limit);
      series.add_memory_bytes(4e9 * peak_share * (pick(1000) + 1) / 1000.0);
      if (spills) series.add_spilled_bytes(pick(4) == 0 ? 1e6 * pick(100) : 0.0);
    }
  }
}

std::vector<std::string> Texts(const std::vector<v1::RuleEvaluation>& evaluations) {
  std::vector<std::string> out;
  for (const v1::RuleEvaluation& e : evaluations) out.push_back(e.SerializeAsString());
  return out;
}

TEST(FindingsEquivalenceTest, TwoThreadsGiveWhatOneThreadGives) {
  std::mt19937_64 rng(20261127);
  int memory_findings = 0, after_tiny_chunks = 0;
  for (int run = 0; run < 300; ++run) {
    v1::Measurement m = RandomRun(rng);
    absl::StatusOr<v1::AggregatedMetrics> metrics = Aggregate(AggregationInputFromMeasurement(m));
    ASSERT_TRUE(metrics.ok()) << metrics.status();
    metrics->clear_findings();
    AddRandomMemory(rng, *m.mutable_tracking());
    FindingsInputs in;
    in.metrics = &*metrics;
    in.chunks = &m.chunks();
    in.tracking = &m.tracking();
    in.warnings = &m.warnings();
    in.elapsed_seconds = m.metadata().elapsed_seconds();
    in.two_threads_min_records = SIZE_MAX;
    const FindingsOutcome one_thread = EvaluateFindings(in);
    in.two_threads_min_records = 0;
    const FindingsOutcome two_threads = EvaluateFindings(in);
    ASSERT_EQ(Texts(two_threads.findings), Texts(one_thread.findings)) << "run " << run;
    ASSERT_EQ(Texts(two_threads.evaluations), Texts(one_thread.evaluations)) << "run " << run;
    ASSERT_EQ(Texts(two_threads.findings), Texts(findings_reference::ComputeFindingsReference(in)))
        << "run " << run;
    bool tiny = false;
    for (const v1::Finding& f : two_threads.findings) {
      tiny |= f.code() == "tiny_chunks";
      if (f.code() != "memory_pressure") continue;
      ++memory_findings;
      after_tiny_chunks +=
          tiny || std::any_of(two_threads.findings.begin(), two_threads.findings.end(),
                              [](const v1::Finding& g) { return g.code() == "tiny_chunks"; });
    }
  }
  // The memory rule fires, also after tiny_chunks (whose firing its advice reads).
  EXPECT_GT(memory_findings, 50);
  EXPECT_GT(after_tiny_chunks, 5);
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
