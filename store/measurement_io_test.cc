#include "store/measurement_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using google::protobuf::util::MessageDifferencer;

// A fresh, empty directory under TEST_TMPDIR for the running test.
std::string TestDirectory() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string base = tmp != nullptr ? tmp : "/tmp";
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string path = absl::StrCat(base, "/", info->test_suite_name(), ".", info->name());
  EXPECT_EQ(mkdir(path.c_str(), 0777), 0) << path;
  return path;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

void WriteWholeFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  ASSERT_TRUE(out.good()) << path;
}

std::vector<std::string> ListDirectory(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return names;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

// Every part of the schema populated: metadata, report, tracking series, chunk records with
// sections, spans and aggregated metrics with optional fields.
v1::Measurement FullMeasurement() {
  v1::Measurement m;
  v1::MeasurementMetadata& metadata = *m.mutable_metadata();
  metadata.set_schema_version(kSchemaVersion);
  metadata.set_name("ttbar-run");
  metadata.mutable_start_time()->set_seconds(1795335303);
  metadata.mutable_start_time()->set_nanos(123456789);
  metadata.mutable_end_time()->set_seconds(1795335317);
  metadata.set_elapsed_seconds(13.7);
  metadata.set_host("node01");
  metadata.set_backend("threadpool");
  metadata.set_tool_version("0.1.0");
  metadata.add_command_line("roastcoffea");
  metadata.add_command_line("--workers=4");
  (*metadata.mutable_configuration())["chunksize"] = "100000";
  (*metadata.mutable_configuration())["dataset"] = "\xE6\x95\xB0\xE6\x8D\xAE";

  v1::WorkflowReport& report = *m.mutable_report();
  report.set_events(1233000);
  report.set_compressed_bytes_read(46074429);
  report.set_process_time_seconds(17.5);
  report.set_chunks(12);
  v1::DatasetCounters& dataset = *report.add_datasets();
  dataset.set_dataset("ttbar");
  dataset.set_events(1233000);
  dataset.set_chunks(12);
  report.add_columns("Jet_pt");

  v1::TrackingData& tracking = *m.mutable_tracking();
  tracking.set_backend("threadpool");
  tracking.set_interval_seconds(0.5);
  for (int i = 0; i < 3; ++i) {
    tracking.add_worker_count_time_unix_ns(1795335303000000000 + i * 500000000LL);
    tracking.add_worker_count(4);
    tracking.add_queued_chunks(3 - i);
  }
  v1::WorkerSeries& worker = *tracking.add_workers();
  worker.set_worker("node01:1234/0");
  worker.set_host("node01");
  for (int i = 0; i < 3; ++i) {
    worker.add_time_unix_ns(1795335303000000000 + i * 500000000LL);
    worker.add_memory_bytes(3.5e8 + i * 1e6);
    worker.add_cores(1);
    worker.add_cpu_percent(97.5);
  }

  for (int i = 0; i < 2; ++i) {
    v1::ChunkRecord& chunk = *m.add_chunks();
    chunk.set_dataset("ttbar");
    chunk.set_file("root://eos/ttbar.root");
    chunk.set_uuid("c0ffee");
    chunk.set_entry_start(i * 100000);
    chunk.set_entry_stop((i + 1) * 100000);
    chunk.set_events(100000);
    chunk.set_start_unix_ns(1795335303000000000 + i);
    chunk.set_end_unix_ns(1795335304000000000 + i);
    chunk.set_duration_seconds(1.25);
    chunk.set_cpu_seconds(1.2);
    chunk.set_memory_before_bytes(300000000);
    chunk.set_memory_after_bytes(290000000);  // memory can shrink
    chunk.set_worker("node01:1234");
    chunk.set_thread_index(i);
    chunk.set_status(i == 0 ? v1::CHUNK_STATUS_OK : v1::CHUNK_STATUS_FAILED);
    if (i == 1) chunk.set_error_text("OSError: read timed out");
    chunk.set_attempt(i);
    chunk.add_accessed_branches("Jet_pt");
    chunk.set_branches_read_percent(2.5);
    v1::SectionRecord& section = *chunk.add_sections();
    section.set_name("jet selection");
    section.set_kind(v1::SectionRecord::KIND_TIME);
    section.set_entries(3);
    section.set_duration_seconds(0.25);
    chunk.mutable_file_metadata()->set_file("root://eos/ttbar.root");
    chunk.mutable_file_metadata()->set_compression_ratio(0.31);
  }

  v1::Span& span = *m.add_spans();
  span.set_name("processing");
  span.set_id("span-1");
  v1::FineMetric& fine = *span.add_metrics();
  fine.set_context("execute");
  fine.set_task_prefix("JetAnalysisProcessor");
  fine.set_activity("thread-cpu");
  fine.set_unit("seconds");
  fine.set_value(9.7);

  v1::AggregatedMetrics& metrics = *m.mutable_metrics();
  metrics.mutable_workflow()->set_elapsed_time_seconds(13.7);
  metrics.mutable_workflow()->set_total_events(1233000);
  metrics.mutable_workflow()->set_compression_factor(3.2);
  metrics.mutable_workers()->set_peak_workers(4);
  metrics.mutable_workers()->set_total_cores(0.0);  // set, even though zero
  metrics.mutable_efficiency()->set_speedup_factor(1.277);
  metrics.mutable_chunks()->set_num_chunks(2);
  metrics.mutable_chunks()->mutable_duration_seconds()->set_count(1);
  return m;
}

// Saves FullMeasurement() as <TestDirectory()>/run and returns the directory.
std::string SaveFull(const std::string& parent) {
  absl::StatusOr<std::string> saved = SaveMeasurement(FullMeasurement(), parent, "run");
  EXPECT_TRUE(saved.ok()) << saved.status();
  return saved.ok() ? *saved : "";
}

TEST(SaveMeasurementTest, RoundTripIsEqual) {
  const std::string parent = TestDirectory();
  const v1::Measurement original = FullMeasurement();
  absl::StatusOr<std::string> saved = SaveMeasurement(original, parent, "run");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(*saved, parent + "/run");
  EXPECT_EQ(ListDirectory(*saved),
            (std::vector<std::string>{"FORMAT", "measurement.json", "measurement.pb"}));
  EXPECT_EQ(ReadWholeFile(*saved + "/FORMAT"), "roastcoffea-measurement 1\n");
  // No temporary directory is left behind.
  EXPECT_EQ(ListDirectory(parent), std::vector<std::string>{"run"});

  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(*saved);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(MessageDifferencer::Equals(original, *loaded)) << loaded->DebugString();
  EXPECT_EQ(loaded->chunks_size(), 2);
  EXPECT_EQ(loaded->tracking().workers(0).memory_bytes_size(), 3);
  EXPECT_TRUE(loaded->metrics().workers().has_total_cores());
  EXPECT_FALSE(loaded->metrics().workers().has_cores_per_worker());
}

TEST(SaveMeasurementTest, JsonFormParsesBackToTheSameMessage) {
  const std::string directory = SaveFull(TestDirectory());
  const std::string json = ReadWholeFile(directory + "/measurement.json");
  // Field names as in the .proto, pretty-printed.
  EXPECT_TRUE(absl::StrContains(json, "\"schema_version\": 1")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"time_unix_ns\"")) << json;
  EXPECT_FALSE(absl::StrContains(json, "timeUnixNs")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\n")) << json;
  v1::Measurement parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(FullMeasurement(), parsed)) << parsed.DebugString();
}

