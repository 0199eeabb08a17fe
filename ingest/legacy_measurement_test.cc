#include "ingest/legacy_measurement.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/any_measurement.h"
#include "schema/chunk_info_rows.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"

namespace roastcoffea {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// metrics.json exactly as the original's save_measurement writes it (json.dump, indent=2, after
// its encoding: tuple keys as repr text, naive ISO datetimes, NaN as a bare token).
constexpr char kMetricsJson[] = R"json({
  "total_events": 1233000,
  "total_bytes_read": 46074839,
  "elapsed_time_seconds": 13.7,
  "total_cpu_time": 17.5,
  "num_chunks": 3,
  "data_rate_gbps": 0.0269,
  "event_rate_elapsed_khz": 90.1,
  "event_rate_cpu_total_khz": 70.4,
  "avg_cpu_time_per_chunk": 5.83,
  "avg_workers": 2.0,
  "peak_workers": 2,
  "total_cores": 2.0,
  "cores_per_worker": 1.0,
  "peak_memory_bytes": 394821632.0,
  "avg_memory_per_worker_bytes": 271589376.0,
  "core_efficiency": 0.6386861313868614,
  "speedup_factor": 1.2773722627737227,
  "event_rate_core_hz": 45000.0,
  "processor_cpu_time_seconds": 9.7,
  "processor_noncpu_time_seconds": 22.7,
  "processor_cpu_percentage": 29.9,
  "processor_noncpu_percentage": 70.1,
  "total_bytes_memory_read": 312309.0,
  "num_successful_chunks": 2,
  "num_failed_chunks": 1,
  "chunk_duration_mean": 1.5,
  "chunk_duration_min": 1.0,
  "chunk_duration_max": 2.0,
  "chunk_duration_std": NaN,
  "chunk_mem_delta_mean_mb": 18.2,
  "chunk_mem_delta_min_mb": -46.5,
  "chunk_mem_delta_max_mb": 44.8,
  "chunk_mem_delta_std_mb": 0.0,
  "total_events_from_chunks": 1233000,
  "chunk_events_mean": 616500.0,
  "chunk_events_min": 600000,
  "chunk_events_max": 633000,
  "per_dataset": {
    "ttbar": {"num_chunks": 2, "total_duration": 3.0, "total_events": 1233000,
              "mean_duration": 1.5, "mean_events_per_chunk": 616500.0},
    "unknown": {"num_chunks": 1, "total_duration": 0.5, "total_events": 0, "mean_duration": 0.5}
  },
  "chunk_info": {
    "('data.root', 0, 600000)": [1767268800.25, 1767268801.25, 1000],
    "('it\\'s \"odd\".root', 600000, 1233000)": [1767268800.5, 1767268802.5, 2000]
  },
  "compression_ratios": [0.25, 0.5],
  "bytes_read_percent_per_file": [12.5],
  "avg_branches_read_percent": 10.0,
  "avg_bytes_read_percent": 12.5,
  "total_branches_read": 7,
  "tracking_data": {
    "worker_counts": {"2026-01-01T12:00:00": 1, "2026-01-01T12:00:01.500000": 2},
    "worker_memory": {
      "tcp://127.0.0.1:4001": [["2026-01-01T12:00:00", 1000.0], ["2026-01-01T12:00:01.500000", 3000.0]],
      "tcp://127.0.0.1:4002": [["2026-01-01T12:00:01.500000", 5000.0]]
    },
    "worker_memory_limit": {"tcp://127.0.0.1:4001": [["2026-01-01T12:00:00", 8000.0], ["2026-01-01T12:00:01.500000", 8000.0]]},
    "worker_cores": {"tcp://127.0.0.1:4001": [["2026-01-01T12:00:00", 1], ["2026-01-01T12:00:01.500000", 1]]},
    "worker_cpu": {"tcp://127.0.0.1:4001": [["2026-01-01T12:00:00", 50.0], ["2026-01-01T12:00:01.500000", 150.0]]},
    "worker_occupancy": {"tcp://127.0.0.1:4001": [["2026-01-01T12:00:01.500000", 2.5]]}
  },
  "raw_chunk_metrics": [
    {"t_start": 1767268800.25, "t_end": 1767268801.25, "duration": 1.0, "mem_before_mb": 100.0,
     "mem_after_mb": 110.0, "mem_delta_mb": 10.0, "bytes_read": 1000, "timestamp": 1767268801.3,
     "num_events": 600000, "dataset": "ttbar", "file": "data.root", "uuid": "u1",
     "entry_start": 0, "entry_stop": 600000, "timing": {"jets": 0.5}, "memory": {}, "bytes": {}},
    {"t_start": 1767268800.5, "t_end": 1767268802.5, "duration": 2.0, "num_events": 633000,
     "dataset": "ttbar", "file": "it's \"odd\".root", "entry_start": 600000, "entry_stop": 1233000},
    {"t_start": 1767268803.0, "t_end": 1767268803.5, "duration": 0.5, "file": "bad.root",
     "entry_start": 0, "entry_stop": 10, "error": "OSError: gone"}
  ],
  "raw_span_metrics": {
    "('execute', 'JetAnalysisProcessor', 'thread-cpu', 'seconds')": 9.7,
    "('execute', 'JetAnalysisProcessor', 'thread-noncpu', 'seconds')": 22.7,
    "('execute', 'JetAnalysisProcessor', 'memory-read', 'bytes')": 312309.0,
    "('execute', 'lambda', 'thread-cpu', 'seconds')": 0.4
  }
})json";

class LegacyMeasurementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/legacy_measurement_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
  }
  void TearDown() override { ASSERT_EQ(std::system(("rm -rf '" + root_ + "'").c_str()), 0); }

  static void Write(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    ASSERT_TRUE(out.good()) << path;
  }

  // A directory in exactly the layout of the original's save_measurement.
  std::string WriteLegacyDirectory(const std::string& name, const std::string& metrics,
                                   const std::string& times = "1234.5,1248.2\n") {
    const std::string dir = root_ + "/" + name;
    EXPECT_EQ(mkdir(dir.c_str(), 0755), 0);
    Write(dir + "/metrics.json", metrics);
    Write(dir + "/start_end_time.txt", times);
    Write(dir + "/metadata.json",
          "{\n  \"timestamp\": \"2026-01-01T12:00:05.123456\",\n  \"elapsed_time_seconds\": "
          "13.7,\n  \"format\": \"roastcoffea_measurement_v1\"\n}");
    Write(dir + "/config.json", "{\n  \"n_workers\": 2,\n  \"analysis\": \"dijet\"\n}");
    return dir;
  }

  static LegacyLoadOptions Utc() {
    LegacyLoadOptions options;
    options.naive_time_zone = absl::UTCTimeZone();
    return options;
  }

  std::string root_;
};

