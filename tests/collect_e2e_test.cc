// End to end: runs the real `collect` binary on a small sample dataset and checks the saved
// measurement against what was generated and what the process really did.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sample_analysis/columnar_file.h"
#include "sample_analysis/dijet_processor.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "tests/collect_runner.h"
#include "trace/perfetto_trace.pb.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kThreads = 2;
constexpr int64_t kEventsPerFile = 20000;
constexpr int kFilesPerDataset = 2;
constexpr int kDatasets = 3;  // the sample dataset's two backgrounds and one signal
constexpr int64_t kChunkSize = 6000;

using Outcome = CollectOutcome;

std::vector<std::string> SmallRun(const std::string& cache, const std::string& output,
                                  const std::string& name) {
  return {absl::StrCat("--threads=", kThreads),
          absl::StrCat("--events_per_file=", kEventsPerFile),
          absl::StrCat("--files_per_dataset=", kFilesPerDataset),
          absl::StrCat("--chunk_size=", kChunkSize),
          "--interval=0.02",
          "--cache_dir=" + cache,
          "--output_dir=" + output,
          "--name=" + name,
          "--tables=ascii"};
}

class CollectEndToEndTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cache_ = TempDir() + "/cache";
    output_ = TempDir() + "/measurements";
    run_ = new Outcome(RunCollect(SmallRun(cache_, output_, "first")));
  }
  static void TearDownTestSuite() { delete run_; }

  static std::string cache_;
  static std::string output_;
  static Outcome* run_;
};

std::string CollectEndToEndTest::cache_;
std::string CollectEndToEndTest::output_;
Outcome* CollectEndToEndTest::run_ = nullptr;

TEST_F(CollectEndToEndTest, RunSucceedsPrintsTablesAndSaysWhereItSaved) {
  ASSERT_EQ(run_->exit_code, 0) << run_->err;
  EXPECT_THAT(run_->out, HasSubstr("Throughput Metrics"));
  EXPECT_THAT(run_->out, HasSubstr("Event Processing Metrics"));
  EXPECT_THAT(run_->out, HasSubstr("Resource Utilization"));
  EXPECT_THAT(run_->out, HasSubstr("Chunk Metrics"));
  EXPECT_THAT(run_->out, HasSubstr("Measurement saved to " + output_ + "/first"));
  // The recap stays on screen when the tables scrolled away, just above where it was saved,
  // and the HTML report is named.
  const size_t recap = run_->out.find("\nRecap: ");
  ASSERT_NE(recap, std::string::npos) << run_->out;
  EXPECT_LT(recap, run_->out.find("Measurement saved to"));
  EXPECT_THAT(run_->out.substr(recap), HasSubstr(" events in "));
  EXPECT_THAT(run_->out, ::testing::ContainsRegex("\n(Top finding: |Findings: none fired)"));
  EXPECT_THAT(run_->out, HasSubstr("HTML report (plots, timeline): "));
  // The live progress line is for terminals only: a redirected run shows none of it.
  EXPECT_EQ(run_->err.find('\r'), std::string::npos);
  EXPECT_EQ(run_->out.find('\r'), std::string::npos);
}

