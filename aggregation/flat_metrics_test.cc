#include "aggregation/flat_metrics.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aggregation/aggregate.h"
#include "aggregation/test_run.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::roastcoffea::testing_internal::AggregateRun;
using ::roastcoffea::testing_internal::TestRun;

constexpr int64_t kMiB = 1024 * 1024;

std::vector<std::string> Keys(const std::vector<FlatMetric>& flat) {
  std::vector<std::string> keys;
  for (const FlatMetric& metric : flat) keys.push_back(metric.key);
  return keys;
}

const FlatMetric& Find(const std::vector<FlatMetric>& flat, const std::string& key) {
  for (const FlatMetric& metric : flat) {
    if (metric.key == key) return metric;
  }
  ADD_FAILURE() << "missing key " << key;
  static const FlatMetric kMissing;
  return kMissing;
}

TestRun ReportOnly() {
  TestRun input;
  input.report.set_events(1'000'000);
  input.report.set_compressed_bytes_read(10'000'000'000);
  input.report.set_process_time_seconds(100);
  input.report.set_chunks(50);
  input.elapsed_seconds = 50;
  return input;
}

TEST(FlatMetricsTest, ReportOnlyHasWorkflowAndEfficiencyKeysInTheOriginalOrder) {
  const absl::StatusOr<v1::AggregatedMetrics> m = AggregateRun(ReportOnly());
  ASSERT_TRUE(m.ok()) << m.status();
  const std::vector<FlatMetric> flat = ToFlatMetrics(*m);
  EXPECT_EQ(Keys(flat), (std::vector<std::string>{
                            "data_rate_gbps", "total_events", "event_rate_elapsed_khz",
                            "event_rate_cpu_total_khz", "elapsed_time_seconds", "total_cpu_time",
                            "num_chunks", "avg_cpu_time_per_chunk", "total_bytes_read",
                            "core_efficiency", "speedup_factor", "event_rate_core_khz"}));
  EXPECT_EQ(Find(flat, "data_rate_gbps").value, 1.6);
  EXPECT_EQ(Find(flat, "data_rate_gbps").unit, "Gbps");
  EXPECT_EQ(Find(flat, "total_events").value, 1e6);
  EXPECT_EQ(Find(flat, "event_rate_elapsed_khz").value, 20.0);
  EXPECT_EQ(Find(flat, "event_rate_elapsed_khz").unit, "kHz");
  EXPECT_EQ(Find(flat, "elapsed_time_seconds").value, 50.0);
  EXPECT_EQ(Find(flat, "elapsed_time_seconds").unit, "s");
  EXPECT_EQ(Find(flat, "total_cpu_time").value, 100.0);
  EXPECT_EQ(Find(flat, "num_chunks").value, 50.0);
  EXPECT_EQ(Find(flat, "avg_cpu_time_per_chunk").value, 2.0);
  EXPECT_EQ(Find(flat, "total_bytes_read").value, 1e10);
  EXPECT_EQ(Find(flat, "total_bytes_read").unit, "bytes");
  // None without worker tracking, as the original.
  EXPECT_EQ(Find(flat, "core_efficiency").value, std::nullopt);
  EXPECT_EQ(Find(flat, "event_rate_core_khz").value, std::nullopt);
  EXPECT_EQ(Find(flat, "speedup_factor").value, 2.0);
}

TEST(FlatMetricsTest, WorkerKeysWithTracking) {
  TestRun input = ReportOnly();
  v1::TrackingData& tracking = input.tracking.emplace();
  tracking.add_worker_count_time_unix_ns(0);
  tracking.add_worker_count(3);
  v1::WorkerSeries* worker = tracking.add_workers();
  worker->add_time_unix_ns(0);
  worker->add_memory_bytes(2e9);
  worker->add_cores(8);
  const absl::StatusOr<v1::AggregatedMetrics> m = AggregateRun(input);
  ASSERT_TRUE(m.ok()) << m.status();
  const std::vector<FlatMetric> flat = ToFlatMetrics(*m);
  const std::vector<std::string> keys = Keys(flat);
  const std::vector<std::string> expected_middle = {
      "avg_workers",      "peak_workers",      "total_cores",
      "cores_per_worker", "peak_memory_bytes", "avg_memory_per_worker_bytes",
      "core_efficiency"};
  ASSERT_EQ(keys.size(), 18u);
  EXPECT_EQ(std::vector<std::string>(keys.begin() + 9, keys.begin() + 16), expected_middle);
  EXPECT_EQ(Find(flat, "avg_workers").value, 3.0);
  EXPECT_EQ(Find(flat, "total_cores").value, 8.0);
  EXPECT_EQ(Find(flat, "total_cores").unit, "cores");
  EXPECT_EQ(Find(flat, "peak_memory_bytes").value, 2e9);
  EXPECT_EQ(Find(flat, "core_efficiency").value, 100.0 / (8 * 50));
  EXPECT_EQ(Find(flat, "core_efficiency").unit, "fraction");
  EXPECT_EQ(Find(flat, "event_rate_core_khz").value, 1e6 / (50 * 8) / 1000);
}

TEST(FlatMetricsTest, TrackingWithoutCoresGivesNoneForCores) {
  TestRun input = ReportOnly();
  input.tracking.emplace();
  const absl::StatusOr<v1::AggregatedMetrics> m = AggregateRun(input);
  ASSERT_TRUE(m.ok()) << m.status();
  const std::vector<FlatMetric> flat = ToFlatMetrics(*m);
  EXPECT_EQ(Find(flat, "total_cores").value, std::nullopt);
  EXPECT_EQ(Find(flat, "cores_per_worker").value, std::nullopt);
  EXPECT_EQ(Find(flat, "avg_workers").value, 0.0);
}

TEST(FlatMetricsTest, ChunkKeysInMiBAndNumChunksOverridden) {
  TestRun input = ReportOnly();
  const int64_t deltas_mib[] = {10, 20, 30};
  for (int i = 0; i < 3; ++i) {
    v1::ChunkRecord& chunk = input.chunks.emplace_back();
    chunk.set_dataset(i == 2 ? "WJets" : "TTbar");
    chunk.set_duration_seconds(i + 1);
    chunk.set_events(100 * (i + 1));
    chunk.set_memory_before_bytes(500 * kMiB);
    chunk.set_memory_after_bytes((500 + deltas_mib[i]) * kMiB);
  }
  v1::ChunkRecord& failed = input.chunks.emplace_back();
  failed.set_status(v1::CHUNK_STATUS_FAILED);
  const absl::StatusOr<v1::AggregatedMetrics> m = AggregateRun(input);
  ASSERT_TRUE(m.ok()) << m.status();
  const std::vector<FlatMetric> flat = ToFlatMetrics(*m);
  const std::vector<std::string> keys = Keys(flat);
  const std::vector<std::string> expected_tail = {
      "num_successful_chunks", "num_failed_chunks", "chunk_duration_mean", "chunk_duration_min",
      "chunk_duration_max", "chunk_duration_std", "chunk_mem_delta_mean_mb",
      "chunk_mem_delta_min_mb", "chunk_mem_delta_max_mb", "chunk_mem_delta_std_mb",
      "total_events_from_chunks", "chunk_events_mean", "chunk_events_min", "chunk_events_max",
      "per_dataset.TTbar.num_chunks", "per_dataset.TTbar.total_duration",
      "per_dataset.TTbar.total_events", "per_dataset.TTbar.mean_duration",
      "per_dataset.TTbar.mean_events_per_chunk", "per_dataset.WJets.num_chunks",
      "per_dataset.WJets.total_duration", "per_dataset.WJets.total_events",
      "per_dataset.WJets.mean_duration", "per_dataset.WJets.mean_events_per_chunk",
      // Branch coverage: present whenever chunk records exist, as the original.
      "avg_branches_read_percent", "avg_bytes_read_percent", "total_branches_read"};
  ASSERT_EQ(keys.size(), 12 + expected_tail.size());
  EXPECT_EQ(std::vector<std::string>(keys.begin() + 12, keys.end()), expected_tail);
  EXPECT_EQ(Find(flat, "num_chunks").value, 4.0);  // the records' count, in the report's slot
  EXPECT_EQ(Find(flat, "num_failed_chunks").value, 1.0);
  EXPECT_EQ(Find(flat, "chunk_duration_mean").value, 2.0);
  EXPECT_EQ(Find(flat, "chunk_duration_std").value, 1.0);
  EXPECT_EQ(Find(flat, "chunk_mem_delta_mean_mb").value, 20.0);
  EXPECT_EQ(Find(flat, "chunk_mem_delta_mean_mb").unit, "MiB");
  EXPECT_EQ(Find(flat, "chunk_mem_delta_std_mb").value, 10.0);
  EXPECT_EQ(Find(flat, "chunk_mem_delta_min_mb").value, 10.0);
  EXPECT_EQ(Find(flat, "total_events_from_chunks").value, 600.0);
  EXPECT_EQ(Find(flat, "chunk_events_max").value, 300.0);
  EXPECT_EQ(Find(flat, "per_dataset.TTbar.mean_events_per_chunk").value, 150.0);
  EXPECT_EQ(Find(flat, "per_dataset.WJets.total_duration").value, 3.0);
  // No chunk reported its branches: the branch figures are unknown (empty in CSV), not 0.
  EXPECT_FALSE(Find(flat, "avg_branches_read_percent").value.has_value());
  EXPECT_FALSE(Find(flat, "avg_bytes_read_percent").value.has_value());
  EXPECT_FALSE(Find(flat, "total_branches_read").value.has_value());
}

TEST(FlatMetricsTest, AllFailedChunksGiveCountsOnly) {
  TestRun input = ReportOnly();
  input.chunks.emplace_back().set_status(v1::CHUNK_STATUS_FAILED);
  const absl::StatusOr<v1::AggregatedMetrics> m = AggregateRun(input);
  ASSERT_TRUE(m.ok()) << m.status();
  const std::vector<std::string> keys = Keys(ToFlatMetrics(*m));
  ASSERT_EQ(keys.size(), 17u);
  EXPECT_EQ(keys[12], "num_successful_chunks");
  EXPECT_EQ(keys[13], "num_failed_chunks");
  EXPECT_EQ(keys[14], "avg_branches_read_percent");
}

TEST(FlatMetricsTest, EveryFixedKeyIsACanonicalName) {
  TestRun input = ReportOnly();
  input.tracking.emplace();
  v1::ChunkRecord& chunk = input.chunks.emplace_back();
  chunk.set_memory_after_bytes(1);
  v1::FineMetric* fine = input.spans.emplace_back().add_metrics();
  fine->set_activity("thread-cpu");
  fine->set_value(1);
  const absl::StatusOr<v1::AggregatedMetrics> m = AggregateRun(input);
  ASSERT_TRUE(m.ok()) << m.status();
  for (const FlatMetric& metric : ToFlatMetrics(*m)) {
    if (metric.key.find('.') != std::string::npos) continue;  // nested dict entries
    EXPECT_EQ(CanonicalKeyName(metric.key), metric.key);
  }
}

TEST(FlatMetricsTest, FineSectionAndBranchKeysUnderTheOriginalNames) {
  TestRun input = ReportOnly();
  v1::Span& span = input.spans.emplace_back();
  for (auto [activity, value] : std::vector<std::pair<std::string, double>>{
           {"thread-cpu", 100}, {"thread-noncpu", 50}, {"compress", 1}, {"decompress", 5}}) {
    v1::FineMetric* metric = span.add_metrics();
    metric->set_task_prefix("MyProcessor");
    metric->set_activity(activity);
    metric->set_unit("seconds");
    metric->set_value(value);
  }
  v1::ChunkRecord& chunk = input.chunks.emplace_back();
  chunk.set_file("a.root");
  chunk.set_entry_start(0);
  chunk.set_entry_stop(10);
  chunk.set_start_unix_ns(1'000'000'000);
  chunk.set_end_unix_ns(3'000'000'000);
  chunk.set_compressed_bytes_read(4096);
  chunk.set_duration_seconds(2);
  chunk.add_accessed_branches("Jet_pt");
  chunk.mutable_file_metadata()->set_total_branches(100);
  chunk.mutable_file_metadata()->set_compression_ratio(0.25);
  v1::SectionRecord* section = chunk.add_sections();
  section->set_name("load");
  section->set_kind(v1::SectionRecord::KIND_MEMORY);
  section->set_entries(1);
  section->set_memory_delta_bytes(100 * kMiB);
  section->set_duration_seconds(0.5);
  const absl::StatusOr<v1::AggregatedMetrics> m = AggregateRun(input);
  ASSERT_TRUE(m.ok()) << m.status();
  const std::vector<FlatMetric> flat = ToFlatMetrics(*m);
  EXPECT_NEAR(*Find(flat, "processor_cpu_percent").value, 66.67, 0.01);
  EXPECT_EQ(Find(flat, "processor_cpu_percent").unit, "%");
  EXPECT_EQ(Find(flat, "total_compression_overhead_seconds").value, 6.0);
  EXPECT_EQ(Find(flat, "sections.load.count").value, 1.0);
  EXPECT_EQ(Find(flat, "sections.load.mean_duration").value, 0.5);
  EXPECT_EQ(Find(flat, "sections.load.mean_mem_delta_mb").value, 100.0);
  // The same name as a timer too: each kind keeps its own keys.
  v1::SectionRecord* timer = input.chunks.back().add_sections();
  timer->set_name("load");
  timer->set_kind(v1::SectionRecord::KIND_TIME);
  timer->set_entries(2);
  timer->set_duration_seconds(0.25);
  const absl::StatusOr<v1::AggregatedMetrics> both = AggregateRun(input);
  ASSERT_TRUE(both.ok()) << both.status();
  const std::vector<FlatMetric> both_flat = ToFlatMetrics(*both);
  EXPECT_EQ(Find(both_flat, "sections.load_memory.mean_mem_delta_mb").value, 100.0);
  EXPECT_EQ(Find(both_flat, "sections.load_time.count").value, 2.0);
  EXPECT_EQ(Find(both_flat, "sections.load_time.total_duration").value, 0.25);
  std::set<std::string> keys;
  for (const FlatMetric& metric : both_flat) {
    EXPECT_TRUE(keys.insert(metric.key).second) << "duplicate key " << metric.key;
  }
  EXPECT_EQ(Find(flat, "chunk_info.a.root:0:10.t_start").value, 1.0);
  EXPECT_EQ(Find(flat, "chunk_info.a.root:0:10.t_end").value, 3.0);
  EXPECT_EQ(Find(flat, "chunk_info.a.root:0:10.bytes_read").value, 4096.0);
  EXPECT_EQ(Find(flat, "file_read_metrics.a.root.branches_read_percent").value, 1.0);
  EXPECT_EQ(Find(flat, "file_metadata.a.root.compression_ratio").value, 0.25);
  EXPECT_EQ(Find(flat, "compression_ratios.0").value, 0.25);
  EXPECT_EQ(Find(flat, "total_branches_read").value, 1.0);
  EXPECT_EQ(Find(flat, "avg_branches_read_percent").value, 1.0);
}

TEST(ToFlatMetricsTest, PerFileKeysUseTheShortestUniqueTailOfThePath) {
  v1::AggregatedMetrics metrics;
  v1::ChunkMetrics& chunks = *metrics.mutable_chunks();
  for (const char* file : {"/eos/cms/mc/a/f.root", "/eos/cms/mc/b/f.root", "/data/g.root"}) {
    v1::ChunkInfo& info = *chunks.add_chunk_info();
    info.set_file(file);
    info.set_entry_stop(10);
  }
  v1::FileReadMetrics& read = *metrics.mutable_branches()->add_files();
  read.set_file("/data/g.root");
  std::vector<std::string> keys;
  for (const FlatMetric& flat : ToFlatMetrics(metrics)) {
    if (flat.key.find(".t_start") != std::string::npos ||
        flat.key.find("compression_ratio") != std::string::npos) {
      keys.push_back(flat.key);
    }
  }
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "chunk_info.a/f.root:0:10.t_start", "chunk_info.b/f.root:0:10.t_start",
                      "chunk_info.g.root:0:10.t_start", "file_metadata.g.root.compression_ratio"}));
}