TEST(SaveMeasurementTest, NanSurvivesBothForms) {
  v1::Measurement measurement = FullMeasurement();
  measurement.mutable_metrics()->mutable_workflow()->set_data_rate_gbps(std::nan(""));
  absl::StatusOr<std::string> saved = SaveMeasurement(measurement, TestDirectory(), "nan");
  ASSERT_TRUE(saved.ok()) << saved.status();
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(*saved);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(std::isnan(loaded->metrics().workflow().data_rate_gbps()));
  ASSERT_EQ(unlink((*saved + "/measurement.pb").c_str()), 0);
  loaded = LoadMeasurement(*saved);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(std::isnan(loaded->metrics().workflow().data_rate_gbps()));
}

TEST(SaveMeasurementTest, FillsInAMissingSchemaVersion) {
  v1::Measurement measurement = FullMeasurement();
  measurement.mutable_metadata()->clear_schema_version();
  absl::StatusOr<std::string> saved = SaveMeasurement(measurement, TestDirectory(), "run");
  ASSERT_TRUE(saved.ok()) << saved.status();
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(*saved);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->metadata().schema_version(), kSchemaVersion);
}

TEST(SaveMeasurementTest, RefusesAForeignSchemaVersion) {
  v1::Measurement measurement = FullMeasurement();
  measurement.mutable_metadata()->set_schema_version(7);
  const std::string parent = TestDirectory();
  absl::StatusOr<std::string> saved = SaveMeasurement(measurement, parent, "run");
  EXPECT_EQ(saved.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(saved.status().message(), "schema_version is 7")) << saved.status();
  EXPECT_TRUE(ListDirectory(parent).empty());
}