TEST_F(LegacyMeasurementTest, ReadsEveryPartOfTheOriginalsDirectory) {
  const std::string dir = WriteLegacyDirectory("2026-01-01_12-00-05", kMetricsJson);
  ASSERT_TRUE(IsLegacyMeasurementDirectory(dir));
  absl::StatusOr<v1::Measurement> loaded = LoadLegacyMeasurement(dir, Utc());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const v1::Measurement& m = *loaded;

  EXPECT_EQ(m.metadata().name(), "2026-01-01_12-00-05");
  EXPECT_NEAR(m.metadata().elapsed_seconds(), 13.7, 1e-9);
  EXPECT_EQ(m.metadata().configuration().at("n_workers"), "2");
  EXPECT_EQ(m.metadata().configuration().at("analysis"), "dijet");
  EXPECT_EQ(m.metadata().configuration().at("legacy_saved_at_local"), "2026-01-01T12:00:05.123456");
  EXPECT_EQ(m.metadata().start_time().seconds(), 1767268800);
  EXPECT_EQ(m.metadata().start_time().nanos(), 250000000);

  const v1::AggregatedMetrics& metrics = m.metrics();
  EXPECT_EQ(metrics.workflow().total_events(), 1233000);
  EXPECT_EQ(metrics.workflow().total_bytes_read(), 46074839);
  EXPECT_DOUBLE_EQ(metrics.workflow().total_cpu_time_seconds(), 17.5);
  // Coffea's processtime is our summed chunk wall time: the tables show it there.
  EXPECT_DOUBLE_EQ(metrics.workflow().summed_chunk_wall_seconds(), 17.5);
  EXPECT_EQ(metrics.workers().peak_workers(), 2);
  EXPECT_DOUBLE_EQ(metrics.workers().total_cores(), 2.0);
  EXPECT_DOUBLE_EQ(metrics.efficiency().core_efficiency_fraction(), 0.6386861313868614);
  // Key-name drift: Hz per core becomes kHz per core; noncpu/percentage renamed.
  EXPECT_DOUBLE_EQ(metrics.efficiency().event_rate_core_khz(), 45.0);
  EXPECT_DOUBLE_EQ(metrics.fine().processor_io_wait_time_seconds(), 22.7);
  EXPECT_DOUBLE_EQ(metrics.fine().processor_cpu_percent(), 29.9);
  EXPECT_DOUBLE_EQ(metrics.fine().processor_io_wait_percent(), 70.1);
  // MiB in the original, bytes here; NaN read as absent.
  EXPECT_DOUBLE_EQ(metrics.chunks().memory_delta_bytes().min(), -46.5 * kMiB);
  EXPECT_EQ(metrics.chunks().duration_seconds().std(), 0.0);
  EXPECT_EQ(metrics.chunks().num_chunks(), 3);
  EXPECT_EQ(metrics.chunks().num_failed_chunks(), 1);
  ASSERT_EQ(metrics.chunks().per_dataset_size(), 2);
  EXPECT_EQ(metrics.chunks().per_dataset(0).dataset(), "ttbar");
  EXPECT_DOUBLE_EQ(metrics.chunks().per_dataset(0).mean_events_per_chunk(), 616500.0);
  EXPECT_FALSE(metrics.chunks().per_dataset(1).has_mean_events_per_chunk());
  // chunk_info with tuple-repr keys, quotes inside the file name.
  // Read into the columns (#25).
  EXPECT_EQ(metrics.chunks().chunk_info_size(), 0);
  const ChunkInfoRows info(metrics.chunks());
  ASSERT_EQ(info.size(), 2u);
  EXPECT_EQ(metrics.chunks().chunk_info_columns().files_size(), 2);
  EXPECT_EQ(info[0].file, "data.root");
  EXPECT_EQ(info[0].entry_stop, 600000);
  EXPECT_EQ(info[0].start_unix_ns, 1767268800250000000);
  EXPECT_EQ(info[1].file, "it's \"odd\".root");
  EXPECT_EQ(info[1].bytes_read, 2000);
  EXPECT_EQ(metrics.branches().compression_ratios_size(), 2);
  EXPECT_EQ(metrics.branches().total_branches_read(), 7);

  // Tracking, including worker_cpu (which the original drops when loading).
  ASSERT_TRUE(m.has_tracking());
  const v1::TrackingData& tracking = m.tracking();
  ASSERT_EQ(tracking.worker_count_size(), 2);
  EXPECT_EQ(tracking.worker_count_time_unix_ns(0), 1767268800000000000);
  EXPECT_EQ(tracking.worker_count_time_unix_ns(1), 1767268801500000000);
  EXPECT_EQ(tracking.worker_count(1), 2);
  ASSERT_EQ(tracking.workers_size(), 2);
  const v1::WorkerSeries& first = tracking.workers(0);
  EXPECT_EQ(first.worker(), "tcp://127.0.0.1:4001");
  ASSERT_EQ(first.time_unix_ns_size(), 2);
  EXPECT_EQ(std::vector<double>(first.cpu_percent().begin(), first.cpu_percent().end()),
            (std::vector<double>{50.0, 150.0}));
  EXPECT_EQ(std::vector<double>(first.memory_bytes().begin(), first.memory_bytes().end()),
            (std::vector<double>{1000.0, 3000.0}));
  EXPECT_EQ(first.cores_size(), 2);
  // A series sampled at fewer instants is held (before its first sample: its first value).
  EXPECT_EQ(std::vector<double>(first.occupancy_seconds().begin(), first.occupancy_seconds().end()),
            (std::vector<double>{2.5, 2.5}));
  EXPECT_EQ(tracking.workers(1).memory_bytes_size(), 1);
  EXPECT_EQ(tracking.workers(1).cpu_percent_size(), 0);

  // Chunk records, the failed one with its error text.
  ASSERT_EQ(m.chunks_size(), 3);
  EXPECT_EQ(m.chunks(0).uuid(), "u1");
  EXPECT_EQ(m.chunks(0).events(), 600000);
  ASSERT_EQ(m.chunks(0).sections_size(), 1);
  EXPECT_EQ(m.chunks(2).status(), v1::CHUNK_STATUS_FAILED);
  EXPECT_EQ(m.chunks(2).error_text(), "OSError: gone");

  // Span keys, parsed from their repr (which the original leaves as strings).
  ASSERT_EQ(m.spans_size(), 1);
  ASSERT_EQ(m.spans(0).metrics_size(), 4);
  const v1::FineMetric& memory_read = m.spans(0).metrics(0);
  EXPECT_EQ(memory_read.context(), "execute");
  EXPECT_EQ(memory_read.task_prefix(), "JetAnalysisProcessor");
  EXPECT_EQ(memory_read.activity(), "memory-read");
  EXPECT_EQ(memory_read.unit(), "bytes");
  EXPECT_EQ(m.spans(0).metrics(3).task_prefix(), "lambda");
}

