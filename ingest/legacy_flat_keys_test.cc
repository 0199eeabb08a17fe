#include "ingest/legacy_flat_keys.h"

#include <string>

#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

// Sets `key` to `value` on empty metrics.
v1::AggregatedMetrics Set(const std::string& key, double value) {
  v1::AggregatedMetrics metrics;
  const auto it = LegacyFlatKeySetters().find(key);
  EXPECT_NE(it, LegacyFlatKeySetters().end()) << key;
  if (it != LegacyFlatKeySetters().end()) it->second(value, &metrics);
  return metrics;
}

TEST(LegacyFlatKeySettersTest, EverySectionOfTheMetricsHasItsKeys) {
  EXPECT_EQ(Set("total_events", 1200.4).workflow().total_events(), 1200);
  EXPECT_EQ(Set("peak_workers", 3.6).workers().peak_workers(), 4);
  EXPECT_DOUBLE_EQ(Set("core_efficiency", 0.75).efficiency().core_efficiency_fraction(), 0.75);
  EXPECT_DOUBLE_EQ(Set("processor_cpu_time_seconds", 2.5).fine().processor_cpu_time_seconds(), 2.5);
  EXPECT_EQ(Set("num_failed_chunks", 2).chunks().num_failed_chunks(), 2);
  EXPECT_DOUBLE_EQ(Set("avg_bytes_read_percent", 12.5).branches().avg_bytes_read_percent(), 12.5);
}

TEST(LegacyFlatKeySettersTest, ChunkMemoryDeltasInMebibytesBecomeBytes) {
  const v1::AggregatedMetrics metrics = Set("chunk_mem_delta_max_mb", 2);
  EXPECT_DOUBLE_EQ(metrics.chunks().memory_delta_bytes().max(), 2.0 * 1024 * 1024);
}

TEST(LegacyFlatKeySettersTest, OnlyCanonicalNamesAreKeys) {
  // Old names are mapped by CanonicalKeyName before the look-up; the raw old name is no key.
  EXPECT_EQ(LegacyFlatKeySetters().count("event_rate_core_hz"), 0u);
  EXPECT_EQ(LegacyFlatKeySetters().count("overall_rate_mbps"), 0u);
}

}  // namespace
}  // namespace roastcoffea
