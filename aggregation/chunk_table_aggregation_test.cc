// Aggregate of a run's chunk records as a ChunkTable (AggregationInput::chunk_table, read from
// the table's columns) against Aggregate of the same records as messages (`chunks`): the
// serialized AggregatedMetrics, findings included, must be byte-identical, and invalid input
// must give the same error (issue #25).
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "aggregation/aggregate.h"
#include "aggregation/random_chunk_records.h"
#include "google/protobuf/unknown_field_set.h"
#include "gtest/gtest.h"
#include "schema/chunk_table.h"
#include "schema/deterministic_bytes.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using testing_internal::RandomRecords;

ChunkTable TableOf(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& records) {
  ChunkTable table;
  for (const v1::ChunkRecord& record : records) table.Append(record);
  return table;
}

struct Outcome {
  absl::Status status;
  std::string bytes;     // the serialized metrics when status is OK
  int num_findings = 0;  // to see that the comparison covers findings
};

Outcome OutcomeOf(const absl::StatusOr<v1::AggregatedMetrics>& metrics) {
  Outcome outcome;
  outcome.status = metrics.status();
  if (metrics.ok()) {
    outcome.bytes = DeterministicBytes(*metrics);
    outcome.num_findings = metrics->findings_size();
  }
  return outcome;
}

enum class Source { kRecords, kTable };

// Aggregate of `m`'s records from `source`, with columns made inside or by PrepareChunks.
Outcome AggregateFrom(const v1::Measurement& m, const ChunkTable& table, Source source,
                      bool prepare, size_t parallel_min_records) {
  AggregationOptions options;
  options.parallel_min_records = parallel_min_records;
  AggregationInput input = AggregationInputFromMeasurement(m, options);
  if (source == Source::kTable) {
    input.chunks = nullptr;
    input.chunk_table = &table;
  }
  std::unique_ptr<PreparedChunks> prepared;
  if (prepare) {
    absl::StatusOr<std::unique_ptr<PreparedChunks>> made =
        source == Source::kTable ? PrepareChunks(table, parallel_min_records)
                                 : PrepareChunks(m.chunks(), parallel_min_records);
    if (!made.ok()) return OutcomeOf(made.status());
    prepared = *std::move(made);
    input.prepared_chunks = prepared.get();
  }
  return OutcomeOf(Aggregate(input));
}

// Both sources give the same outcome, whichever way the columns are made; returns it.
Outcome ExpectSameFromTable(const v1::Measurement& m) {
  const ChunkTable table = TableOf(m.chunks());
  Outcome reference;
  for (const size_t parallel_min_records : {size_t{1}, SIZE_MAX}) {
    for (const bool prepare : {false, true}) {
      SCOPED_TRACE(
          absl::StrCat("parallel_min_records ", parallel_min_records, " prepare ", prepare));
      const Outcome records =
          AggregateFrom(m, table, Source::kRecords, prepare, parallel_min_records);
      const Outcome from_table =
          AggregateFrom(m, table, Source::kTable, prepare, parallel_min_records);
      EXPECT_EQ(from_table.status, records.status);
      EXPECT_TRUE(from_table.bytes == records.bytes)
          << "the table's metrics differ from the records' (" << from_table.bytes.size()
          << " against " << records.bytes.size() << " bytes)";
      reference = records;
    }
  }
  return reference;
}

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

