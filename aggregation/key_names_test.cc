#include <optional>
#include <string>

#include "aggregation/aggregate.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

TEST(CanonicalKeyNameTest, DriftedNamesMapToCurrentNames) {
  EXPECT_EQ(CanonicalKeyName("wall_time"), "elapsed_time_seconds");
  EXPECT_EQ(CanonicalKeyName("overall_rate_gbps"), "data_rate_gbps");
  EXPECT_EQ(CanonicalKeyName("event_rate_wall_khz"), "event_rate_elapsed_khz");
  EXPECT_EQ(CanonicalKeyName("event_rate_agg_khz"), "event_rate_cpu_total_khz");
  EXPECT_EQ(CanonicalKeyName("event_rate_core_hz"), "event_rate_core_khz");
  EXPECT_EQ(CanonicalKeyName("total_bytes_read_coffea"), "total_bytes_read");
  EXPECT_EQ(CanonicalKeyName("total_bytes_compressed"), "total_bytes_read");
  EXPECT_EQ(CanonicalKeyName("total_bytes_memory_read_dask"), "total_bytes_memory_read");
  EXPECT_EQ(CanonicalKeyName("cpu_time_seconds"), "processor_cpu_time_seconds");
  EXPECT_EQ(CanonicalKeyName("io_time_seconds"), "processor_io_wait_time_seconds");
}

TEST(CanonicalKeyNameTest, PatternRenames) {
  EXPECT_EQ(CanonicalKeyName("processor_noncpu_time_seconds"), "processor_io_wait_time_seconds");
  EXPECT_EQ(CanonicalKeyName("processor_cpu_percentage"), "processor_cpu_percent");
  EXPECT_EQ(CanonicalKeyName("processor_noncpu_percentage"), "processor_io_wait_percent");
  EXPECT_EQ(CanonicalKeyName("avg_bytes_read_percentage"), "avg_bytes_read_percent");
}

TEST(CanonicalKeyNameTest, CurrentNamesMapToThemselves) {
  EXPECT_EQ(CanonicalKeyName("elapsed_time_seconds"), "elapsed_time_seconds");
  EXPECT_EQ(CanonicalKeyName("total_cpu_time"), "total_cpu_time");
  EXPECT_EQ(CanonicalKeyName("chunk_mem_delta_mean_mb"), "chunk_mem_delta_mean_mb");
  EXPECT_EQ(CanonicalKeyName("processor_io_wait_percent"), "processor_io_wait_percent");
}

TEST(CanonicalKeyNameTest, RemovedAndUnknownNamesHaveNone) {
  EXPECT_EQ(CanonicalKeyName("overall_rate_mbps"), std::nullopt);
  EXPECT_EQ(CanonicalKeyName("overall_rate_mbs"), std::nullopt);
  EXPECT_EQ(CanonicalKeyName(""), std::nullopt);
  EXPECT_EQ(CanonicalKeyName("no_such_key"), std::nullopt);
  EXPECT_EQ(CanonicalKeyName("no_such_percentage"), std::nullopt);
  EXPECT_EQ(CanonicalKeyName("processor_noncpu_bogus"), std::nullopt);
  EXPECT_EQ(CanonicalKeyName("WALL_TIME"), std::nullopt);  // names are case-sensitive
}

}  // namespace
}  // namespace roastcoffea