TEST_F(CollectEndToEndTest, MeasurementAgreesWithTheGeneratedDatasetAndTheProcess) {
  ASSERT_EQ(run_->exit_code, 0) << run_->err;
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(output_ + "/first");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const v1::Measurement& m = *loaded;

  // Total events equal the generated events, in the report, the metrics and the chunks.
  const int64_t generated = kDatasets * kFilesPerDataset * kEventsPerFile;
  EXPECT_EQ(m.report().events(), generated);
  EXPECT_EQ(m.metrics().workflow().total_events(), generated);
  int64_t chunk_events = 0;
  for (const v1::ChunkRecord& chunk : m.chunks()) chunk_events += chunk.events();
  EXPECT_EQ(chunk_events, generated);

  // Chunk count and per-chunk records agree: every entry of every file exactly once.
  const int64_t chunks_per_file = (kEventsPerFile + kChunkSize - 1) / kChunkSize;
  ASSERT_EQ(m.chunks_size(), kDatasets * kFilesPerDataset * chunks_per_file);
  EXPECT_EQ(m.report().chunks(), m.chunks_size());
  ASSERT_TRUE(m.metrics().has_chunks());
  EXPECT_EQ(m.metrics().chunks().num_chunks(), m.chunks_size());
  EXPECT_EQ(m.metrics().chunks().num_failed_chunks(), 0);
  std::set<std::tuple<std::string, int64_t, int64_t>> ranges;
  std::set<std::string> files;
  std::set<std::string> datasets;
  for (const v1::ChunkRecord& chunk : m.chunks()) {
    EXPECT_EQ(chunk.status(), v1::CHUNK_STATUS_OK) << chunk.error_text();
    EXPECT_EQ(chunk.events(), chunk.entry_stop() - chunk.entry_start());
    EXPECT_GT(chunk.duration_seconds(), 0);
    EXPECT_LE(chunk.start_unix_ns(), chunk.end_unix_ns());
    EXPECT_GT(chunk.memory_before_bytes(), 0);
    EXPECT_FALSE(chunk.sections().empty()) << "the dijet processor times its sections";
    ranges.emplace(chunk.file(), chunk.entry_start(), chunk.entry_stop());
    files.insert(chunk.file());
    datasets.insert(chunk.dataset());
  }
  EXPECT_EQ(static_cast<int>(ranges.size()), m.chunks_size()) << "no chunk twice";
  EXPECT_EQ(static_cast<int>(files.size()), kDatasets * kFilesPerDataset);
  EXPECT_EQ(static_cast<int>(datasets.size()), kDatasets);

  // Bytes read: the sum over chunks equals the report, and equals what an independent reader
  // counts when it reads the same columns over the same entry ranges from the same files.
  int64_t chunk_bytes = 0;
  for (const v1::ChunkRecord& chunk : m.chunks()) chunk_bytes += chunk.compressed_bytes_read();
  EXPECT_GT(chunk_bytes, 0);
  EXPECT_EQ(m.report().compressed_bytes_read(), chunk_bytes);
  EXPECT_EQ(m.metrics().workflow().total_bytes_read(), chunk_bytes);
  // Independently: a fresh reader per chunk reads the processor's columns over the chunk's
  // range. A chunk's bytes are exactly those baskets, plus the file's header and footer when its
  // thread opened that file for this chunk (threads keep their last file open).
  int64_t opens = 0;
  for (const v1::ChunkRecord& chunk : m.chunks()) {
    absl::StatusOr<std::unique_ptr<sample_analysis::Reader>> reader =
        sample_analysis::Reader::Open(chunk.file());
    ASSERT_TRUE(reader.ok()) << reader.status();
    const int64_t metadata_bytes = (*reader)->stats().metadata_bytes_read;
    for (const std::string& column : sample_analysis::DijetProcessor::ColumnsRead()) {
      sample_analysis::Jagged<float> values;
      ASSERT_TRUE((*reader)
                      ->ReadJagged<float>(column, chunk.entry_start(), chunk.entry_stop(), &values)
                      .ok());
    }
    const int64_t basket_bytes = (*reader)->stats().compressed_bytes_read;
    const int64_t extra = chunk.compressed_bytes_read() - basket_bytes;
    EXPECT_TRUE(extra == 0 || extra == metadata_bytes)
        << chunk.file() << " [" << chunk.entry_start() << ", " << chunk.entry_stop()
        << "): recorded " << chunk.compressed_bytes_read() << " bytes, baskets " << basket_bytes
        << ", header and footer " << metadata_bytes;
    if (extra > 0) ++opens;
  }
  EXPECT_GE(opens, static_cast<int64_t>(files.size())) << "every file was opened at least once";
  // Every basket of the columns the analysis needs was read at least once (chunks that cut a
  // basket read it twice, so more is fine), and the columns it does not need never were.
  int64_t needed_bytes = 0;
  int64_t file_bytes = 0;
  for (const std::string& file : files) {
    absl::StatusOr<std::unique_ptr<sample_analysis::Reader>> reader =
        sample_analysis::Reader::Open(file);
    ASSERT_TRUE(reader.ok()) << reader.status();
    for (const std::string& column : sample_analysis::DijetProcessor::ColumnsRead()) {
      needed_bytes += (*reader)->FindColumn(column)->compressed_bytes();
    }
    file_bytes += (*reader)->file_size();
  }
  EXPECT_GE(chunk_bytes, needed_bytes);
  EXPECT_LT(needed_bytes, file_bytes) << "the analysis reads only the jet columns";
  EXPECT_GT(m.report().uncompressed_bytes_read(), chunk_bytes) << "the files are compressed";

  // The worker-count series equals the thread count at every sample.
  ASSERT_TRUE(m.has_tracking());
  ASSERT_GE(m.tracking().worker_count_size(), 2);
  for (int count : m.tracking().worker_count()) EXPECT_EQ(count, kThreads);
  EXPECT_EQ(m.tracking().workers_size(), kThreads);
  ASSERT_TRUE(m.metrics().has_workers());
  EXPECT_DOUBLE_EQ(m.metrics().workers().avg_workers(), kThreads);
  EXPECT_EQ(m.metrics().workers().peak_workers(), kThreads);

  // CPU time is consistent with getrusage: the chunks' thread CPU time is part of the
  // process's CPU time over the run, and is not negligible for a CPU-bound analysis.
  double chunk_cpu = 0;
  for (const v1::ChunkRecord& chunk : m.chunks()) chunk_cpu += chunk.cpu_seconds();
  const double process_cpu = m.metadata().process_cpu_seconds();
  EXPECT_GT(chunk_cpu, 0);
  EXPECT_LE(chunk_cpu, process_cpu * 1.01 + 0.01);
  EXPECT_GE(chunk_cpu, 0.2 * process_cpu)
      << "chunks " << chunk_cpu << " s, process " << process_cpu << " s";

  // Metadata.
  EXPECT_EQ(m.metadata().schema_version(), 1u);
  EXPECT_EQ(m.metadata().backend(), "threadpool");
  EXPECT_EQ(m.metadata().name(), "first");
  EXPECT_GT(m.metadata().elapsed_seconds(), 0);
  EXPECT_LE(m.metadata().start_time().seconds(), m.metadata().end_time().seconds());
}