TEST(SaveMeasurementTest, NeverOverwrites) {
  const std::string parent = TestDirectory();
  const std::string directory = SaveFull(parent);
  v1::Measurement other = FullMeasurement();
  other.mutable_metadata()->set_name("other");
  absl::StatusOr<std::string> again = SaveMeasurement(other, parent, "run");
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(absl::StrContains(again.status().message(), directory)) << again.status();
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(directory);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->metadata().name(), "ttbar-run");

  // An empty directory (which rename(2) alone would replace) is not overwritten either.
  ASSERT_EQ(mkdir((parent + "/empty").c_str(), 0777), 0);
  EXPECT_EQ(SaveMeasurement(other, parent, "empty").status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(ListDirectory(parent), (std::vector<std::string>{"empty", "run"}));
}

TEST(SaveMeasurementTest, CreatesMissingParents) {
  const std::string parent = TestDirectory() + "/a/b/c/";
  absl::StatusOr<std::string> saved = SaveMeasurement(FullMeasurement(), parent, "run");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_TRUE(absl::EndsWith(*saved, "/a/b/c/run")) << *saved;
  EXPECT_TRUE(LoadMeasurement(*saved).ok());
}

TEST(SaveMeasurementTest, ParentUnderARegularFileIsAClearError) {
  const std::string base = TestDirectory();
  WriteWholeFile(base + "/file", "not a directory");
  const std::string parent = base + "/file/measurements";
  absl::StatusOr<std::string> saved = SaveMeasurement(FullMeasurement(), parent, "run");
  ASSERT_FALSE(saved.ok());
  EXPECT_TRUE(absl::StrContains(saved.status().message(), parent)) << saved.status();
  EXPECT_TRUE(absl::StrContains(saved.status().message(), "Not a directory")) << saved.status();

  saved = SaveMeasurement(FullMeasurement(), base + "/file", "run");
  ASSERT_FALSE(saved.ok());
  EXPECT_TRUE(absl::StrContains(saved.status().message(), base + "/file")) << saved.status();
  EXPECT_TRUE(absl::StrContains(saved.status().message(), "Not a directory")) << saved.status();
  EXPECT_EQ(ListDirectory(base), std::vector<std::string>{"file"});
}