// RandomRecords with what the column figures never read as well: fields the table keeps
// outside its columns (slices, retried task ids, unknown fields, sections with optional
// fields, file metadata without branches and the reverse), optional fields set to 0 or unset,
// unknown and unspecified statuses, -0.0, task ids and error texts on any record.
v1::Measurement RichRecords(uint64_t seed, int n, bool shuffle) {
  v1::Measurement m = RandomRecords(seed, n, shuffle);
  std::mt19937_64 rng(seed * 7919 + 1);
  const auto one_in = [&rng](int k) { return rng() % static_cast<uint64_t>(k) == 0; };
  for (v1::ChunkRecord& c : *m.mutable_chunks()) {
    if (one_in(9)) c.set_status(static_cast<v1::ChunkStatus>(5 + rng() % 3));  // unknown
    if (one_in(9)) c.clear_status();
    if (one_in(3)) c.set_task_id(absl::StrCat(rng() % 5000));
    if (one_in(10)) c.set_task_id(absl::StrCat("task-", rng() % 50));
    if (one_in(15)) c.set_error_text("a text on any record");
    if (one_in(8)) c.add_retried_task_ids(absl::StrCat(rng() % 5000));
    if (one_in(12)) {
      v1::SectionSlice* slice = c.add_slices();
      slice->set_duration_ns(static_cast<int64_t>(rng() % 1000));
      c.set_dropped_slices(static_cast<int64_t>(rng() % 3));
    }
    if (one_in(20)) c.GetReflection()->MutableUnknownFields(&c)->AddVarint(1000, rng() % 100);
    if (one_in(10)) c.mutable_file_metadata()->set_total_tree_bytes(static_cast<int64_t>(rng()));
    if (one_in(10)) c.add_accessed_branches(absl::StrCat("only", rng() % 4));
    if (one_in(10)) c.set_branches_read_percent(static_cast<double>(rng() % 100));
    if (one_in(6)) c.set_peak_live_bytes(0);
    if (one_in(6)) c.set_run_queue_wait_seconds(0);
    if (one_in(5)) c.set_allocated_bytes(static_cast<int64_t>(rng() % 1'000'000));
    if (one_in(4)) c.set_machine_load(static_cast<double>(rng() % 16));
    if (one_in(4)) c.set_machine_cpus(static_cast<double>(1 + rng() % 8));
    if (one_in(5)) c.set_ready_unix_ns(c.start_unix_ns() - static_cast<int64_t>(rng() % 1000));
    if (one_in(7)) c.set_file_bytes(0);
    if (one_in(9)) c.set_cpu_seconds(-0.0);
    if (one_in(9)) c.set_memory_peak_bytes(static_cast<int64_t>(rng() % 1'000'000));
    if (one_in(9)) c.set_uncompressed_bytes_read(static_cast<int64_t>(rng() % 1'000'000));
    if (one_in(8) && c.sections_size() > 0) {
      c.mutable_sections(0)->set_allocated_bytes(static_cast<int64_t>(rng() % 1000));
    }
  }
  return m;
}

TEST(ChunkTableAggregationTest, FindingsCorpus) {
  int findings = 0, chunks = 0;
  for (const char* name :
       {"dask_2025.9.3_work.pb", "taskvine_churn_follow.pb", "threadpool_8threads_starved.pb",
        "threadpool_chunk2000_rereading.pb", "workqueue_2workers.pb"}) {
    SCOPED_TRACE(name);
    const v1::Measurement m = LoadCorpus(name);
    chunks += m.chunks_size();
    const Outcome outcome = ExpectSameFromTable(m);
    EXPECT_TRUE(outcome.status.ok()) << outcome.status;
    findings += outcome.num_findings;
  }
  EXPECT_GT(chunks, 0);
  EXPECT_GT(findings, 0);  // the corpus fires findings: they are compared too
}

TEST(ChunkTableAggregationTest, RandomRecords) {
  for (const uint64_t seed : {1, 2, 3}) {
    for (const bool shuffle : {false, true}) {
      SCOPED_TRACE(absl::StrCat("seed ", seed, " shuffle ", shuffle));
      const Outcome outcome = ExpectSameFromTable(RandomRecords(seed, 600, shuffle));
      EXPECT_TRUE(outcome.status.ok()) << outcome.status;
    }
  }
}

TEST(ChunkTableAggregationTest, RichRecords) {
  for (const uint64_t seed : {4, 5, 6, 7}) {
    for (const bool shuffle : {false, true}) {
      SCOPED_TRACE(absl::StrCat("seed ", seed, " shuffle ", shuffle));
      const Outcome outcome = ExpectSameFromTable(RichRecords(seed, 800, shuffle));
      EXPECT_TRUE(outcome.status.ok()) << outcome.status;
    }
  }
}