TEST_F(CollectEndToEndTest, ShowPrintsTheSavedTables) {
  ASSERT_EQ(run_->exit_code, 0) << run_->err;
  const Outcome show = RunCollect({"show", output_ + "/first", "--tables=ascii"});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("Throughput Metrics"));
  EXPECT_THAT(show.out, HasSubstr("Chunk Metrics"));
}

TEST_F(CollectEndToEndTest, ShowWritesThePerfettoTraceOfTheRun) {
  ASSERT_EQ(run_->exit_code, 0) << run_->err;
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(output_ + "/first");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const std::string path = TempDir() + "/first.pftrace";
  const Outcome show =
      RunCollect({"show", output_ + "/first", "--tables=ascii", "--trace=" + path});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("Timeline written to " + path));

  perfetto::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(ReadFile(path)));
  std::set<std::tuple<std::string, int64_t>> threads;
  std::multiset<uint64_t> chunk_starts;
  size_t slices = 0;
  for (const v1::ChunkRecord& chunk : loaded->chunks()) {
    threads.emplace(chunk.worker(), chunk.thread_index());
    chunk_starts.insert(static_cast<uint64_t>(chunk.start_unix_ns()));
    slices += 1 + chunk.slices_size();
  }
  std::set<uint64_t> chunk_category;
  size_t thread_tracks = 0, begins = 0, ends = 0, counter_events = 0;
  std::multiset<uint64_t> begin_times;
  std::set<std::string> thread_names, counter_tracks;
  for (const perfetto::TracePacket& packet : trace.packet()) {
    for (const perfetto::EventCategory& category : packet.interned_data().event_categories()) {
      if (category.name() == "chunk") chunk_category.insert(category.iid());
    }
    if (packet.track_descriptor().has_thread()) {
      ++thread_tracks;
      thread_names.insert(packet.track_descriptor().thread().thread_name());
    }
    if (packet.track_descriptor().has_counter()) {
      counter_tracks.insert(packet.track_descriptor().name());
    }
    if (packet.track_event().type() == perfetto::TrackEvent::TYPE_COUNTER) ++counter_events;
    const perfetto::TrackEvent& event = packet.track_event();
    if (event.type() == perfetto::TrackEvent::TYPE_SLICE_BEGIN) {
      ++begins;
      if (event.category_iids_size() == 1 && chunk_category.count(event.category_iids(0))) {
        begin_times.insert(packet.timestamp());
      }
    }
    if (event.type() == perfetto::TrackEvent::TYPE_SLICE_END) ++ends;
  }
  // The worker threads, named as the tables name them, and the run's own track; the run
  // slice besides the chunks' and sections'.
  EXPECT_EQ(thread_tracks, threads.size() + 1);
  EXPECT_EQ(thread_names.count("run"), 1u);
  for (const auto& [worker, thread_index] : threads) {
    EXPECT_EQ(thread_names.count(absl::StrCat(worker, "/thread-", thread_index)), 1u) << worker;
  }
  EXPECT_EQ(begins, slices + 1);
  EXPECT_EQ(ends, slices + 1);
  EXPECT_EQ(begin_times, chunk_starts);
  // Counter tracks beside the slices: each thread's CPU, the process's RSS, queued chunks.
  EXPECT_EQ(counter_tracks.count("RSS bytes"), 1u);
  EXPECT_EQ(counter_tracks.count("queued chunks"), 1u);
  EXPECT_GE(counter_tracks.size(), 3u);
  EXPECT_GT(counter_events, 0u);
}