TEST(SaveMeasurementTest, RejectsNamesThatAreNotOneVisibleDirectory) {
  const std::string parent = TestDirectory();
  for (const std::string& name :
       {std::string(""), std::string("."), std::string(".."), std::string(".hidden"),
        std::string("a/b"), std::string("a\0b", 3), std::string("x.roastcoffea-partial-y"),
        std::string("a\x1b[2Jb"), std::string("a\x7f"),
        std::string("a\xC2\x9B"
                    "31m"),
        std::string(kMaxMeasurementNameBytes + 1, 'a')}) {
    absl::StatusOr<std::string> saved = SaveMeasurement(FullMeasurement(), parent, name);
    EXPECT_EQ(saved.status().code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_TRUE(absl::StrContains(saved.status().message(), "invalid measurement name"));
  }
  EXPECT_TRUE(ListDirectory(parent).empty());
}

TEST(SaveMeasurementTest, TheLongestNameAndItsPartialDirectoryFitNameMax) {
  const std::string parent = TestDirectory();
  const std::string name(kMaxMeasurementNameBytes, 'a');
  EXPECT_TRUE(ValidateMeasurementName(name).ok());
  EXPECT_TRUE(ValidateMeasurementName("caf\xC3\xA9-run").ok());
  absl::StatusOr<std::string> saved = SaveMeasurement(FullMeasurement(), parent, name);
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_TRUE(LoadMeasurement(*saved).ok());
}

TEST(SaveMeasurementTest, ConcurrentSavesOfOneNameHaveOneWinner) {
  const std::string parent = TestDirectory();
  constexpr int kThreads = 4;
  std::atomic<int> saved{0};
  std::atomic<int> already_exists{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      v1::Measurement measurement = FullMeasurement();  // One message per thread.
      measurement.mutable_metadata()->set_name(absl::StrCat("writer-", i));
      const absl::StatusOr<std::string> result = SaveMeasurement(measurement, parent, "run");
      if (result.ok()) ++saved;
      if (absl::IsAlreadyExists(result.status())) ++already_exists;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(saved.load(), 1);
  EXPECT_EQ(already_exists.load(), kThreads - 1);
  EXPECT_EQ(ListDirectory(parent), std::vector<std::string>{"run"});
  EXPECT_TRUE(LoadMeasurement(parent + "/run").ok());
}

TEST(SaveMeasurementTest, TextThatIsNotUtf8IsRepairedAndTheSaveReadsBack) {
  // A Latin-1 --cache_dir, a 0xFF in --name or a worker id: libprotobuf writes them but never
  // parses them back, so they are repaired and said.
  v1::Measurement measurement = FullMeasurement();
  measurement.mutable_metadata()->set_name("bad\xffname");
  measurement.mutable_metadata()->add_command_line("--cache_dir=/tmp/cache\xe9");
  measurement.mutable_chunks(0)->set_worker("worker\xfe");
  const std::string parent = TestDirectory();
  absl::StatusOr<std::string> saved = SaveMeasurement(measurement, parent, "latin1");
  ASSERT_TRUE(saved.ok()) << saved.status();
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(*saved);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->metadata().name(), "bad\xEF\xBF\xBDname");
  EXPECT_EQ(loaded->chunks(0).worker(), "worker\xEF\xBF\xBD");
  ASSERT_GT(loaded->warnings_size(), 0);
  const v1::Warning& warning = loaded->warnings(loaded->warnings_size() - 1);
  EXPECT_EQ(warning.code(), "invalid_utf8");
  EXPECT_TRUE(absl::StrContains(warning.message(), "3 text field(s)")) << warning.message();
  EXPECT_TRUE(absl::StrContains(warning.message(), "metadata.name")) << warning.message();
  // The JSON copy reads back to the same message.
  v1::Measurement from_json;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  ReadWholeFile(*saved + "/measurement.json"), &from_json)
                  .ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(from_json, *loaded));
}

TEST(SaveMeasurementTest, RunsStartedInTheSameSecondBothKeepTheirMeasurement) {
  const std::string parent = TestDirectory();
  v1::Measurement measurement = FullMeasurement();
  measurement.mutable_metadata()->set_name("2026-11-24T15-00-00Z");
  absl::StatusOr<std::string> first =
      SaveMeasurementUnderFreeName(measurement, parent, "2026-11-24T15-00-00Z");
  absl::StatusOr<std::string> second =
      SaveMeasurementUnderFreeName(measurement, parent, "2026-11-24T15-00-00Z");
  ASSERT_TRUE(first.ok() && second.ok()) << first.status() << second.status();
  EXPECT_EQ(*first, parent + "/2026-11-24T15-00-00Z");
  EXPECT_EQ(*second, parent + "/2026-11-24T15-00-00Z-2");
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(*second);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->metadata().name(), "2026-11-24T15-00-00Z-2");
  // A name the user chose is never changed.
  EXPECT_EQ(SaveMeasurement(measurement, parent, "2026-11-24T15-00-00Z").status().code(),
            absl::StatusCode::kAlreadyExists);
}