// `collect show` and `compare` load through LoadAnyMeasurement; store's LoadMeasurement reads
// only directories of ours. (tests/collect_export_test.cc renders such a directory's tables.)
TEST_F(LegacyMeasurementTest, LoadAnyMeasurementAcceptsTheOriginalsFormat) {
  const std::string dir = WriteLegacyDirectory("legacy", kMetricsJson);
  absl::StatusOr<v1::Measurement> loaded = LoadAnyMeasurement(dir + "/");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->metadata().name(), "legacy");
  EXPECT_EQ(loaded->metrics().workflow().total_events(), 1233000);
  ASSERT_EQ(loaded->spans_size(), 1);
  EXPECT_EQ(loaded->spans(0).metrics(0).activity(), "memory-read");

  const absl::StatusOr<v1::Measurement> ours_only = LoadMeasurement(dir);
  EXPECT_TRUE(absl::IsNotFound(ours_only.status())) << ours_only.status();
  EXPECT_TRUE(absl::StrContains(ours_only.status().message(), "FORMAT")) << ours_only.status();
}

TEST_F(LegacyMeasurementTest, MinimalReportOnlyDirectory) {
  const std::string dir = WriteLegacyDirectory(
      "minimal",
      "{\"wall_time\": 10.0, \"total_events\": 100, \"overall_rate_gbps\": 1.5, "
      "\"overall_rate_mbps\": 187.5, \"tracking_data\": null}");
  absl::StatusOr<v1::Measurement> loaded = LoadLegacyMeasurement(dir, Utc());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_DOUBLE_EQ(loaded->metrics().workflow().elapsed_time_seconds(), 10.0);
  EXPECT_DOUBLE_EQ(loaded->metrics().workflow().data_rate_gbps(), 1.5);
  EXPECT_DOUBLE_EQ(loaded->metrics().workflow().data_rate_mbytes_per_second(), 187.5);
  EXPECT_FALSE(loaded->has_tracking());
  EXPECT_FALSE(loaded->metrics().has_chunks());
  EXPECT_FALSE(loaded->metrics().has_workers());
  EXPECT_EQ(loaded->chunks_size(), 0);
}