TEST_F(CollectEndToEndTest, AnExistingMeasurementIsNeverOverwritten) {
  ASSERT_EQ(run_->exit_code, 0) << run_->err;
  const std::string before = ReadFile(output_ + "/first/measurement.pb");
  const Outcome again = RunCollect(SmallRun(cache_, output_, "first"));
  EXPECT_NE(again.exit_code, 0);
  EXPECT_THAT(again.err, HasSubstr(output_ + "/first"));
  EXPECT_EQ(ReadFile(output_ + "/first/measurement.pb"), before);
}

TEST_F(CollectEndToEndTest, ProfileFlagSavesThreadpoolProfilesPerWorkerAndSection) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sampling profiler refuses to run under ThreadSanitizer";
#endif
  std::vector<std::string> flags = SmallRun(cache_, output_, "profiled");
  flags.push_back("--profile");
  flags.push_back("--profile_hz=1000");
  const Outcome run = RunCollect(flags);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(output_ + "/profiled");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->metadata().configuration().at("profile_hz"), "1000");
  int workers = 0;
  int64_t chunk_samples = 0;
  std::set<std::string> sections;
  for (const v1::Profile& profile : loaded->profiles()) {
    EXPECT_EQ(profile.source(), "threadpool");
    EXPECT_DOUBLE_EQ(profile.sampling_interval_seconds(), 0.001);
    ASSERT_GE(profile.nodes_size(), 1);
    if (profile.section().empty()) {
      ++workers;
      EXPECT_THAT(profile.worker(), HasSubstr("/thread-"));
      for (const v1::ProfileChunkSamples& chunk : profile.chunk_samples()) {
        chunk_samples += chunk.samples();
      }
    } else {
      sections.insert(profile.section());
    }
  }
  EXPECT_EQ(workers, kThreads);
  EXPECT_GT(chunk_samples, 0);
  // The dijet processor's timed sections get profiles of their own. Short sections may get no
  // sample in a small run on a loaded machine, but read_columns (about 70 % of chunk time)
  // always does, and no profile names anything but one of the processor's sections.
  EXPECT_EQ(sections.count("read_columns"), 1u);
  for (const std::string& section : sections) {
    EXPECT_THAT(section,
                testing::AnyOf("read_columns", "select_jets", "dijet_mass", "fill_histogram"));
  }
}

TEST(CollectHelpTest, HelpListsEveryFlagOfTheTool) {
  // Flags are defined beside what they configure (backends, trace writer), not all in main.
  const Outcome help = RunCollect({"--help"});
  const std::string text = help.out + help.err;
  for (const char* flag : {"--threads", "--profile_hz", "--top", "--scheduler",
                           "--dask_profile_prefixes", "--taskvine_logs", "--follow", "--trace"}) {
    EXPECT_THAT(text, HasSubstr(std::string(flag) + " (")) << flag;
  }
}