TEST(SaveMeasurementTest, PermissionsFollowTheUmaskAndStalePartialsAreSwept) {
  const std::string parent = TestDirectory();
  const mode_t previous = umask(027);
  absl::StatusOr<std::string> saved = SaveMeasurement(FullMeasurement(), parent, "shared");
  umask(previous);
  ASSERT_TRUE(saved.ok()) << saved.status();
  struct stat info;
  ASSERT_EQ(stat(saved->c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0750u);  // not mkdtemp's 0700
  ASSERT_EQ(stat((*saved + "/measurement.pb").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0640u);

  // A save killed long ago left a partial directory: the next save removes it; a recent one
  // (a save in progress) stays.
  const std::string old_partial = parent + "/.old.roastcoffea-partial-abcdef";
  const std::string new_partial = parent + "/.new.roastcoffea-partial-abcdef";
  ASSERT_EQ(mkdir(old_partial.c_str(), 0700), 0);
  ASSERT_EQ(mkdir(new_partial.c_str(), 0700), 0);
  WriteWholeFile(old_partial + "/measurement.pb", "x");
  struct timespec times[2] = {{time(nullptr) - 7200, 0}, {time(nullptr) - 7200, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, old_partial.c_str(), times, 0), 0);
  ASSERT_TRUE(SaveMeasurement(FullMeasurement(), parent, "next").ok());
  EXPECT_NE(stat(old_partial.c_str(), &info), 0);
  EXPECT_EQ(stat(new_partial.c_str(), &info), 0);
}

TEST(LoadMeasurementTest, FallsBackToJsonWhenTheBinaryIsMissing) {
  const std::string directory = SaveFull(TestDirectory());
  ASSERT_EQ(unlink((directory + "/measurement.pb").c_str()), 0);
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(directory + "/");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(MessageDifferencer::Equals(FullMeasurement(), *loaded));
}

TEST(LoadMeasurementTest, MissingDirectoryIsNotFound) {
  const std::string missing = TestDirectory() + "/nope";
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(missing);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), missing)) << loaded.status();
}

TEST(LoadMeasurementTest, RegularFileOrDirectoryWithoutFormatIsNotFound) {
  const std::string base = TestDirectory();
  WriteWholeFile(base + "/file", "x");
  EXPECT_EQ(LoadMeasurement(base + "/file").status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(base);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), base + "/FORMAT")) << loaded.status();
}

TEST(LoadMeasurementTest, NoMeasurementFileIsNotFound) {
  const std::string directory = SaveFull(TestDirectory());
  ASSERT_EQ(unlink((directory + "/measurement.pb").c_str()), 0);
  ASSERT_EQ(unlink((directory + "/measurement.json").c_str()), 0);
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(directory);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), directory)) << loaded.status();
}

TEST(LoadMeasurementTest, CorruptBinaryFallsBackToTheJsonCopy) {
  const std::string directory = SaveFull(TestDirectory());
  const std::string binary = directory + "/measurement.pb";
  WriteWholeFile(binary, "\xff\xff\xff\xff not a protobuf");
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(directory);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->chunks_size(), FullMeasurement().chunks_size());
  ASSERT_GT(loaded->warnings_size(), 0);
  EXPECT_EQ(loaded->warnings(loaded->warnings_size() - 1).code(), "measurement_pb_corrupt");
}

TEST(LoadMeasurementTest, CorruptBinaryIsDataLoss) {
  const std::string parent = TestDirectory();
  const std::string directory = SaveFull(parent);
  const std::string binary = directory + "/measurement.pb";
  // Without a JSON copy to fall back on.
  ASSERT_EQ(unlink((directory + "/measurement.json").c_str()), 0);
  WriteWholeFile(binary, "\xff\xff\xff\xff not a protobuf");
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(directory);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), binary)) << loaded.status();

  // Half of a valid file.
  ASSERT_TRUE(SaveMeasurement(FullMeasurement(), parent, "valid").ok());
  const std::string valid = ReadWholeFile(parent + "/valid/measurement.pb");
  ASSERT_FALSE(valid.empty());
  WriteWholeFile(binary, valid.substr(0, valid.size() / 2));
  EXPECT_EQ(LoadMeasurement(directory).status().code(), absl::StatusCode::kDataLoss);

  // An empty file parses as an empty message; its missing schema version gives it away.
  WriteWholeFile(binary, "");
  loaded = LoadMeasurement(directory);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), "schema_version is 0"))
      << loaded.status();
}

