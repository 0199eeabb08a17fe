// The findings on real measurements (testdata/findings_corpus/README.md): each expectation is
// checked against a computation over the chunk records made here, not by the rules' code.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "aggregation/aggregate.h"
#include "aggregation/findings.h"
#include "aggregation/findings_contention.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using aggregation_internal::kContentionLoadRatio;
using aggregation_internal::kContentionRunShare;
using aggregation_internal::kReadAmplificationRatio;
using aggregation_internal::kStarvationCriticalShare;
using aggregation_internal::kStragglerMinExcessSeconds;
using aggregation_internal::kStragglerRatio;

v1::Measurement Load(const std::string& name) {
  std::ifstream in("aggregation/testdata/findings_corpus/" + name, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  v1::Measurement m;
  EXPECT_TRUE(m.ParseFromString(bytes.str())) << name;
  m.clear_metrics();
  return m;
}

v1::AggregatedMetrics Reaggregate(const v1::Measurement& m) {
  absl::StatusOr<v1::AggregatedMetrics> metrics = Aggregate(AggregationInputFromMeasurement(m));
  EXPECT_TRUE(metrics.ok()) << metrics.status();
  return metrics.ok() ? *metrics : v1::AggregatedMetrics();
}

// What the records say, computed here.
struct Facts {
  double run_queue_share = 0;
  double read_amplification = 0;
  double max_seconds = 0, median_seconds = 0;
};

Facts FactsOf(const v1::Measurement& m) {
  Facts facts;
  double run_queue = 0, wall = 0, read = 0;
  std::map<std::string, double> file_bytes;
  std::vector<double> durations;
  for (const v1::ChunkRecord& chunk : m.chunks()) {
    run_queue += chunk.run_queue_wait_seconds();
    wall += chunk.duration_seconds();
    read += static_cast<double>(chunk.compressed_bytes_read());
    file_bytes[chunk.file()] = static_cast<double>(chunk.file_bytes());
    durations.push_back(chunk.duration_seconds());
  }
  double distinct = 0;
  for (const auto& [file, bytes] : file_bytes) distinct += bytes;
  std::sort(durations.begin(), durations.end());
  const size_t n = durations.size();
  facts.run_queue_share = run_queue / wall;
  facts.read_amplification = read / distinct;
  facts.max_seconds = durations.back();
  facts.median_seconds =
      n % 2 == 1 ? durations[n / 2] : 0.5 * (durations[n / 2 - 1] + durations[n / 2]);
  return facts;
}

// CPU contention from the run-queue waits, computed here: a chunk whose thread waited for a CPU
// w of its runnable time (CPU + wait) saw load / CPUs = 1 / (1 - w); the share of the run
// (first start to last end) such chunks cover, and their wait over their mean concurrency
// (their summed wall time over the time they cover).
struct Contention {
  double covered_share = 0;
  double cost_seconds = 0;
};

Contention ContentionOf(const v1::Measurement& m) {
  std::vector<std::pair<int64_t, int64_t>> busy;
  int64_t first = INT64_MAX, last = INT64_MIN;
  double wait = 0, wall = 0;
  for (const v1::ChunkRecord& c : m.chunks()) {
    first = std::min(first, c.start_unix_ns());
    last = std::max(last, c.end_unix_ns());
    if (c.cpu_seconds() <= 0) continue;
    const double runnable = c.cpu_seconds() + c.run_queue_wait_seconds();
    if (c.run_queue_wait_seconds() / runnable < 1 - 1 / kContentionLoadRatio) continue;
    busy.emplace_back(c.start_unix_ns(), c.end_unix_ns());
    wait += c.run_queue_wait_seconds();
    wall += c.duration_seconds();
  }
  std::sort(busy.begin(), busy.end());
  int64_t covered = 0, reach = INT64_MIN;
  for (const auto& [start, end] : busy) {
    const int64_t from = std::max(start, reach);
    if (end > from) covered += end - from;
    reach = std::max(reach, end);
  }
  return {static_cast<double>(covered) / static_cast<double>(last - first),
          wait * 1e-9 * static_cast<double>(covered) / wall};
}

double NumberOf(const v1::AggregatedMetrics& metrics, const std::string& code,
                const std::string& key) {
  for (const v1::Finding& f : metrics.findings()) {
    if (f.code() != code) continue;
    for (const v1::FindingNumber& n : f.numbers()) {
      if (n.key() == key) return n.value();
    }
  }
  ADD_FAILURE() << "no " << code << " " << key;
  return -1;
}

std::map<std::string, const v1::RuleEvaluation*> States(const v1::AggregatedMetrics& metrics) {
  std::map<std::string, const v1::RuleEvaluation*> out;
  for (const v1::RuleEvaluation& e : metrics.rule_evaluations()) out[e.code()] = &e;
  return out;
}

bool Straggles(const Facts& facts) {
  return facts.max_seconds >= kStragglerRatio * facts.median_seconds &&
         facts.max_seconds - facts.median_seconds >= kStragglerMinExcessSeconds;
}

void ExpectEveryOwnedRuleEvaluated(const v1::AggregatedMetrics& metrics) {
  const auto states = States(metrics);
  for (const char* code : {"cpu_starvation", "io_bound", "stragglers", "tiny_chunks",
                           "read_amplification", "data_lost", "memory_pressure", "debug_build"}) {
    ASSERT_TRUE(states.count(code)) << code;
    EXPECT_TRUE(states.at(code)->evaluated()) << code << ": " << states.at(code)->reason();
  }
}

TEST(FindingsCorpusTest, EightThreadsOnTwoCpusAreStarvedNotReReading) {
  const v1::Measurement m = Load("threadpool_8threads_starved.pb");
  ASSERT_EQ(m.chunks_size(), 24);
  const Facts facts = FactsOf(m);
  EXPECT_GE(facts.run_queue_share, kStarvationCriticalShare);
  EXPECT_LT(facts.read_amplification, kReadAmplificationRatio);
  EXPECT_FALSE(Straggles(facts));

  const v1::AggregatedMetrics metrics = Reaggregate(m);
  ExpectEveryOwnedRuleEvaluated(metrics);
  const auto states = States(metrics);
  EXPECT_TRUE(states.at("cpu_starvation")->fired());
  EXPECT_FALSE(states.at("read_amplification")->fired());
  EXPECT_FALSE(states.at("stragglers")->fired());
  EXPECT_NEAR(metrics.workflow().read_amplification(), facts.read_amplification, 1e-9);
  // 8 threads on 2 CPUs under a load of 10-12: load over CPUs far above 1.25x all run long.
  const Contention contention = ContentionOf(m);
  EXPECT_GE(contention.covered_share, kContentionRunShare);
  // The same run-queue wait is cpu_starvation's evidence: one finding carries both figures.
  EXPECT_FALSE(states.at("cpu_contention")->evaluated());
  EXPECT_NE(states.at("cpu_contention")->reason().find("cpu_starvation"), std::string::npos);
  EXPECT_NEAR(NumberOf(metrics, "cpu_starvation", "contended_share"), contention.covered_share,
              1e-9);
  EXPECT_NEAR(NumberOf(metrics, "cpu_starvation", "cost_seconds"), contention.cost_seconds, 1e-6);
  ASSERT_GE(metrics.findings_size(), 1);
  EXPECT_EQ(metrics.findings(0).code(), "cpu_starvation");
  EXPECT_EQ(metrics.findings(0).severity(), v1::Finding::SEVERITY_CRITICAL);
}

TEST(FindingsCorpusTest, SmallChunksReReadTheirFiles) {
  const v1::Measurement m = Load("threadpool_chunk2000_rereading.pb");
  ASSERT_EQ(m.chunks_size(), 300);
  const Facts facts = FactsOf(m);
  EXPECT_GE(facts.read_amplification, kReadAmplificationRatio);
  EXPECT_NEAR(facts.read_amplification, 4.38, 0.01);
  EXPECT_FALSE(Straggles(facts));

  const v1::AggregatedMetrics metrics = Reaggregate(m);
  ExpectEveryOwnedRuleEvaluated(metrics);
  const auto states = States(metrics);
  EXPECT_TRUE(states.at("read_amplification")->fired());
  EXPECT_TRUE(states.at("cpu_starvation")->fired());
  EXPECT_FALSE(states.at("stragglers")->fired());
  EXPECT_NEAR(metrics.workflow().read_amplification(), facts.read_amplification, 1e-9);
  for (const v1::Finding& f : metrics.findings()) {
    if (f.code() != "read_amplification") continue;
    EXPECT_NE(f.title().find("4.4x"), std::string::npos) << f.title();
    EXPECT_NE(f.suggestion().find("--chunk_size"), std::string::npos) << f.suggestion();
  }
}

TEST(FindingsCorpusTest, WorkQueueLogLimitAndChunksPerTask) {
  const v1::Measurement m = Load("workqueue_2workers.pb");
  ASSERT_EQ(m.chunks_size(), 96);
  // The only lost-data warning is the Work Queue 9.9 log's missing worker times.
  int log_limits = 0;
  for (const v1::Warning& w : m.warnings()) {
    if (w.code() == "taskvine_log") {
      log_limits += w.message().find("have no worker start/end times") != std::string::npos;
    }
  }
  EXPECT_EQ(log_limits, 1);
  // The median task is below the 100 ms an engine task should take.
  const Facts facts = FactsOf(m);
  EXPECT_LT(facts.median_seconds, aggregation_internal::kEngineMinChunkSeconds);

  const v1::AggregatedMetrics metrics = Reaggregate(m);
  const auto states = States(metrics);
  EXPECT_FALSE(states.at("memory_pressure")->evaluated());
  for (const v1::Finding& f : metrics.findings()) {
    if (f.code() == "data_lost") {
      EXPECT_EQ(f.severity(), v1::Finding::SEVERITY_INFO);
      EXPECT_EQ(f.suggestion().find("rerun with the engine reachable"), std::string::npos)
          << f.suggestion();
    }
    if (f.code() == "tiny_chunks") {
      EXPECT_NE(f.suggestion().find("--chunks_per_task="), std::string::npos) << f.suggestion();
      EXPECT_NE(f.suggestion().find("(now 1)"), std::string::npos) << f.suggestion();
    }
  }
  EXPECT_TRUE(states.at("data_lost")->fired());
  EXPECT_TRUE(states.at("tiny_chunks")->fired());
  // Work Queue ran the tasks without the resource monitor, but collect's workers measured each
  // chunk thread's run-queue wait on the worker's machine: that is the evidence.
  for (const v1::ChunkRecord& chunk : m.chunks()) ASSERT_FALSE(chunk.has_machine_load());
  // The VM ran 2 workers under a 1-minute load of 10-12 on 2 CPUs: 72 % of the run contended.
  // That run-queue wait also fired cpu_starvation, whose finding carries the contention figures.
  const Contention contention = ContentionOf(m);
  EXPECT_NEAR(contention.covered_share, 0.7165, 1e-3);
  EXPECT_TRUE(states.at("cpu_starvation")->fired());
  EXPECT_FALSE(states.at("cpu_contention")->fired());
  EXPECT_NEAR(NumberOf(metrics, "cpu_starvation", "contended_share"), contention.covered_share,
              1e-9);
  EXPECT_NEAR(NumberOf(metrics, "cpu_starvation", "cost_seconds"), contention.cost_seconds, 1e-6);
}

// A real Dask run (distributed 2025.9.3, shared/engines/modern-dask work.py) has spans with the
// engine's fine metrics but no chunk records and no task timeline: the rules that need those say
// they were not evaluated, so "no finding" is never read as "checked and clear".
TEST(FindingsCorpusTest, ADaskRunSaysWhatItCouldNotCheck) {
  const v1::Measurement m = Load("dask_2025.9.3_work.pb");
  ASSERT_EQ(m.chunks_size(), 0);
  bool thread_cpu = false;
  for (const v1::Span& span : m.spans()) {
    for (const v1::FineMetric& metric : span.metrics()) {
      thread_cpu |= metric.activity() == "thread-cpu";
    }
  }
  ASSERT_TRUE(thread_cpu) << "the engine's own CPU accounting is there";

  const v1::AggregatedMetrics metrics = Reaggregate(m);
  const auto states = States(metrics);
  for (const char* code : {"stragglers", "tiny_chunks", "failed_chunks", "retried_chunks",
                           "read_amplification", "idle_tail", "load_imbalance", "worker_bound",
                           "dispatch_bound", "dead_workers", "slow_hosts"}) {
    ASSERT_TRUE(states.count(code)) << code;
    EXPECT_FALSE(states.at(code)->evaluated()) << code;
    EXPECT_FALSE(states.at(code)->reason().empty()) << code;
  }
  // A Dask heartbeat's CPU is the worker process's, never the machine's load.
  EXPECT_FALSE(states.at("cpu_contention")->evaluated());
  EXPECT_NE(states.at("cpu_contention")->reason().find("Dask"), std::string::npos);
  for (const char* code : {"io_bound", "data_lost", "engine_overhead"}) {
    ASSERT_TRUE(states.count(code)) << code;
    EXPECT_TRUE(states.at(code)->evaluated()) << code << ": " << states.at(code)->reason();
  }
}

// Every percentage a finding prints, and every number whose unit is "fraction", is at most 100 %.
void ExpectNoShareAbove100(const v1::AggregatedMetrics& metrics) {
  for (const v1::Finding& f : metrics.findings()) {
    for (const std::string& text : {f.title(), f.evidence(), f.suggestion()}) {
      for (size_t at = text.find('%'); at != std::string::npos; at = text.find('%', at + 1)) {
        size_t from = at;
        while (from > 0 && (std::isdigit(static_cast<unsigned char>(text[from - 1])) ||
                            text[from - 1] == '.')) {
          --from;
        }
        if (from == at) continue;
        EXPECT_LE(std::stod(text.substr(from, at - from)), 100.0) << f.code() << ": " << text;
      }
    }
    for (const v1::FindingNumber& n : f.numbers()) {
      if (n.unit() == "fraction") {
        EXPECT_LE(n.value(), 1.0) << f.code() << " " << n.key();
      }
    }
  }
}

// The most chunks of one worker running at once, computed here from the records.
std::map<std::string, int> PeakConcurrencyPerWorker(const v1::Measurement& m) {
  std::map<std::string, std::vector<std::pair<int64_t, int>>> edges;
  for (const v1::ChunkRecord& chunk : m.chunks()) {
    edges[chunk.worker()].emplace_back(chunk.start_unix_ns(), +1);
    edges[chunk.worker()].emplace_back(chunk.end_unix_ns(), -1);
  }
  std::map<std::string, int> peak;
  for (auto& [worker, list] : edges) {
    std::sort(list.begin(), list.end());  // an end before a start at the same instant
    int running = 0;
    for (const auto& [at, step] : list) peak[worker] = std::max(peak[worker], running += step);
  }
  return peak;
}

// A real TaskVine run with churn (shared/engines/taskvine scenario F under collect --follow: four
// workers of 2, 4, 2 and 1 cores joining and leaving, two killed). The workers name no thread, so
// each worker's tasks share one named slot: the 2-core worker's slot read "busy 153%" of its
// connected time, a 1.30x "imbalance" against the 1-core worker's 83 %. Counted per chunk it ran
// at once, no share exceeds 100 % and there is no imbalance; tiny_chunks asked for 480000-event
// chunks, 8 chunks in all for 4 workers, where the idle tail would only grow.
TEST(FindingsCorpusTest, TaskVineWorkersRunningSeveralTasksAreSeveralSlots) {
  const v1::Measurement m = Load("taskvine_churn_follow.pb");
  ASSERT_EQ(m.chunks_size(), 80);
  const std::map<std::string, int> peak = PeakConcurrencyPerWorker(m);
  ASSERT_EQ(peak.size(), 4u);
  EXPECT_GE(std::max_element(peak.begin(), peak.end(),
                             [](const auto& a, const auto& c) { return a.second < c.second; })
                ->second,
            2);

  const v1::AggregatedMetrics metrics = Reaggregate(m);
  ExpectNoShareAbove100(metrics);
  const auto states = States(metrics);
  EXPECT_TRUE(states.at("load_imbalance")->evaluated());
  EXPECT_FALSE(states.at("load_imbalance")->fired());
  for (const char* code : {"failed_chunks", "worker_bound", "dead_workers", "retried_chunks"}) {
    EXPECT_TRUE(states.at(code)->fired()) << code;
  }
  // 79 successful chunks of 50000 events on 4 named slots: at most 79 x 50000 / (4 x 4) =
  // 246875 events, rounded down to two digits.
  for (const v1::Finding& f : metrics.findings()) {
    if (f.code() != "tiny_chunks") continue;
    EXPECT_EQ(f.suggestion().find("480000"), std::string::npos) << f.suggestion();
    EXPECT_NE(f.suggestion().find("240000 events"), std::string::npos) << f.suggestion();
  }
}

}  // namespace
}  // namespace roastcoffea