TEST(CollectBadInputTest, ProfileRateOutOfRangeIsRejectedByName) {
  const Outcome outcome =
      RunCollect({"--profile", "--profile_hz=0", "--output_dir=" + TempDir() + "/bad"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err, HasSubstr("--profile_hz must be in [1, 1000], got 0"));
}

TEST(CollectBadInputTest, UnknownTraceExtensionIsRejectedBeforeTheRun) {
  const Outcome outcome = RunCollect(
      {"--trace=" + TempDir() + "/run.trace", "--output_dir=" + TempDir() + "/bad-trace"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err, HasSubstr("--trace must name a file ending in .json"));
  EXPECT_FALSE(std::filesystem::exists(TempDir() + "/bad-trace"));
}

TEST(CollectBadInputTest, ZeroThreadsIsRejectedByName) {
  const Outcome outcome = RunCollect({"--threads=0", "--output_dir=" + TempDir() + "/bad"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err, HasSubstr("--threads must be at least 1, got 0"));
}

TEST(CollectBadInputTest, NegativeIntervalIsRejectedByName) {
  const Outcome outcome = RunCollect({"--interval=-1", "--output_dir=" + TempDir() + "/bad"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err, HasSubstr("--interval"));
}

TEST(CollectBadInputTest, UnwritableOutputDirectoryIsRejectedBeforeTheRun) {
  const std::string file = TempDir() + "/a-regular-file";
  std::ofstream(file) << "not a directory";
  const Outcome outcome = RunCollect({"--output_dir=" + file + "/measurements"});
  EXPECT_NE(outcome.exit_code, 0);
  EXPECT_THAT(outcome.err, HasSubstr("--output_dir"));
  EXPECT_THAT(outcome.err, HasSubstr(file));
  EXPECT_THAT(outcome.out, Not(HasSubstr("Throughput Metrics")));
}

TEST(CollectBadInputTest, UnknownModeIsRejected) {
  const Outcome outcome = RunCollect({"frobnicate"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err, HasSubstr("unknown mode 'frobnicate'"));
}

TEST(CollectBadInputTest, ShowOfAMissingDirectoryNamesIt) {
  const Outcome outcome = RunCollect({"show", TempDir() + "/no-such-measurement"});
  EXPECT_NE(outcome.exit_code, 0);
  EXPECT_THAT(outcome.err, HasSubstr("no-such-measurement"));
}

// Generates a small dataset, then damages one of its files and runs again.
class DamagedSampleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = TempDir() + "/damaged-cache-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name();
    const Outcome first = RunCollect(SmallRun(cache_, TempDir() + "/damaged-out", Name("ok")));
    ASSERT_EQ(first.exit_code, 0) << first.err;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(cache_)) {
      if (entry.is_regular_file()) victim_ = entry.path().string();
    }
    ASSERT_FALSE(victim_.empty());
  }
  std::string Name(const std::string& suffix) {
    return std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
           suffix;
  }
  Outcome RunAgain() {
    return RunCollect(SmallRun(cache_, TempDir() + "/damaged-out", Name("again")));
  }
  std::string cache_;
  std::string victim_;
};

TEST_F(DamagedSampleTest, MissingFileIsAClearErrorNamingIt) {
  std::filesystem::remove(victim_);
  const Outcome outcome = RunAgain();
  EXPECT_NE(outcome.exit_code, 0);
  EXPECT_THAT(outcome.err, HasSubstr(victim_));
}

TEST_F(DamagedSampleTest, CorruptFileIsAClearErrorNamingIt) {
  // Overwrite the middle of the file (compressed baskets) with garbage, keeping its size.
  const auto size = std::filesystem::file_size(victim_);
  {
    std::fstream file(victim_, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(size / 3));
    const std::string garbage(static_cast<size_t>(size / 3), '\x5a');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  const Outcome outcome = RunAgain();
  EXPECT_NE(outcome.exit_code, 0);
  EXPECT_THAT(outcome.err, HasSubstr(victim_));
  // The way out of a damaged cache, as for a truncated file.
  EXPECT_THAT(outcome.err, HasSubstr("and run again"));
  EXPECT_THAT(outcome.err, HasSubstr("rm -r " + cache_ + "/"));
}

TEST_F(DamagedSampleTest, TruncatedFileIsAClearErrorNamingIt) {
  std::filesystem::resize_file(victim_, std::filesystem::file_size(victim_) / 2);
  const Outcome outcome = RunAgain();
  EXPECT_NE(outcome.exit_code, 0);
  EXPECT_THAT(outcome.err, HasSubstr(victim_));
}

}  // namespace
}  // namespace roastcoffea