// The chunk_info family handed over whole: the same keys, values and units as ToFlatMetrics in
// the same place, and entries with equal identities exactly when their keys are equal (same
// base name in two directories, retries, the same record twice).
TEST(ForEachFlatMetricTest, ChunkInfoKeysAreToFlatMetricsKeysAndIdentitiesMatchKeys) {
  v1::AggregatedMetrics metrics;
  v1::ChunkMetrics& chunks = *metrics.mutable_chunks();
  chunks.add_per_dataset()->set_dataset("d");
  struct Entry {
    const char* file;
    int64_t start;
    uint32_t attempt;
  };
  for (const Entry& entry : {Entry{"/mc/a/f.root", 0, 0}, Entry{"/mc/b/f.root", 0, 0},
                             Entry{"/mc/a/f.root", 0, 1}, Entry{"/mc/a/f.root", 0, 0},
                             Entry{"/mc/a/f.root", 10, 0}, Entry{"/x/f,\"q\".root", 0, 2}}) {
    v1::ChunkInfo& info = *chunks.add_chunk_info();
    info.set_file(entry.file);
    info.set_entry_start(entry.start);
    info.set_entry_stop(entry.start + 10);
    info.set_attempt(entry.attempt);
    info.set_start_unix_ns(2'000'000'000);
    info.set_end_unix_ns(3'500'000'000);
    info.set_bytes_read(4096);
  }
  metrics.mutable_branches()->add_files()->set_file("/mc/b/f.root");

  std::vector<FlatMetric> handed;
  std::vector<std::string> keys_by_parts;
  std::vector<ChunkInfoKeys::Identity> identities;
  int families = 0;
  ForEachFlatMetric(
      metrics, FlatFileNames(metrics),
      [&](FlatMetric&& metric) { handed.push_back(std::move(metric)); },
      [&](const ChunkInfoKeys& keys) {
        ++families;
        for (size_t entry = 0; entry < keys.size(); ++entry) {
          identities.push_back(keys.IdentityOf(entry));
          std::string prefix;
          keys.AppendPrefix(entry, &prefix);
          for (int figure = 0; figure < ChunkInfoKeys::kFigures; ++figure) {
            handed.push_back(keys.Metric(entry, figure));
            keys_by_parts.push_back(absl::StrCat(prefix, ChunkInfoKeys::FigureName(figure)));
            EXPECT_EQ(keys.Value(entry, figure), handed.back().value);
            EXPECT_EQ(ChunkInfoKeys::FigureUnit(figure), handed.back().unit);
          }
        }
      });
  EXPECT_EQ(families, 1);
  const std::vector<FlatMetric> flat = ToFlatMetrics(metrics);
  EXPECT_EQ(Keys(handed), Keys(flat));
  for (size_t i = 0; i < flat.size() && i < handed.size(); ++i) {
    EXPECT_EQ(handed[i].value, flat[i].value) << flat[i].key;
    EXPECT_EQ(handed[i].unit, flat[i].unit) << flat[i].key;
  }
  EXPECT_EQ(Find(flat, "chunk_info.a/f.root:0:10#1.t_end").value, 3.5);
  EXPECT_EQ(Find(flat, "chunk_info.f,\"q\".root:0:10#2.bytes_read").value, 4096.0);

  ASSERT_EQ(identities.size(), 6u);
  ASSERT_EQ(keys_by_parts.size(), 18u);
  for (size_t a = 0; a < identities.size(); ++a) {
    for (size_t b = 0; b < identities.size(); ++b) {
      const bool same_keys = keys_by_parts[3 * a] == keys_by_parts[3 * b];
      EXPECT_EQ(identities[a] == identities[b], same_keys)
          << keys_by_parts[3 * a] << " " << keys_by_parts[3 * b];
      EXPECT_EQ(identities[a] < identities[b] || identities[b] < identities[a], !same_keys);
    }
  }
  EXPECT_TRUE(identities[0] == identities[3]);  // the same record twice
}

}  // namespace
}  // namespace roastcoffea
