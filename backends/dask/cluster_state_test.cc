#include "backends/dask/cluster_state.h"

#include "backends/dask/fixtures.h"
#include "backends/dask/msgpack_codec.h"
#include "backends/dask/wire.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea::dask {
namespace {

Value Fixture(const std::string& name) {
  const std::string bytes = testing::FixtureBytes(name);
  StringByteReader reader(bytes);
  return *DecodeMessage(*ReadFrames(reader));
}

TEST(ClusterStateTest, ParsesPythonReprKeys) {
  EXPECT_EQ(*ParsePrefixStateKey("['busy', 'executing']"),
            std::make_pair(std::string("busy"), std::string("executing")));
  EXPECT_EQ(*ParsePrefixStateKey("(\"it's\", 'memory')"),
            std::make_pair(std::string("it's"), std::string("memory")));
  EXPECT_EQ(ParsePrefixStateKey("['busy']"), std::nullopt);
  EXPECT_EQ(ParsePrefixStateKey("busy"), std::nullopt);
  EXPECT_EQ(ParsePrefixStateKey("['a', 'b', 'c']"), std::nullopt);
}

// Replies recorded from distributed 2024.12.1, 2025.9.3 and HEAD (2026.7.1.dev10).
TEST(ClusterStateTest, ReadsEveryModernVersionsCumulativeExecutingSeconds) {
  for (const char* version : {"2024.12.1", "2025.9.3", "head"}) {
    SCOPED_TRACE(version);
    absl::StatusOr<CumulativeExecuting> c = ParseCumulativeExecuting(
        Fixture(std::string("modern/") + version + "/get_cluster_state_min.reply"));
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_EQ(c->size(), 2u);
    double busy = 0;
    for (const auto& [worker, prefixes] : *c) {
      if (auto it = prefixes.find("busy"); it != prefixes.end()) busy += it->second;
      EXPECT_EQ(prefixes.count("hold"), 1u);  // the holder's live tasks
    }
    EXPECT_GT(busy, 5);  // 100 tasks of 50 ms busy work
  }
  absl::StatusOr<CumulativeExecuting> c =
      ParseCumulativeExecuting(Fixture("modern/2025.9.3/get_cluster_state_min.reply"));
  EXPECT_DOUBLE_EQ(c->at("tcp://127.0.0.1:36965").at("sleepy"), 0.7115034079999987);
}

TEST(ClusterStateTest, OldServersHaveNoCumulativeSource) {
  absl::StatusOr<CumulativeExecuting> c =
      ParseCumulativeExecuting(Fixture("modern/debian-2022.12.1/get_cluster_state_min.reply"));
  EXPECT_TRUE(absl::IsNotFound(c.status())) << c.status();
  EXPECT_TRUE(absl::IsInvalidArgument(ParseCumulativeExecuting(Value::Nil()).status()));
}

}  // namespace
}  // namespace roastcoffea::dask