TEST(LoadMeasurementTest, CorruptJsonIsDataLoss) {
  const std::string directory = SaveFull(TestDirectory());
  ASSERT_EQ(unlink((directory + "/measurement.pb").c_str()), 0);
  const std::string json = directory + "/measurement.json";
  WriteWholeFile(json, "{\"metadata\": {\"schema_version\": ");
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(directory);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), json)) << loaded.status();
}

TEST(LoadMeasurementTest, UnknownSchemaVersionIsFailedPrecondition) {
  const std::string directory = SaveFull(TestDirectory());
  WriteWholeFile(directory + "/FORMAT", "roastcoffea-measurement 2\n");
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(directory);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), "schema version 2")) << loaded.status();
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), directory)) << loaded.status();
}

TEST(LoadMeasurementTest, CorruptFormatFileIsDataLoss) {
  const std::string directory = SaveFull(TestDirectory());
  for (const std::string& format :
       {std::string(""), std::string("roastcoffea-measurement\n"), std::string("hello 1\n"),
        std::string("roastcoffea-measurement one\n"),
        std::string("roastcoffea-measurement -1\n")}) {
    WriteWholeFile(directory + "/FORMAT", format);
    absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(directory);
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss) << format;
    EXPECT_TRUE(absl::StrContains(loaded.status().message(), directory + "/FORMAT"))
        << loaded.status();
  }
}

TEST(LoadMeasurementTest, LeftoverTemporaryDirectoryNeverLoads) {
  const std::string parent = TestDirectory();
  const std::string directory = SaveFull(parent);
  // What a crash just before the final rename leaves: complete files under the temporary name.
  const std::string leftover = parent + "/.run.roastcoffea-partial-Ab12Cd";
  ASSERT_EQ(rename(directory.c_str(), leftover.c_str()), 0);
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(leftover);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), leftover)) << loaded.status();
  EXPECT_EQ(LoadMeasurement(leftover + "/").status().code(), absl::StatusCode::kFailedPrecondition);
  // Nor does it block saving the same name again.
  absl::StatusOr<std::string> saved = SaveMeasurement(FullMeasurement(), parent, "run");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_TRUE(LoadMeasurement(*saved).ok());
}

TEST(MeasurementDirectoryNameTest, UtcSecondsFilesystemSafe) {
  const absl::Time start =
      absl::FromCivil(absl::CivilSecond(2026, 11, 22, 8, 15, 3), absl::UTCTimeZone()) +
      absl::Milliseconds(999);
  EXPECT_EQ(MeasurementDirectoryName(start), "2026-11-22T08-15-03Z");
  EXPECT_EQ(MeasurementDirectoryName(absl::UnixEpoch()), "1970-01-01T00-00-00Z");
  EXPECT_EQ(MeasurementDirectoryName(absl::InfinitePast()), "infinite-past");
  EXPECT_EQ(MeasurementDirectoryName(absl::InfiniteFuture()), "infinite-future");
}

TEST(MeasurementDirectoryNameTest, NamesSortByTime) {
  const absl::Time t0 =
      absl::FromCivil(absl::CivilSecond(2026, 9, 30, 23, 59, 59), absl::UTCTimeZone());
  const std::string a = MeasurementDirectoryName(t0);
  const std::string b = MeasurementDirectoryName(t0 + absl::Seconds(1));
  const std::string c = MeasurementDirectoryName(t0 + absl::Hours(24 * 40));
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_EQ(b, "2026-10-01T00-00-00Z");
}

TEST(MeasurementDirectoryNameTest, NameIsAValidSaveName) {
  const std::string name = MeasurementDirectoryName(absl::FromUnixSeconds(1795335303));
  absl::StatusOr<std::string> saved = SaveMeasurement(FullMeasurement(), TestDirectory(), name);
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_TRUE(absl::EndsWith(*saved, "/2026-11-22T08-15-03Z")) << *saved;
}

}  // namespace
}  // namespace roastcoffea
