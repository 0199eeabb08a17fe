#include "live/exposition.h"

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace live {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

LiveStatus Status() {
  LiveStatus s;
  s.name = "run \"1\"\nx";
  s.backend = "threadpool";
  s.elapsed_seconds = 12.5;
  s.chunks_ok = 40;
  s.chunks_failed = 2;
  s.chunks_total = 100;
  s.events = 4000;
  s.compressed_bytes_read = 123456;
  s.chunk_seconds = 21;
  s.chunk_cpu_seconds = 20;
  s.chunk_run_queue_wait_seconds = 0.5;
  s.duration_buckets[5] = 30;  // <= 0.5 s
  s.duration_buckets[6] = 12;  // <= 1 s
  s.worker_threads = 2;
  v1::AggregatedMetrics metrics;
  v1::Finding* f = metrics.add_findings();
  f->set_code("cpu_starvation");
  f->set_severity(v1::Finding::SEVERITY_WARNING);
  v1::RuleEvaluation* rule = metrics.add_rule_evaluations();
  rule->set_code("stragglers");
  rule->set_evaluated(false);
  s.so_far = std::make_shared<const v1::AggregatedMetrics>(metrics);
  return s;
}

TEST(ExpositionTest, PrometheusTextFormat) {
  ExpositionExtras extras;
  extras.version = "0.1.0";
  extras.resident_memory_bytes = 4096;
  const std::string text = FormatExposition(Status(), extras, ExpositionFormat::kPrometheusText);
  const std::string labels = "backend=\"threadpool\",run=\"run \\\"1\\\"\\nx\"";
  EXPECT_THAT(text, HasSubstr("# TYPE roastcoffea_chunks_total counter\n"));
  EXPECT_THAT(text, HasSubstr("roastcoffea_chunks_total{" + labels + ",status=\"ok\"} 40\n"));
  EXPECT_THAT(text, HasSubstr("roastcoffea_chunks_total{" + labels + ",status=\"failed\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("roastcoffea_chunks_pending{" + labels + "} 58\n"));
  EXPECT_THAT(text, HasSubstr("roastcoffea_events_total{" + labels + "} 4000\n"));
  // Cumulative buckets; +Inf equals the count.
  EXPECT_THAT(
      text, HasSubstr("roastcoffea_chunk_duration_seconds_bucket{" + labels + ",le=\"0.5\"} 30\n"));
  EXPECT_THAT(text,
              HasSubstr("roastcoffea_chunk_duration_seconds_bucket{" + labels + ",le=\"1\"} 42\n"));
  EXPECT_THAT(text, HasSubstr("roastcoffea_chunk_duration_seconds_bucket{" + labels +
                              ",le=\"+Inf\"} 42\n"));
  EXPECT_THAT(text, HasSubstr("roastcoffea_chunk_duration_seconds_count{" + labels + "} 42\n"));
  EXPECT_THAT(text, HasSubstr("roastcoffea_finding{" + labels +
                              ",code=\"cpu_starvation\",severity=\"warning\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr("roastcoffea_rule_evaluated{" + labels + ",code=\"stragglers\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("roastcoffea_process_resident_memory_bytes{" + labels + "} 4096\n"));
  EXPECT_THAT(text, Not(HasSubstr("# EOF")));
}

TEST(ExpositionTest, OpenMetricsNamesCounterFamiliesWithoutTotalAndEnds) {
  const std::string text = FormatExposition(Status(), {}, ExpositionFormat::kOpenMetrics);
  EXPECT_THAT(text, HasSubstr("# TYPE roastcoffea_chunks counter\n"));
  EXPECT_THAT(text, HasSubstr("roastcoffea_chunks_total{"));
  EXPECT_THAT(text, EndsWith("# EOF\n"));
}

TEST(ExpositionTest, NegotiatesAsPrometheusAsks) {
  EXPECT_EQ(NegotiateFormat("application/openmetrics-text;version=1.0.0,application/"
                            "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,"
                            "*/*;q=0.1"),
            ExpositionFormat::kOpenMetrics);
  EXPECT_EQ(NegotiateFormat("text/plain"), ExpositionFormat::kPrometheusText);
  EXPECT_EQ(NegotiateFormat(""), ExpositionFormat::kPrometheusText);
  EXPECT_THAT(ContentType(ExpositionFormat::kPrometheusText), HasSubstr("version=0.0.4"));
}

// Before the first chunk: no findings family, no pending without a total.
TEST(ExpositionTest, AStartingRunHasOnlyItsCounters) {
  LiveStatus s;
  s.name = "r";
  s.backend = "dask";
  const std::string text = FormatExposition(s, {}, ExpositionFormat::kPrometheusText);
  EXPECT_THAT(text, Not(HasSubstr("roastcoffea_finding")));
  EXPECT_THAT(text, Not(HasSubstr("roastcoffea_chunks_pending")));
  EXPECT_THAT(text,
              HasSubstr("roastcoffea_chunks_total{backend=\"dask\",run=\"r\",status=\"ok\"} 0"));
  // Nothing the engine has not said yet: no workers gauge of 0.
  EXPECT_THAT(text, Not(HasSubstr("roastcoffea_workers")));
  EXPECT_THAT(text, Not(HasSubstr("roastcoffea_chunks_running")));
}

TEST(ExpositionTest, TheEngineSeriesWhenTheBackendKnowsThem) {
  LiveStatus s;
  s.name = "r";
  s.backend = "dask";
  s.chunks_running = 3;
  s.workers = 2;
  s.cores = 3;
  s.worker_memory_bytes = 5e8;
  s.worker_memory_limit_bytes = 1.5e9;
  const std::string text = FormatExposition(s, {}, ExpositionFormat::kPrometheusText);
  const std::string labels = "{backend=\"dask\",run=\"r\"} ";
  EXPECT_THAT(text, HasSubstr("# TYPE roastcoffea_workers gauge\n"));
  EXPECT_THAT(text, HasSubstr("roastcoffea_chunks_running" + labels + "3\n"));
  EXPECT_THAT(text, HasSubstr("roastcoffea_workers" + labels + "2\n"));
  EXPECT_THAT(text, HasSubstr("roastcoffea_worker_cores" + labels + "3\n"));
  EXPECT_THAT(text, HasSubstr("roastcoffea_worker_memory_bytes" + labels + "500000000\n"));
  EXPECT_THAT(text, HasSubstr("roastcoffea_worker_memory_limit_bytes" + labels + "1500000000\n"));
}

}  // namespace
}  // namespace live
}  // namespace roastcoffea