// Runs of records whose remainders are byte-equal (a file's chunks with one branch list and
// metadata, as the original's instrumentation writes them), which the table's pass parses once:
// equal remainders across files read in turn, a file's earliest record in the middle of
// its run, records without a remainder or failed between equal ones, and branch lists that
// differ only in the branch.
TEST(ChunkTableAggregationTest, RecordsSharingTheirRemainder) {
  for (const bool shuffle : {false, true}) {
    SCOPED_TRACE(absl::StrCat("shuffle ", shuffle));
    v1::Measurement m = RandomRecords(12, 900, shuffle);
    int i = 0;
    for (v1::ChunkRecord& c : *m.mutable_chunks()) {
      c.clear_accessed_branches();
      c.clear_file_metadata();
      // Three files read side by side (one per dataset), their remainders equal.
      c.set_file(absl::StrCat("f", i % 3, "-", i / 30, ".root"));
      c.set_start_unix_ns(1'000'000 + (i % 30 == 7 ? -1000 : i));
      if (i % 11 != 3) {
        for (const char* branch : {"Jet_pt", "Jet_eta"}) c.add_accessed_branches(branch);
        // Every fourth file the same branches under another name, read whole.
        if ((i / 30) % 4 == 1) c.add_accessed_branches(absl::StrCat("x", i / 60));
        if ((i / 30) % 3 != 2) c.mutable_file_metadata()->set_total_branches(100 + i / 90);
      }
      if (i % 13 == 5) c.set_status(v1::CHUNK_STATUS_FAILED);
      ++i;
    }
    const Outcome outcome = ExpectSameFromTable(m);
    EXPECT_TRUE(outcome.status.ok()) << outcome.status;
  }
}

// Random records with a real run's tracking, metadata and report, so that the rules reading
// tracking and records together (capacity, retry penalty, slow hosts, contention) run.
TEST(ChunkTableAggregationTest, RichRecordsWithTracking) {
  for (const char* name : {"taskvine_churn_follow.pb", "dask_2025.9.3_work.pb"}) {
    SCOPED_TRACE(name);
    v1::Measurement m = LoadCorpus(name);
    const v1::Measurement random = RichRecords(11, 500, /*shuffle=*/true);
    m.mutable_chunks()->MergeFrom(random.chunks());
    const Outcome outcome = ExpectSameFromTable(m);
    EXPECT_TRUE(outcome.status.ok()) << outcome.status;
  }
}

// Hand-made records: the dataset "" and a dataset named "unknown" (one name), a record without
// file or worker, a failed record whose sections are outside the columns, threads of one process.
TEST(ChunkTableAggregationTest, HandMadeRecords) {
  v1::Measurement m;
  m.mutable_metadata()->set_elapsed_seconds(10);
  const auto add = [&m](const std::string& dataset, const std::string& file,
                        const std::string& worker, double seconds) {
    v1::ChunkRecord* c = m.add_chunks();
    c->set_dataset(dataset);
    c->set_file(file);
    c->set_worker(worker);
    c->set_uuid("u-" + file);
    c->set_duration_seconds(seconds);
    c->set_events(100);
    c->set_entry_stop(100);
    return c;
  };
  add("", "a.root", "w/thread-0", 1);
  add("unknown", "a.root", "w/thread-1", 2);
  add("DY", "", "", 3);
  v1::ChunkRecord* failed = add("DY", "b.root", "w/thread-0", 4);
  failed->set_status(v1::CHUNK_STATUS_FAILED);
  failed->set_error_text("OSError: b.root");
  v1::SectionRecord* section = failed->add_sections();
  section->set_name("load");
  section->set_kind(v1::SectionRecord::KIND_MEMORY);
  section->set_peak_live_bytes(5);
  v1::ChunkRecord* retried = add("DY", "b.root", "v/thread-0", 5);
  retried->set_attempt(1);
  *retried->add_sections() = *section;
  retried->mutable_sections(0)->clear_peak_live_bytes();
  const Outcome outcome = ExpectSameFromTable(m);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
}

TEST(ChunkTableAggregationTest, EmptyTable) {
  const Outcome outcome = ExpectSameFromTable(v1::Measurement());
  EXPECT_TRUE(outcome.status.ok()) << outcome.status;
}

