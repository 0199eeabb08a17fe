#include "backends/internal/span_registry.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace backends_internal {
namespace {

using ::testing::HasSubstr;

const absl::Time kT0 = absl::FromUnixSeconds(1700000000);

TEST(SpanRegistryTest, OpensClosesAndReturnsTheWindow) {
  SpanRegistry registry("dask");
  absl::StatusOr<SpanWindow> opened = registry.Open("collect window", kT0);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(opened->id, "dask-span-0");
  EXPECT_EQ(opened->name, "collect window");
  EXPECT_FALSE(opened->ended);

  absl::StatusOr<SpanWindow> closed = registry.Close(opened->id, kT0 + absl::Seconds(3));
  ASSERT_TRUE(closed.ok()) << closed.status();
  absl::StatusOr<SpanWindow> ended = registry.Ended(opened->id);
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->start, kT0);
  EXPECT_EQ(ended->end, kT0 + absl::Seconds(3));
  EXPECT_TRUE(ended->ended);
  EXPECT_EQ(registry.Open("second", kT0)->id, "dask-span-1");
}

TEST(SpanRegistryTest, OneWordingForEveryError) {
  SpanRegistry registry("taskvine");
  EXPECT_EQ(registry.Open("", kT0).status().code(), absl::StatusCode::kInvalidArgument);

  const absl::Status unknown = registry.Close("nope", kT0).status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(unknown.message(), "unknown taskvine span id 'nope'");
  EXPECT_EQ(registry.Ended("nope").status(), unknown);
  EXPECT_EQ(registry.Find("nope").status(), unknown);
  EXPECT_EQ(registry.SetEnd("nope", kT0), unknown);

  const SpanId id = registry.Open("run", kT0)->id;
  const absl::Status open = registry.Ended(id).status();
  EXPECT_EQ(open.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(open.message(), HasSubstr("has not ended"));
  EXPECT_EQ(registry.SetEnd(id, kT0).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(registry.Find(id).ok());

  ASSERT_TRUE(registry.Close(id, kT0 + absl::Seconds(1)).ok());
  const absl::Status twice = registry.Close(id, kT0 + absl::Seconds(2)).status();
  EXPECT_EQ(twice.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(twice.message(), HasSubstr("already ended"));
  EXPECT_EQ(registry.Ended(id)->end, kT0 + absl::Seconds(1));  // the failed close changed nothing
}

TEST(SpanRegistryTest, SetEndMovesTheEndOfAnEndedSpan) {
  SpanRegistry registry("taskvine");
  const SpanId id = registry.Open("run", kT0)->id;
  ASSERT_TRUE(registry.Close(id, kT0 + absl::Seconds(1)).ok());
  ASSERT_TRUE(registry.SetEnd(id, kT0 + absl::Seconds(5)).ok());
  EXPECT_EQ(registry.Ended(id)->end, kT0 + absl::Seconds(5));
}

TEST(SpanRegistryTest, AllListsSpansInOrderOfCreation) {
  SpanRegistry registry("threadpool");
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(registry.Open("s", kT0).ok());
  const std::vector<SpanWindow> all = registry.All();
  ASSERT_EQ(all.size(), 12u);
  EXPECT_EQ(all[2].id, "threadpool-span-2");
  EXPECT_EQ(all[10].id, "threadpool-span-10");  // not sorted as strings
}

TEST(SpanRegistryTest, ThreadsOpenAndCloseConcurrently) {
  SpanRegistry registry("dask");
  constexpr int kThreads = 4, kSpansEach = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&registry] {
      for (int i = 0; i < kSpansEach; ++i) {
        absl::StatusOr<SpanWindow> span = registry.Open("s", kT0);
        ASSERT_TRUE(span.ok());
        ASSERT_TRUE(registry.Close(span->id, kT0 + absl::Seconds(1)).ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::vector<SpanWindow> all = registry.All();
  ASSERT_EQ(all.size(), static_cast<size_t>(kThreads * kSpansEach));
  for (const SpanWindow& span : all) EXPECT_TRUE(span.ended) << span.id;
}

}  // namespace
}  // namespace backends_internal
}  // namespace roastcoffea