TEST_F(LegacyMeasurementTest, BadInputsAreErrorsNamingTheFile) {
  // Bad timing line, like the original's ValueError.
  std::string dir = WriteLegacyDirectory("badtimes", "{}", "1.0;2.0\n");
  absl::StatusOr<v1::Measurement> loaded = LoadLegacyMeasurement(dir, Utc());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), "start_end_time.txt"));
  // Not JSON.
  dir = WriteLegacyDirectory("badjson", "{\"total_events\": ");
  loaded = LoadLegacyMeasurement(dir, Utc());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), "metrics.json"));
  // A bad tuple key.
  dir = WriteLegacyDirectory("badtuple", "{\"chunk_info\": {\"data.root\": [1, 2, 3]}}");
  loaded = LoadLegacyMeasurement(dir, Utc());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), "data.root")) << loaded.status();
  // A bad naive timestamp.
  dir = WriteLegacyDirectory("badtime",
                             "{\"tracking_data\": {\"worker_counts\": {\"yesterday\": 1}}}");
  loaded = LoadLegacyMeasurement(dir, Utc());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), "yesterday")) << loaded.status();
  // Times that do not fit in int64 nanoseconds.
  dir = WriteLegacyDirectory("hugetime", "{\"raw_chunk_metrics\": [{\"t_start\": 1.76e12}]}");
  loaded = LoadLegacyMeasurement(dir, Utc());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), "raw_chunk_metrics[0]: 't_start'"))
      << loaded.status();
  dir = WriteLegacyDirectory("hugeinfo", "{\"chunk_info\": {\"('f', 0, 1)\": [1e300, 1, 2]}}");
  EXPECT_EQ(LoadLegacyMeasurement(dir, Utc()).status().code(), absl::StatusCode::kInvalidArgument);
  dir = WriteLegacyDirectory(
      "farfuture", "{\"tracking_data\": {\"worker_counts\": {\"99999-01-01T00:00:00\": 1}}}");
  EXPECT_EQ(LoadLegacyMeasurement(dir, Utc()).status().code(), absl::StatusCode::kInvalidArgument);
  // Missing files: NotFound naming them.
  EXPECT_EQ(LoadLegacyMeasurement(root_ + "/nope").status().code(), absl::StatusCode::kNotFound);
  dir = root_ + "/onlymetrics";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  Write(dir + "/metrics.json", "{}");
  EXPECT_FALSE(IsLegacyMeasurementDirectory(dir));
  loaded = LoadLegacyMeasurement(dir, Utc());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), "start_end_time.txt"));
}

// Reliability study D3, D4: a metrics.json that is a directory crashed collect (uncaught
// std::__ios_failure); /dev/zero grew memory without end; a FIFO blocked forever.
TEST_F(LegacyMeasurementTest, FilesThatAreNotRegularAreErrorsNamingThem) {
  const std::string dir = WriteLegacyDirectory("notfiles", "{}");
  const std::string metrics = dir + "/metrics.json";
  ASSERT_EQ(unlink(metrics.c_str()), 0);
  ASSERT_EQ(mkdir(metrics.c_str(), 0755), 0);
  absl::StatusOr<v1::Measurement> loaded = LoadLegacyMeasurement(dir, Utc());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(),
                                "metrics.json' is a directory, not a regular file"))
      << loaded.status();
  ASSERT_EQ(rmdir(metrics.c_str()), 0);
  ASSERT_EQ(symlink("/dev/zero", metrics.c_str()), 0);
  loaded = LoadLegacyMeasurement(dir, Utc());
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), "is a character device"))
      << loaded.status();
  ASSERT_EQ(unlink(metrics.c_str()), 0);
  Write(metrics, "{}");
  const std::string times = dir + "/start_end_time.txt";
  ASSERT_EQ(unlink(times.c_str()), 0);
  ASSERT_EQ(mkfifo(times.c_str(), 0600), 0);
  loaded = LoadLegacyMeasurement(dir, Utc());
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), "start_end_time.txt' is a FIFO"))
      << loaded.status();
}

// Reliability study D7: 200 KB of nested arrays kept protobuf busy for over 600 s.
TEST_F(LegacyMeasurementTest, DeepNestingIsRefusedQuickly) {
  const std::string dir = WriteLegacyDirectory(
      "deep", "{\"x\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  const absl::StatusOr<v1::Measurement> loaded = LoadLegacyMeasurement(dir, Utc());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), "metrics.json: nested too deep"))
      << loaded.status();
}

// One bad chunk value loses that value, with a warning, not the directory.
TEST_F(LegacyMeasurementTest, BadChunkValuesAreWarnings) {
  const std::string dir = WriteLegacyDirectory(
      "badvalue", R"({"raw_chunk_metrics": [{"num_events": 5, "duration": "slow"}]})");
  const absl::StatusOr<v1::Measurement> loaded = LoadLegacyMeasurement(dir, Utc());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->chunks_size(), 1);
  EXPECT_EQ(loaded->chunks(0).events(), 5);
  ASSERT_EQ(loaded->warnings_size(), 1);
  EXPECT_EQ(loaded->warnings(0).code(), "input_value_left_out");
  EXPECT_TRUE(absl::StrContains(loaded->warnings(0).message(), "record 0: 'duration'"))
      << loaded->warnings(0).message();
}