// Each kind of invalid record, as the third of six records (the fifth invalid too, in another
// way: the first is named), in a record held in columns and in one with fields outside them.
TEST(ChunkTableAggregationTest, InvalidRecordsGiveTheSameError) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::pair<std::string, std::function<void(v1::ChunkRecord*)>>> invalid = {
      {"NaN duration", [&](v1::ChunkRecord* c) { c->set_duration_seconds(nan); }},
      {"infinite duration", [&](v1::ChunkRecord* c) { c->set_duration_seconds(inf); }},
      {"negative duration", [](v1::ChunkRecord* c) { c->set_duration_seconds(-1); }},
      {"end before start",
       [](v1::ChunkRecord* c) {
         c->set_start_unix_ns(2'000);
         c->set_end_unix_ns(1'000);
       }},
      {"negative events", [](v1::ChunkRecord* c) { c->set_events(-3); }},
      {"unknown section kind",
       [](v1::ChunkRecord* c) {
         c->add_sections()->set_name("ok");
         v1::SectionRecord* s = c->add_sections();
         s->set_name("bad");
         s->set_kind(static_cast<v1::SectionRecord::Kind>(9));
       }},
      {"NaN section duration",
       [&](v1::ChunkRecord* c) { c->add_sections()->set_duration_seconds(nan); }},
      {"negative section duration",
       [](v1::ChunkRecord* c) { c->add_sections()->set_duration_seconds(-0.5); }},
      {"infinite section CPU",
       [&](v1::ChunkRecord* c) { c->add_sections()->set_cpu_seconds(inf); }},
  };
  for (const auto& [what, make_invalid] : invalid) {
    for (const bool with_rest : {false, true}) {
      SCOPED_TRACE(absl::StrCat(what, with_rest ? ", record with rest fields" : ""));
      v1::Measurement m = RandomRecords(9, 6, /*shuffle=*/false);
      for (v1::ChunkRecord& c : *m.mutable_chunks()) {
        c.clear_accessed_branches();
        c.clear_file_metadata();
      }
      v1::ChunkRecord* bad = m.mutable_chunks(2);
      make_invalid(bad);
      if (with_rest) {
        bad->add_retried_task_ids("7");
        if (bad->sections_size() > 0) bad->mutable_sections(0)->set_allocated_bytes(1);
      }
      m.mutable_chunks(4)->set_events(-1);
      ASSERT_EQ(TableOf(m.chunks()).HasRest(2), with_rest);
      const Outcome outcome = ExpectSameFromTable(m);
      EXPECT_EQ(outcome.status.code(), absl::StatusCode::kInvalidArgument) << outcome.status;
      EXPECT_NE(outcome.status.message().find("chunks[2]"), absl::string_view::npos)
          << outcome.status;
    }
  }
}

TEST(ChunkTableAggregationTest, RecordsAndTableTogetherAreRejected) {
  const v1::Measurement m = RandomRecords(1, 3, /*shuffle=*/false);
  const ChunkTable table = TableOf(m.chunks());
  AggregationInput input = AggregationInputFromMeasurement(m);
  input.chunk_table = &table;
  EXPECT_EQ(Aggregate(input).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ChunkTableAggregationTest, PreparedFromAnotherTableIsRejected) {
  const v1::Measurement m = RandomRecords(1, 3, /*shuffle=*/false);
  const ChunkTable table = TableOf(m.chunks());
  const ChunkTable other = TableOf(m.chunks());
  absl::StatusOr<std::unique_ptr<PreparedChunks>> prepared = PrepareChunks(other);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  AggregationInput input = AggregationInputFromMeasurement(m);
  input.chunks = nullptr;
  input.chunk_table = &table;
  input.prepared_chunks = prepared->get();
  const absl::StatusOr<v1::AggregatedMetrics> metrics = Aggregate(input);
  EXPECT_EQ(metrics.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(metrics.status().message().find("chunk_table"), absl::string_view::npos)
      << metrics.status();
}

}  // namespace
}  // namespace roastcoffea
