// ReadFinishedTaskVineRun on every TaskVine / Work Queue log in testdata, against goldens made
// by the reader before its memory rework (#25): the RawRun must not change in any field (chunk
// records with their slots, warnings and their order, tracking series, span, window). The
// worker series' goldens were rewritten once since, when they lost the "before" point at each
// change and stored their cores and limits once: with those put back they equal the old ones
// exactly, and //tools:taskvine_step_points_test shows every figure built from them unchanged.
//
// The goldens (ingest/testdata/taskvine_golden/<fixture>.pb.gz, a gzipped v1::Measurement
// holding the RawRun's parts) are rewritten by
//   ROASTCOFFEA_UPDATE_GOLDENS=$PWD/ingest/testdata/taskvine_golden
//     ./bazelw run //ingest:taskvine_run_golden_test  (the two lines as one)
// only when a change of the RawRun is intended.
#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "backends/taskvine/test_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "ingest/taskvine_run.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using ::google::protobuf::util::MessageDifferencer;

const std::string kData = "backends/taskvine/testdata/";

struct Fixture {
  std::string name;
  std::string transactions;  // under kData; .gz files are unpacked first
  std::string performance;   // "" when the run has none
  std::string chunk_category;
};

const std::vector<Fixture>& Fixtures() {
  static const std::vector<Fixture>* fixtures = new std::vector<Fixture>{
      {"synthetic-1", "synthetic-1-transactions.txt", "synthetic-1-performance.txt", "processing"},
      {"synthetic-1-no-such-category", "synthetic-1-transactions.txt",
       "synthetic-1-performance.txt", "no-such-category"},
      {"synthetic-2", "synthetic-2-transactions.txt", "synthetic-2-performance.txt",
       "<function_process_chunk_at_0x7f3a2c1e5d30>"},
      {"real-runA", "real/runA/transactions", "real/runA/performance", "processing"},
      {"real-runB", "real/runB/transactions", "real/runB/performance", "processing"},
      {"real-runB-hung", "real/runB-hung/transactions", "real/runB-hung/performance", "processing"},
      {"real-runC-monitored", "real/runC-monitored/transactions", "real/runC-monitored/performance",
       "processing"},
      {"lnni-2025-03", "lnni-2025-03-transactions.gz", "lnni-2025-03-performance.gz",
       "parsl-default"},
      {"colmena-wq-2023-02", "colmena-wq-2023-02-transactions.gz", "",
       "compute_atomization_energy"},
  };
  return *fixtures;
}

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

// The path to read `file` from: itself, or for a .gz file its unpacked copy.
std::string Readable(const Fixture& fixture, const std::string& file) {
  const std::string path = kData + file;
  if (file.size() < 3 || file.substr(file.size() - 3) != ".gz") return path;
  std::string contents;
  EXPECT_TRUE(taskvine::ReadWholeFile(path, &contents).ok()) << path;
  const bool performance = file.find("performance") != std::string::npos;
  const std::string out =
      absl::StrCat(TempDir(), "/", fixture.name, "-", performance ? "performance" : "transactions");
  std::ofstream(out, std::ios::binary) << contents;
  return out;
}

void WriteGzipped(const std::string& path, const std::string& bytes) {
  gzFile file = gzopen(path.c_str(), "wb9");
  ASSERT_NE(file, nullptr) << path;
  EXPECT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()))
      << path;
  gzclose(file);
}

// The RawRun's parts as one message, so that a difference is reported field by field.
v1::Measurement AsMessage(RawRun& run) {
  v1::Measurement m;
  v1::MeasurementMetadata& metadata = *m.mutable_metadata();
  metadata.set_backend(run.backend);
  metadata.set_engine_version(run.engine_version);
  metadata.mutable_start_time()->set_seconds(absl::ToUnixSeconds(run.window.start));
  metadata.mutable_start_time()->set_nanos(
      static_cast<int32_t>(absl::ToUnixNanos(run.window.start) % 1'000'000'000));
  metadata.mutable_end_time()->set_seconds(absl::ToUnixSeconds(run.window.end));
  metadata.mutable_end_time()->set_nanos(
      static_cast<int32_t>(absl::ToUnixNanos(run.window.end) % 1'000'000'000));
  metadata.set_elapsed_seconds(run.window.elapsed_seconds);
  if (run.window.host_facts.has_value()) *metadata.mutable_host_facts() = *run.window.host_facts;
  if (run.report.has_value()) *m.mutable_report() = *run.report;
  if (run.tracking.has_value()) *m.mutable_tracking() = *run.tracking;
  for (size_t i = 0; i < run.engine_chunks.size(); ++i) {
    run.engine_chunks.ReadRecord(i, m.add_chunks());
  }
  // The instrumentation's records: none from the logs (they would go to rejected_chunks here).
  for (size_t i = 0; i < run.chunks.size(); ++i) {
    run.chunks.ReadRecord(i, m.add_rejected_chunks());
  }
  for (const v1::Span& span : run.spans) *m.add_spans() = span;
  for (const v1::Warning& warning : run.warnings) *m.add_warnings() = warning;
  return m;
}

TEST(TaskVineRunGoldenTest, EveryFixtureReadsAsBefore) {
  const char* update = std::getenv("ROASTCOFFEA_UPDATE_GOLDENS");
  for (const Fixture& fixture : Fixtures()) {
    SCOPED_TRACE(fixture.name);
    TaskVineRunOptions options;
    options.logs = Readable(fixture, fixture.transactions);
    if (!fixture.performance.empty()) {
      absl::StrAppend(&options.logs, ",", Readable(fixture, fixture.performance));
    }
    options.chunk_category = fixture.chunk_category;
    absl::StatusOr<RawRun> run = ReadFinishedTaskVineRun(options);
    ASSERT_TRUE(run.ok()) << run.status();
    const v1::Measurement read = AsMessage(*run);
    const std::string golden_path =
        absl::StrCat("ingest/testdata/taskvine_golden/", fixture.name, ".pb.gz");
    if (update != nullptr) {
      WriteGzipped(absl::StrCat(update, "/", fixture.name, ".pb.gz"), read.SerializeAsString());
      continue;
    }
    std::string bytes;
    ASSERT_TRUE(taskvine::ReadWholeFile(golden_path, &bytes).ok()) << "no golden " << golden_path;
    v1::Measurement golden;
    ASSERT_TRUE(golden.ParseFromString(bytes)) << golden_path;
    // A golden that holds nothing would pass vacuously.
    ASSERT_TRUE(golden.has_tracking());
    ASSERT_EQ(golden.spans_size(), 1);
    if (fixture.chunk_category != "no-such-category") {
      ASSERT_GT(golden.chunks_size(), 0);
    }
    MessageDifferencer differencer;
    std::string differences;
    differencer.ReportDifferencesToString(&differences);
    EXPECT_TRUE(differencer.Compare(golden, read)) << differences.substr(0, 4000);
  }
}

}  // namespace
}  // namespace roastcoffea