// Issue #16: {"total_events": 1e308} was shown as -9,223,372,036,854,775,808. A count out of
// its field's range, negative or NaN is left out with a warning naming the file and key.
TEST_F(LegacyMeasurementTest, OutOfRangeCountsAreLeftOutWithAWarning) {
  const std::string dir = WriteLegacyDirectory("huge", R"({
      "total_events": 1e308, "num_chunks": -3, "peak_workers": 1e12, "total_bytes_read": 5,
      "num_successful_chunks": 9.3e18,
      "per_dataset": {"d": {"num_chunks": 1e300, "total_events": -1, "mean_duration": 2}},
      "sections": {"s": {"count": 1e19}},
      "tracking_data": {"worker_counts": {"2025-01-01T12:00:00": 1e10,
                                          "2025-01-01T12:00:01": 2}}})",
                                               "0,inf\n");
  const absl::StatusOr<v1::Measurement> loaded = LoadLegacyMeasurement(dir, Utc());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const v1::WorkflowMetrics& workflow = loaded->metrics().workflow();
  EXPECT_FALSE(workflow.has_total_events());
  EXPECT_EQ(workflow.num_chunks(), 0);
  EXPECT_EQ(workflow.total_bytes_read(), 5);
  EXPECT_EQ(loaded->report().events(), 0);
  EXPECT_EQ(loaded->metrics().workers().peak_workers(), 0);
  EXPECT_EQ(loaded->metrics().chunks().num_successful_chunks(), 0);
  ASSERT_EQ(loaded->metrics().chunks().per_dataset_size(), 1);
  EXPECT_EQ(loaded->metrics().chunks().per_dataset(0).num_chunks(), 0);
  EXPECT_EQ(loaded->metrics().chunks().per_dataset(0).total_events(), 0);
  EXPECT_EQ(loaded->metrics().chunks().sections(0).count(), 0);
  EXPECT_EQ(loaded->tracking().worker_count_size(), 1);
  EXPECT_EQ(loaded->tracking().worker_count(0), 2);
  EXPECT_EQ(loaded->metadata().elapsed_seconds(), 0);
  std::vector<std::string> messages;
  for (const v1::Warning& warning : loaded->warnings()) {
    EXPECT_EQ(warning.code(), "input_value_left_out");
    messages.push_back(warning.message());
  }
  const std::string metrics = dir + "/metrics.json";
  EXPECT_THAT(messages,
              testing::UnorderedElementsAre(
                  metrics + ": 'total_events' is 1e+308, not a count from 0 to 2^63-1; "
                            "the value is left out",
                  metrics + ": 'num_chunks' is -3, not a count from 0 to 2^63-1; "
                            "the value is left out",
                  metrics + ": 'peak_workers' is 1e+12, not a count from 0 to 2^31-1; "
                            "the value is left out",
                  testing::HasSubstr("'num_successful_chunks' is 9.3e+18"),
                  testing::HasSubstr("per_dataset['d'].num_chunks is 1e+300"),
                  testing::HasSubstr("per_dataset['d'].total_events is -1"),
                  testing::HasSubstr("sections['s'].count is 1e+19"),
                  testing::HasSubstr("worker_counts['2025-01-01T12:00:00'] is 1e+10"),
                  testing::HasSubstr("start_end_time.txt: '0,inf' gives no finite elapsed")));
}

TEST(ParsePythonTupleReprTest, StringsNumbersAndNone) {
  absl::StatusOr<std::vector<std::string>> parsed =
      ParsePythonTupleRepr("('execute', \"it's\", 'a\\'b', 12, -1.5, None)");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, (std::vector<std::string>{"execute", "it's", "a'b", "12", "-1.5", "None"}));
  EXPECT_EQ(ParsePythonTupleRepr("('a', 'b',)")->size(), 2u);
  EXPECT_TRUE(ParsePythonTupleRepr("()")->empty());
  for (const char* bad : {"'a', 'b'", "('a' 'b')", "('a", "(foo)", ""}) {
    EXPECT_FALSE(ParsePythonTupleRepr(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace roastcoffea
